// The pure rules of webhooks: which addresses are refused, which entries the filters let
// through, and the retry schedule (docs/design.md §11).
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { retryDelayMs, webhookMatches } from '../../shared/webhooks.js'
import { checkWebhookTarget, forbiddenAddressReason } from '../../server/webhooks/target-policy.js'

describe('forbiddenAddressReason (docs/design.md §11, §13b: the IANA special-purpose registries)', () => {
  it.each([
    // IPv4, a row per registry entry that is not globally reachable (and multicast).
    ['0.0.0.0', 'an unspecified ("this network") address'], ['0.1.2.3', 'an unspecified ("this network") address'],
    ['10.9.8.7', 'a private address'], ['100.64.0.1', 'a carrier-grade NAT address'], ['100.127.255.255', 'a carrier-grade NAT address'],
    ['127.0.0.1', 'a loopback address'], ['127.255.0.9', 'a loopback address'], ['169.254.169.254', 'a link-local (cloud metadata) address'],
    ['172.16.0.1', 'a private address'], ['172.31.255.255', 'a private address'], ['192.0.0.8', 'an IETF protocol assignment address'],
    ['192.0.0.9', 'an IETF protocol assignment address'], ['192.0.0.170', 'an IETF protocol assignment address'],
    ['192.0.2.1', 'a documentation (TEST-NET-1) address'], ['192.88.99.1', 'a deprecated 6to4 relay anycast address'],
    ['192.168.0.1', 'a private address'], ['198.18.0.1', 'a benchmarking address'], ['198.19.255.255', 'a benchmarking address'],
    ['198.51.100.7', 'a documentation (TEST-NET-2) address'], ['203.0.113.10', 'a documentation (TEST-NET-3) address'],
    ['224.0.0.1', 'a multicast address'], ['239.255.255.250', 'a multicast address'], ['240.0.0.1', 'a reserved address'],
    ['255.255.255.255', 'a limited broadcast address'],
    // IPv6.
    ['::', 'an unspecified address'], ['::1', 'a loopback address'], ['::8.8.8.8', 'an IPv4-compatible (deprecated) address'],
    ['::ffff:8.8.8.8', 'an IPv4-mapped address'], ['::ffff:0:8.8.8.8', 'an IPv4-translated address'],
    ['64:ff9b:1::8.8.8.8', 'a NAT64 local-use address'], ['64:ff9b:1:ffff::1', 'a NAT64 local-use address'],
    ['100::1', 'a discard-only address'], ['100:0:0:1::1', 'a dummy IPv6 prefix address'],
    ['2001::1', 'an IETF protocol assignment address'], ['2001:1::1', 'an IETF protocol assignment address'], ['2001:2::1', 'an IETF protocol assignment address'],
    ['2001:20::1', 'an IETF protocol assignment address'], ['2001:1ff::1', 'an IETF protocol assignment address'],
    ['2001:db8::1', 'a documentation address'], ['2001:db8:ffff::1', 'a documentation address'], ['3fff::1', 'a documentation address'], ['3fff:fff::1', 'a documentation address'],
    ['5f00::1', 'a segment routing (SRv6 SID) address'], ['fd00:ec2::254', 'a unique-local (private) address'], ['fc00::1', 'a unique-local (private) address'],
    ['fe80::1', 'a link-local address'], ['febf::1', 'a link-local address'], ['fec0::1', 'a site-local (deprecated) address'],
    ['ff02::1', 'a multicast address'], ['4000::1', 'an unallocated address (outside the global unicast 2000::/3)'],
    // IPv4 inside IPv6: judged by the IPv4 address it carries. The review's exact strings first.
    ['::ffff:0:127.0.0.1', 'a loopback address (127.0.0.1 inside ::ffff:0:127.0.0.1)'],
    ['64:ff9b:1::127.0.0.1', 'a NAT64 local-use address'],
    ['::ffff:7f00:1', 'a loopback address (127.0.0.1 inside ::ffff:7f00:1)'], ['::ffff:10.0.0.1', 'a private address (10.0.0.1 inside ::ffff:10.0.0.1)'],
    ['::ffff:0:a9fe:a9fe', 'a link-local (cloud metadata) address (169.254.169.254 inside ::ffff:0:a9fe:a9fe)'],
    ['::ffff:192.0.2.1', 'a documentation (TEST-NET-1) address (192.0.2.1 inside ::ffff:192.0.2.1)'],
    ['64:ff9b::a9fe:a9fe', 'a link-local (cloud metadata) address (169.254.169.254 inside 64:ff9b::a9fe:a9fe)'],
    ['64:ff9b::127.0.0.1', 'a loopback address (127.0.0.1 inside 64:ff9b::127.0.0.1)'],
    ['64:ff9b::203.0.113.1', 'a documentation (TEST-NET-3) address (203.0.113.1 inside 64:ff9b::203.0.113.1)'],
    ['2002:c0a8:101::1', 'a private address (192.168.1.1 inside 2002:c0a8:101::1)'], ['2002:7f00:1::', 'a loopback address (127.0.0.1 inside 2002:7f00:1::)'],
    ['2002:c633:6401::1', 'a documentation (TEST-NET-2) address (198.51.100.1 inside 2002:c633:6401::1)'],
    ['not-an-ip', 'not an IP address'], ['127.1', 'not an IP address']
  ])('refuses %s: %s', (address, reason) => {
    expect(forbiddenAddressReason(address)).toBe(reason)
  })

  it.each([
    '8.8.8.8', '1.1.1.1', '93.184.215.14', '172.32.0.1', '100.128.0.1', '192.0.1.1', '192.0.3.1', '198.17.255.255', '198.20.0.1', '198.51.99.1',
    '203.0.112.1', '223.255.255.255', '2606:4700:4700::1111', '2a00:1450:4001::1', '2002:808:808::1', '64:ff9b::8.8.8.8', '2001:200::1', '2001:db9::1', '3fff:1000::1'
  ])('allows the public %s', (address) => {
    expect(forbiddenAddressReason(address)).toBeNull()
  })
})

