// Where webhooks may be sent (docs/design.md §11, docs/webhooks.md): no SSRF. A target on a
// loopback, private, link-local, carrier-grade NAT, unique-local or cloud metadata address
// is refused when the webhook is created and again at every delivery, after resolving its
// name (a name that later points inside is not contacted), and plain http: is refused too —
// unless WEBHOOK_ALLOW_PRIVATE=true (tests, local development).
import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import { ContentdError } from '../../shared/errors.js'

const RANGES: Array<[reason: string, family: 'ipv4' | 'ipv6', network: string, prefix: number]> = [
  ['an unspecified', 'ipv4', '0.0.0.0', 8],
  ['a private', 'ipv4', '10.0.0.0', 8],
  ['a carrier-grade NAT', 'ipv4', '100.64.0.0', 10],
  ['a loopback', 'ipv4', '127.0.0.0', 8],
  // 169.254.169.254 is the metadata service of AWS, GCP, Azure and others.
  ['a link-local (cloud metadata)', 'ipv4', '169.254.0.0', 16],
  ['a private', 'ipv4', '172.16.0.0', 12],
  ['a reserved', 'ipv4', '192.0.0.0', 24],
  ['a private', 'ipv4', '192.168.0.0', 16],
  ['a reserved', 'ipv4', '198.18.0.0', 15],
  ['a multicast', 'ipv4', '224.0.0.0', 4],
  ['a reserved', 'ipv4', '240.0.0.0', 4],
  ['an unspecified', 'ipv6', '::', 128],
  ['a loopback', 'ipv6', '::1', 128],
  // IPv4-compatible (deprecated) addresses.
  ['a reserved', 'ipv6', '::', 96],
  // fd00:ec2::254 (AWS's IPv6 metadata service) is in here.
  ['a unique-local (private)', 'ipv6', 'fc00::', 7],
  ['a link-local', 'ipv6', 'fe80::', 10],
  ['a site-local', 'ipv6', 'fec0::', 10],
  ['a multicast', 'ipv6', 'ff00::', 8]
]

const BLOCKED = RANGES.map(([reason, family, network, prefix]) => {
  const list = new BlockList()
  list.addSubnet(network, prefix, family)
  return { reason, list, family }
})

/** Names that mean "this machine" or a metadata service whatever a resolver says. */
const FORBIDDEN_NAMES = [/^localhost$/i, /\.localhost$/i, /^metadata$/i, /^metadata\.google\.internal$/i]

/** The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16), if any. */
function embeddedIpv4 (address: string): string | null {
  const words = expandIpv6(address)
  if (words === null) return null
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
  const zeros = (from: number, to: number) => words.slice(from, to).every(w => w === 0)
  if (zeros(0, 5) && words[5] === 0xffff) return v4(words[6] as number, words[7] as number)
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6] as number, words[7] as number)
  if (words[0] === 0x2002) return v4(words[1] as number, words[2] as number)
  return null
}

/** Eight 16-bit words of an IPv6 address (with an embedded dotted IPv4 tail allowed). */
function expandIpv6 (address: string): number[] | null {
  let text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number]
    text = text.slice(0, dotted.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16)
  }
  const [head, tail] = text.includes('::') ? text.split('::') as [string, string] : [text, undefined]
  const parse = (part: string) => part === '' ? [] : part.split(':').map(w => parseInt(w, 16))
  const left = parse(head)
  const right = tail === undefined ? [] : parse(tail)
  const missing = 8 - left.length - right.length
  if (missing < 0 || (tail === undefined && missing !== 0)) return null
  const words = [...left, ...new Array<number>(missing).fill(0), ...right]
  return words.every(w => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null
}

/** Why an IP address may not be contacted ("a loopback address"), or null when it may. */
export function forbiddenAddressReason (address: string): string | null {
  const family = isIP(address)
  if (family === 0) return 'not an IP address'
  const type = family === 4 ? 'ipv4' : 'ipv6'
  for (const { reason, list, family: rangeFamily } of BLOCKED) {
    if (rangeFamily === type && list.check(address, type)) return `${reason} address`
  }
  if (type === 'ipv6') {
    const inner = embeddedIpv4(address)
    if (inner !== null) {
      const reason = forbiddenAddressReason(inner)
      if (reason !== null) return `${reason} (${inner} inside ${address})`
    }
  }
  return null
}

/** The URL's host without IPv6 brackets. */
export function hostOf (url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '')
}

export type Resolver = (host: string) => Promise<string[]>

export const systemResolver: Resolver = async host => (await lookup(host, { all: true, verbatim: true })).map(a => a.address)

/**
 * Throws WEBHOOK_URL_FORBIDDEN unless the URL may be a webhook's target: https (or http with
 * allowPrivate), and a host that is, or resolves only to, public addresses (any with
 * allowPrivate). A host that does not resolve is INVALID_BODY.
 */
export async function checkWebhookTarget (text: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<void> {
  const url = new URL(text)
  if (allowPrivate) return
  if (url.protocol !== 'https:') throw new ContentdError('WEBHOOK_URL_FORBIDDEN', `${url.protocol} URLs are refused; use https:`)
  const host = hostOf(url)
  if (FORBIDDEN_NAMES.some(name => name.test(host))) throw new ContentdError('WEBHOOK_URL_FORBIDDEN', `${host} names this machine or a metadata service`)
  let addresses: string[]
  if (isIP(host) !== 0) {
    addresses = [host]
  } else {
    try {
      addresses = await resolve(host)
    } catch {
      throw new ContentdError('INVALID_BODY', `url: the host ${host} does not resolve`)
    }
  }
  for (const address of addresses) {
    const reason = forbiddenAddressReason(address)
    if (reason === null) continue
    const what = isIP(host) !== 0 ? host : `${host} resolves to ${address}, which`
    throw new ContentdError('WEBHOOK_URL_FORBIDDEN', `${what} is ${reason}`)
  }
}
