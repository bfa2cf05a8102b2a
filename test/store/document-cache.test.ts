// The document cache's budget (server/store/document-cache.ts) covers the compressed forms
// kept with a document (encoded-content.ts): counted once made, dropped with their document,
// never handed to another version. It also holds past contents (checkpoints): charged what
// they hold, within half the budget, and always evicted before current documents.
import { describe, expect, it } from 'vitest'
import { DocumentCache, type CachedDocument } from '../../server/store/document-cache.js'
import { PastContent, SharedBaseReplay } from '../../server/store/shared-base-replay.js'

const entry = (version: number, bytes: number): CachedDocument =>
  ({ version, doc: {}, bytes, tailCount: 0, tailBytes: 0, checkpointVersion: 0, checkpointBytes: 0 })

// A document of `bytes` JSON bytes costs 4× that in the budget (MEMORY_PER_JSON_BYTE).
describe('DocumentCache encoded forms', () => {
  it('keeps a form for later readers of the same version and counts its bytes once it is made', async () => {
    const cache = new DocumentCache(10_000)
    const doc = entry(3, 100)
    cache.set('p', doc)
    expect(cache.usedBytes).toBe(400)
    const form = Promise.resolve(Buffer.alloc(250))
    cache.formsOf('p', doc).set('gzip', form)
    await form
    expect(cache.formsOf('p', cache.get('p', 3)!).get('gzip')).toBe(form)
    expect(cache.usedBytes).toBe(650)
    cache.delete('p')
    expect(cache.usedBytes).toBe(0)
  })

  it('evicts the least recently used documents when forms push it over budget', async () => {
    const cache = new DocumentCache(1000)
    const a = entry(1, 100)
    const b = entry(1, 100)
    cache.set('a', a)
    cache.set('b', b)
    const form = Promise.resolve(Buffer.alloc(500))
    cache.formsOf('b', b).set('br', form)
    await form
    expect(cache.get('a', 1)).toBeUndefined()
    expect(cache.get('b', 1)).toBe(b)
    expect(cache.usedBytes).toBe(900)
  })

  it('does not keep forms for a document no longer cached, nor pass them to a copy for the next version', async () => {
    const cache = new DocumentCache(10_000)
    const old = entry(1, 100)
    cache.set('p', old)
    const forms = cache.formsOf('p', old)
    const next = { ...old, version: 2 }
    cache.set('p', next)
    forms.set('gzip', Promise.resolve(Buffer.alloc(50)))
    expect(cache.formsOf('p', next).get('gzip')).toBeUndefined()
    const kept = Promise.resolve(Buffer.alloc(50))
    cache.formsOf('p', next).set('gzip', kept)
    await kept
    // An entry copied from this one for version 3 (a write in progress) starts without them.
    const copy = { ...next, version: 3 }
    expect(cache.formsOf('p', copy).get('gzip')).toBeUndefined()
    cache.set('p', copy)
    expect(cache.usedBytes).toBe(400)
  })

  it('forgets a form whose making failed', async () => {
    const cache = new DocumentCache(10_000)
    const doc = entry(1, 100)
    cache.set('p', doc)
    const failed = Promise.reject(new Error('out of memory'))
    cache.formsOf('p', doc).set('br', failed)
    await failed.catch(() => undefined)
    await new Promise(resolve => setImmediate(resolve))
    expect(cache.formsOf('p', doc).get('br')).toBeUndefined()
    expect(cache.usedBytes).toBe(400)
  })
})

/** A past content whose text is `chars` Latin-1 characters long: charged `chars` until a replay parses some of it. */
const pastOf = (chars: number): PastContent => new PastContent(`{"t":"${'x'.repeat(chars - 8)}"}`)

