// The pure rules of webhooks: which addresses are refused, which entries the filters let
// through, and the retry schedule (docs/design.md §11).
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { retryDelayMs, webhookMatches } from '../../shared/webhooks.js'
import { checkWebhookTarget, forbiddenAddressReason } from '../../server/webhooks/target-policy.js'

describe('forbiddenAddressReason', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'], ['10.9.8.7', 'a private address'], ['172.31.255.255', 'a private address'],
    ['192.168.0.1', 'a private address'], ['100.64.0.1', 'a carrier-grade NAT address'], ['169.254.169.254', 'a link-local (cloud metadata) address'],
    ['0.0.0.0', 'an unspecified address'], ['224.0.0.1', 'a multicast address'], ['255.255.255.255', 'a reserved address'],
    ['::1', 'a loopback address'], ['::', 'an unspecified address'], ['fd00:ec2::254', 'a unique-local (private) address'], ['fe80::1', 'a link-local address'],
    ['::ffff:7f00:1', 'a loopback address (127.0.0.1 inside ::ffff:7f00:1)'], ['::ffff:10.0.0.1', 'a private address (10.0.0.1 inside ::ffff:10.0.0.1)'],
    ['64:ff9b::a9fe:a9fe', 'a link-local (cloud metadata) address (169.254.169.254 inside 64:ff9b::a9fe:a9fe)'], ['2002:c0a8:101::1', 'a private address (192.168.1.1 inside 2002:c0a8:101::1)']
  ])('refuses %s: %s', (address, reason) => {
    expect(forbiddenAddressReason(address)).toBe(reason)
  })

  it.each(['8.8.8.8', '1.1.1.1', '203.0.113.10', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2002:808:808::1'])('allows the public %s', (address) => {
    expect(forbiddenAddressReason(address)).toBeNull()
  })
})

describe('checkWebhookTarget', () => {
  const resolvesTo = (...addresses: string[]) => async () => addresses
  const code = async (promise: Promise<void>) => promise.then(() => 'allowed', (e: unknown) => (e as ContentdError).code)

  it('resolves a name and refuses it when any address is inside, without contacting it', async () => {
    expect(await code(checkWebhookTarget('https://hooks.example/x', false, resolvesTo('203.0.113.5')))).toBe('allowed')
    expect(await code(checkWebhookTarget('https://hooks.example/x', false, resolvesTo('203.0.113.5', '10.0.0.5')))).toBe('WEBHOOK_URL_FORBIDDEN')
    expect(await code(checkWebhookTarget('https://rebind.example/x', false, resolvesTo('169.254.169.254')))).toBe('WEBHOOK_URL_FORBIDDEN')
    expect(await code(checkWebhookTarget('https://gone.example/x', false, async () => { throw new Error('ENOTFOUND') }))).toBe('INVALID_BODY')
  })

  it('allows http: and private targets with WEBHOOK_ALLOW_PRIVATE', async () => {
    expect(await code(checkWebhookTarget('http://127.0.0.1:9/x', true, resolvesTo()))).toBe('allowed')
    expect(await code(checkWebhookTarget('http://203.0.113.5/x', false, resolvesTo()))).toBe('WEBHOOK_URL_FORBIDDEN')
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
