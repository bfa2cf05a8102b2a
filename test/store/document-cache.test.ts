// The document cache's budget covers the compressed forms kept with a document
// (server/store/document-cache.ts, encoded-content.ts): counted once made, dropped with
// their document, never handed to another version.
import { describe, expect, it } from 'vitest'
import { DocumentCache, type CachedDocument } from '../../server/store/document-cache.js'

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