describe('DocumentCache past contents', () => {
  it('charges a past content its text, 2 bytes a character when one is outside Latin-1', () => {
    const cache = new DocumentCache(100_000)
    cache.setPast('p', 1, pastOf(1000))
    expect(cache.usedBytes).toBe(1000)
    cache.setPast('p', 2, new PastContent(`{"t":"${'x'.repeat(991)}\u20ac"}`))
    expect(cache.usedBytes).toBe(1000 + 2 * 1000)
  })

  it('charges what a replay parsed of a kept past content once told so, and nothing for one it no longer keeps', () => {
    const cache = new DocumentCache(100_000)
    const text = JSON.stringify({ counter: 0, items: Array.from({ length: 50 }, (_, id) => ({ id })) })
    const past = new PastContent(text)
    cache.setPast('p', 5, past)
    expect(cache.usedBytes).toBe(text.length)
    const replay = new SharedBaseReplay(past)
    replay.apply({ op: 'push', path: ['items'], value: { id: 50 } })
    cache.chargePast('p', 5, past)
    // Both members located (128 bytes each), `items` parsed (4× its text).
    const itemsText = JSON.stringify(JSON.parse(text).items)
    expect(cache.usedBytes).toBe(text.length + 2 * 128 + 4 * itemsText.length)
    cache.setPast('p', 5, pastOf(100))
    cache.chargePast('p', 5, past)
    expect(cache.usedBytes).toBe(100)
  })

  it('keeps past contents to half the budget, dropping the least recently used', () => {
    const cache = new DocumentCache(10_000)
    for (let version = 1; version <= 8; version++) cache.setPast('p', version, pastOf(1000))
    expect(cache.getPast('p', 4)).toBeDefined()
    cache.setPast('p', 9, pastOf(1000))
    expect(cache.pastBytes).toBe(5000)
    expect(cache.usedBytes).toBe(5000)
    const kept = [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(version => cache.getPast('p', version) !== undefined)
    expect(kept).toEqual([4, 6, 7, 8, 9])
  })

  it('never evicts a current document for past contents, however many are read', () => {
    const cache = new DocumentCache(10_000)
    const current = entry(10_000, 1500) // costs 6,000
    cache.set('p', current)
    for (let version = 1; version <= 20; version++) cache.setPast('p', version * 1000, pastOf(1000))
    expect(cache.get('p', 10_000)).toBe(current)
    expect(cache.usedBytes).toBe(10_000)
    expect(cache.pastBytes).toBe(4000)
  })

  it('evicts past contents before current documents, even ones used more recently', () => {
    const cache = new DocumentCache(10_000)
    const a = entry(1, 500) // costs 2,000
    cache.set('a', a)
    for (let version = 1; version <= 4; version++) cache.setPast('p', version, pastOf(1000))
    cache.set('b', entry(1, 1000)) // 4,000: 10,000 in all
    expect(cache.getPast('p', 1)).toBeDefined()
    cache.set('c', entry(1, 500)) // 2,000 more: two past contents go, the oldest first
    expect([1, 2, 3, 4].filter(version => cache.getPast('p', version) !== undefined)).toEqual([1, 4])
    expect(cache.get('a', 1)).toBe(a)
    cache.set('d', entry(1, 750)) // 3,000 more: the other two go, then the least recently used current document
    expect(cache.pastBytes).toBe(0)
    expect(cache.get('b', 1)).toBeUndefined()
    expect(cache.get('a', 1)).toBe(a)
    expect(cache.usedBytes).toBe(7000)
  })

  it('does not keep a past content larger than its share, nor drop others for it', () => {
    const cache = new DocumentCache(10_000)
    cache.setPast('p', 1, pastOf(1000))
    cache.setPast('p', 2, pastOf(5001))
    expect(cache.getPast('p', 2)).toBeUndefined()
    expect(cache.getPast('p', 1)).toBeDefined()
    expect(cache.usedBytes).toBe(1000)
  })

  it('drops a deleted project\'s past contents with its current document', () => {
    const cache = new DocumentCache(10_000)
    cache.set('p', entry(3, 100))
    cache.setPast('p', 1, pastOf(1000))
    cache.setPast('q', 1, pastOf(1000))
    cache.deleteProject('p')
    expect(cache.getPast('p', 1)).toBeUndefined()
    expect(cache.getPast('q', 1)).toBeDefined()
    expect(cache.usedBytes).toBe(1000)
    expect(cache.pastBytes).toBe(1000)
  })
})