describe('checkWebhookTarget', () => {
  const resolvesTo = (...addresses: string[]) => async () => addresses
  const code = async (promise: Promise<void>) => promise.then(() => 'allowed', (e: unknown) => (e as ContentdError).code)

  it('resolves a name and refuses it when any address is inside, without contacting it', async () => {
    expect(await code(checkWebhookTarget('https://hooks.example/x', false, resolvesTo('93.184.215.14')))).toBe('allowed')
    expect(await code(checkWebhookTarget('https://hooks.example/x', false, resolvesTo('93.184.215.14', '10.0.0.5')))).toBe('WEBHOOK_URL_FORBIDDEN')
    expect(await code(checkWebhookTarget('https://rebind.example/x', false, resolvesTo('169.254.169.254')))).toBe('WEBHOOK_URL_FORBIDDEN')
    expect(await code(checkWebhookTarget('https://gone.example/x', false, async () => { throw new Error('ENOTFOUND') }))).toBe('INVALID_BODY')
  })

  it('allows http: and private targets with WEBHOOK_ALLOW_PRIVATE', async () => {
    expect(await code(checkWebhookTarget('http://127.0.0.1:9/x', true, resolvesTo()))).toBe('allowed')
    expect(await code(checkWebhookTarget('http://93.184.215.14/x', false, resolvesTo()))).toBe('WEBHOOK_URL_FORBIDDEN')
  })

  // The review's forms as URL hosts (the URL parser rewrites them to hex words) and as what a
  // name resolves to (docs/design.md §13b).
  it.each([
    'https://[::ffff:0:127.0.0.1]/x', 'https://[64:ff9b:1::127.0.0.1]/x', 'https://[::ffff:127.0.0.1]/x', 'https://[64:ff9b::7f00:1]/x',
    'https://192.0.2.10/x', 'https://198.51.100.10/x', 'https://203.0.113.10/x', 'https://[2001:db8::1]/x', 'https://0x7f.1/x', 'https://2130706433/x'
  ])('refuses the literal target %s', async (url) => {
    expect(await code(checkWebhookTarget(url, false, resolvesTo()))).toBe('WEBHOOK_URL_FORBIDDEN')
  })

  it.each(['::ffff:0:127.0.0.1', '64:ff9b:1::127.0.0.1', '198.51.100.10', '2001:db8::1', '5f00::1'])('refuses a name that resolves to %s', async (address) => {
    expect(await code(checkWebhookTarget('https://hooks.example/x', false, resolvesTo('93.184.215.14', address)))).toBe('WEBHOOK_URL_FORBIDDEN')
  })

  it('names the reason', async () => {
    await expect(checkWebhookTarget('https://hooks.example/x', false, resolvesTo('192.168.1.20'))).rejects.toThrow('hooks.example resolves to 192.168.1.20, which is a private address')
  })
})

