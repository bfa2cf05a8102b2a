// Which IP addresses a webhook may never reach (docs/design.md §11, §13b): every range that
// the IANA special-purpose address registries mark as not globally reachable, plus multicast,
// and the IPv6 forms that carry an IPv4 address, judged by the address they carry.
//
// Sources (checked 2026-11; a range added later belongs here too):
//   IPv4: https://www.iana.org/assignments/iana-ipv4-special-registry/
//   IPv6: https://www.iana.org/assignments/iana-ipv6-special-registry/
//   multicast: RFC 5771 (224.0.0.0/4), RFC 4291 (ff00::/8)
//
// Deliberately stricter than the registries in three places, since no webhook receiver
// lives there: all of 192.0.0.0/24 and 2001::/23 are refused, their globally reachable
// exceptions included (the PCP/TURN/DNS-SD anycast addresses 192.0.0.9-10 and
// 2001:1::1-3, AMT 2001:3::/32, AS112 2001:4:112::/48, ORCHIDv2 2001:20::/28, drone tags
// 2001:30::/28; Teredo 2001::/32 with them); an IPv4-mapped or IPv4-translated address is
// refused whatever it carries (the registry marks ::ffff:0:0/96 not globally reachable);
// and an IPv6 address outside the global unicast space 2000::/3 that no row names is
// refused as unallocated. NAT64's well-known prefix 64:ff9b::/96 and 6to4's 2002::/16 are
// globally reachable: they are judged by the IPv4 address they carry.
import ipaddr from 'ipaddr.js'
import { isIP } from 'node:net'

type Ranges = Array<[cidr: string, reason: string]>

// First match wins: a narrower range comes before a wider one that holds it.
const IPV4_RANGES: Ranges = [
  ['0.0.0.0/8', 'an unspecified ("this network")'],
  ['10.0.0.0/8', 'a private'],
  ['100.64.0.0/10', 'a carrier-grade NAT'],
  ['127.0.0.0/8', 'a loopback'],
  // 169.254.169.254 is the metadata service of AWS, GCP, Azure and others.
  ['169.254.0.0/16', 'a link-local (cloud metadata)'],
  ['172.16.0.0/12', 'a private'],
  ['192.0.0.0/24', 'an IETF protocol assignment'],
  ['192.0.2.0/24', 'a documentation (TEST-NET-1)'],
  ['192.88.99.0/24', 'a deprecated 6to4 relay anycast'],
  ['192.168.0.0/16', 'a private'],
  ['198.18.0.0/15', 'a benchmarking'],
  ['198.51.100.0/24', 'a documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'a documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'a multicast'],
  ['255.255.255.255/32', 'a limited broadcast'],
  ['240.0.0.0/4', 'a reserved']
]

const IPV6_RANGES: Ranges = [
  ['::/128', 'an unspecified'],
  ['::1/128', 'a loopback'],
  ['::ffff:0:0/96', 'an IPv4-mapped'],
  ['::ffff:0:0:0/96', 'an IPv4-translated'],
  // IPv4-compatible addresses (deprecated by RFC 4291).
  ['::/96', 'an IPv4-compatible (deprecated)'],
  ['64:ff9b:1::/48', 'a NAT64 local-use'],
  ['100::/64', 'a discard-only'],
  ['100:0:0:1::/64', 'a dummy IPv6 prefix'],
  ['2001::/23', 'an IETF protocol assignment'],
  ['2001:db8::/32', 'a documentation'],
  ['3fff::/20', 'a documentation'],
  ['5f00::/16', 'a segment routing (SRv6 SID)'],
  // fd00:ec2::254 (AWS's IPv6 metadata service) is in here.
  ['fc00::/7', 'a unique-local (private)'],
  ['fe80::/10', 'a link-local'],
  ['fec0::/10', 'a site-local (deprecated)'],
  ['ff00::/8', 'a multicast']
]

const parsed4 = IPV4_RANGES.map(([cidr, reason]) => ({ range: ipaddr.IPv4.parseCIDR(cidr), reason }))
const parsed6 = IPV6_RANGES.map(([cidr, reason]) => ({ range: ipaddr.IPv6.parseCIDR(cidr), reason }))
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3')
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96')

/**
 * The IPv4 address an IPv6 one carries: IPv4-mapped (::ffff:a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d), NAT64 well-known (64:ff9b::a.b.c.d) in the last 32 bits; 6to4
 * (2002:aabb:ccdd::/48) in bits 16-47. Null for any other address.
 */
export function embeddedIpv4 (address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const w = address.parts
  const fromWords = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255])
  const zero = (from: number, to: number) => w.slice(from, to).every(word => word === 0)
  const mapped = zero(0, 5) && w[5] === 0xffff
  const translated = zero(0, 4) && w[4] === 0xffff && w[5] === 0
  if (mapped || translated || address.match(NAT64_WELL_KNOWN)) return fromWords(w[6] as number, w[7] as number)
  if (w[0] === 0x2002) return fromWords(w[1] as number, w[2] as number)
  return null
}

/**
 * Parses an address node:net accepts. An IPv6 address's dotted IPv4 tail is turned into two
 * hex words first: ipaddr.js 2.5 reads `::a.b.c.d` as `::ffff:a.b.c.d`.
 */
function parse (address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const text = address.replace(/%.*$/, '')
  if (isIP(text) === 4) return ipaddr.IPv4.parse(text)
  const hex = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`)
  return ipaddr.IPv6.parse(hex)
}

function firstMatch<T extends ipaddr.IPv4 | ipaddr.IPv6> (address: T, ranges: Array<{ range: [ipaddr.IPv4 | ipaddr.IPv6, number], reason: string }>): string | null {
  for (const { range, reason } of ranges) if (address.match(range)) return `${reason} address`
  return null
}

/** Why an IP address may not be contacted ("a loopback address"), or null when it may. */
export function forbiddenAddressReason (address: string): string | null {
  // node:net's parser first: it takes exactly what a connection would (no "127.1" shorthands).
  if (isIP(address) === 0) return 'not an IP address'
  const parsed = parse(address)
  if (parsed.kind() === 'ipv4') return firstMatch(parsed, parsed4)
  const v6 = parsed as ipaddr.IPv6
  const inner = embeddedIpv4(v6)
  if (inner !== null) {
    const reason = firstMatch(inner, parsed4)
    if (reason !== null) return `${reason} (${inner.toString()} inside ${address})`
  }
  const listed = firstMatch(v6, parsed6)
  if (listed !== null) return listed
  if (!v6.match(GLOBAL_UNICAST) && !v6.match(NAT64_WELL_KNOWN)) return 'an unallocated address (outside the global unicast 2000::/3)'
  return null
}
