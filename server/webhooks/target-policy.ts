// Where webhooks may be sent (docs/design.md §11, §13b, docs/webhooks.md): no SSRF. A target
// on an address that is not globally reachable (loopback, private, link-local, cloud
// metadata, documentation, IPv4 inside IPv6 forms…: special-addresses.ts) is refused when
// the webhook is created and again at every delivery, after resolving its name (a name that
// later points inside is not contacted), and plain http: is refused too — unless
// WEBHOOK_ALLOW_PRIVATE=true (tests, local development).
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { ContentdError } from '../../shared/errors.js'
import { forbiddenAddressReason } from './special-addresses.js'

export { forbiddenAddressReason }

/** Names that mean "this machine" or a metadata service whatever a resolver says. */
const FORBIDDEN_NAMES = [/^localhost$/i, /\.localhost$/i, /^metadata$/i, /^metadata\.google\.internal$/i]

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