describe('webhookMatches', () => {
  const entry = (op: string, path?: string, operations?: Array<{ op: string, path?: string, from?: string }>) =>
    ({ op, ...(path !== undefined ? { path } : {}), ...(operations ? { operations } : {}) }) as Parameters<typeof webhookMatches>[0]

  it('matches paths at or below a prefix, segment by segment', () => {
    expect(webhookMatches(entry('set', 'site'), ['site'], null)).toBe(true)
    expect(webhookMatches(entry('set', 'site.a.b'), ['site'], null)).toBe(true)
    expect(webhookMatches(entry('set', 'sitemap'), ['site'], null)).toBe(false)
    expect(webhookMatches(entry('set', 'a'), ['a.b'], null)).toBe(false)
    expect(webhookMatches(entry('set', 'x'), [''], null)).toBe(true)
  })

  it('matches ops by name, and update and revert whatever the filters', () => {
    expect(webhookMatches(entry('push', 'a'), null, ['push'])).toBe(true)
    expect(webhookMatches(entry('set', 'a'), null, ['push'])).toBe(false)
    expect(webhookMatches(entry('update'), ['site'], ['push'])).toBe(true)
    expect(webhookMatches(entry('revert'), ['site'], ['push'])).toBe(true)
  })

  it('matches a batch when any of its operations does, or when "batch" is listed and a path matches', () => {
    const batch = entry('batch', undefined, [{ op: 'set', path: 'other' }, { op: 'push', path: 'site.tags' }])
    expect(webhookMatches(batch, ['site'], ['push'])).toBe(true)
    expect(webhookMatches(batch, ['site'], ['set'])).toBe(false)
    expect(webhookMatches(batch, ['site'], ['batch'])).toBe(true)
    expect(webhookMatches(batch, ['shop'], ['batch'])).toBe(false)
  })

  it('reads a patch\'s JSON Pointers as the dot paths of the same places, `from` included', () => {
    const patch = entry('patch', undefined, [{ op: 'replace', path: '/site/title' }, { op: 'move', from: '/shop/a~1b', path: '/archive/x' }])
    expect(webhookMatches(patch, ['site'], ['patch'])).toBe(true)
    expect(webhookMatches(patch, ['shop.a/b'], ['patch'])).toBe(true)
    expect(webhookMatches(patch, ['shop.a'], ['patch'])).toBe(false)
    expect(webhookMatches(patch, ['blog'], ['patch'])).toBe(false)
    expect(webhookMatches(patch, ['site'], ['set'])).toBe(false)
  })
})

describe('retryDelayMs', () => {
  it('starts at 1 s, doubles, and stays at 1 h', () => {
    expect([1, 2, 3, 4, 12, 13, 100].map(retryDelayMs)).toEqual([1000, 2000, 4000, 8000, 2_048_000, 3_600_000, 3_600_000])
  })
})
