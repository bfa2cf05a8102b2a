// The offline SDK's pure parts, without a server (docs/design.md §19): the outbox over its
// storage interface (an in-memory store, and a directory store on a real file system), its
// bounds (docs/design.md §13b), and the local copy as server state + pending writes.
// Real IndexedDB is covered in Chromium by test/browser/offline.test.ts.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { directoryStore } from '../../shared/client/offline/directory-store.js'
import { localOperationOf, rebase } from '../../shared/client/offline/local-view.js'
import { Outbox, type QueuedWrite } from '../../shared/client/offline/outbox.js'
import { memoryStore, type OfflineStore } from '../../shared/client/offline/storage.js'
import type { Json } from '../../shared/json.js'

const dirs: string[] = []
afterAll(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }) })
const tempDir = () => { const dir = mkdtempSync(join(tmpdir(), 'contentd-outbox-')); dirs.push(dir); return dir }

const write = (suffix: string, body: Json, key = `k${suffix}${JSON.stringify(body)}`): Omit<QueuedWrite, 'seq'> =>
  ({ key, method: 'POST', suffix, body, at: '2026-11-27T03:00:00.000Z' })
const LIMITS = { maxWrites: 100, maxBytes: 1 << 20 }

describe.each([
  ['memory', () => memoryStore()],
  ['directory', () => directoryStore(tempDir())]
] as const)('outbox over the %s store', (_name, makeStore) => {
  it('keeps writes in the order made, durably: a new outbox on the same store reads them back', async () => {
    const store = makeStore()
    const outbox = new Outbox(store, 'outbox/@a/demo/', LIMITS)
    await outbox.load()
    const made = await Promise.all(Array.from({ length: 12 }, (_, i) => outbox.add(write('/set', { path: `k${i}`, value: i }))))
    expect(made.map(w => w.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
    await outbox.remove(made[3] as QueuedWrite)
    // Another project's outbox in the same store stays apart.
    await new Outbox(store, 'outbox/@a/other/', LIMITS).add(write('/increment', { path: 'n' }))

    const again = new Outbox(store, 'outbox/@a/demo/', LIMITS)
    await again.load()
    expect(again.pending.map(w => (w.body as { value: number }).value)).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11])
    expect(again.size.bytes).toBe(outbox.size.bytes)
    // New writes continue after the last one kept.
    expect((await again.add(write('/set', { path: 'z', value: 1 }))).seq).toBe(13)
  })

  it('refuses past maxWrites and past maxBytes with OUTBOX_FULL, queuing nothing', async () => {
    const store = makeStore()
    const byCount = new Outbox(store, 'outbox/count/', { maxWrites: 2, maxBytes: 1 << 20 })
    await byCount.add(write('/increment', { path: 'a' }))
    await byCount.add(write('/increment', { path: 'b' }))
    await expect(byCount.add(write('/increment', { path: 'c' }))).rejects.toMatchObject({ code: 'OUTBOX_FULL', status: 0 })
    expect((await store.keys('outbox/count/')).length).toBe(2)

    const byBytes = new Outbox(store, 'outbox/bytes/', { maxWrites: 100, maxBytes: 1000 })
    await byBytes.add(write('/set', { path: 'a', value: 'x'.repeat(500) }, 'k1'))
    await expect(byBytes.add(write('/set', { path: 'b', value: 'y'.repeat(500) }, 'k2'))).rejects.toMatchObject({ code: 'OUTBOX_FULL' })
    expect(byBytes.size.writes).toBe(1)
    expect(byBytes.size.bytes).toBeGreaterThan(500)
    expect(byBytes.size.bytes).toBeLessThanOrEqual(1000)
    expect((await store.keys('outbox/bytes/')).length).toBe(1)
  })
})

describe('outbox durability', () => {
  it('a write whose put fails is not queued, and add rejects', async () => {
    const inner = memoryStore()
    const failing: OfflineStore = { ...inner, put: async () => { throw new Error('disk full') } }
    const outbox = new Outbox(failing, 'outbox/x/', LIMITS)
    await expect(outbox.add(write('/increment', { path: 'n' }))).rejects.toThrow('disk full')
    expect(outbox.pending).toEqual([])
    expect(outbox.size).toEqual({ writes: 0, bytes: 0 })
  })

  it('the directory store keeps keys with any characters, one file each, and no temporary files', async () => {
    const dir = tempDir()
    const store = directoryStore(dir)
    const keys = ['copy/@alice/demo', 'outbox/@alice/dé mo/000000000001', 'a.b..c']
    for (const [i, key] of keys.entries()) await store.put(key, { i })
    expect(await store.keys('')).toEqual([...keys].sort())
    expect(await store.get('outbox/@alice/dé mo/000000000001')).toEqual({ i: 1 })
    expect(readdirSync(dir).filter(f => f.endsWith('.tmp'))).toEqual([])
    await store.delete('a.b..c')
    expect(await store.get('a.b..c')).toBeUndefined()
    expect(await store.keys('outbox/')).toEqual(['outbox/@alice/dé mo/000000000001'])
  })
})

describe('local copy = server state + pending writes', () => {
  let seq = 0
  const queued = (suffix: string, body: Json, method: 'POST' | 'PATCH' = 'POST'): QueuedWrite => ({ ...write(suffix, body), method, seq: ++seq })

  it('applies every kind of write in order with the server\'s rules, leaving the server state as it was', () => {
    const server = { n: 1, list: ['a'], gone: true }
    const pending = [
      queued('/increment', { path: 'n' }),
      queued('/increment', { path: 'n', value: 5 }),
      queued('/decrement', { path: 'n' }),
      queued('/push', { path: 'list', value: 'b' }),
      queued('/insert', { path: 'list', index: 0, value: 'z' }),
      queued('/delete', { path: 'gone' }),
      queued('/batch', { operations: [{ op: 'test', path: 'n', value: 6 }, { op: 'increment', path: 'n' }, { op: 'set', path: 'o.k', value: 1 }] }),
      queued('', [{ op: 'add', path: '/list/-', value: 'p' }], 'PATCH')
    ]
    expect(rebase(server, pending)).toEqual({ content: { n: 7, list: ['z', 'a', 'b', 'p'], o: { k: 1 } }, skipped: [] })
    expect(server).toEqual({ n: 1, list: ['a'], gone: true })
    // The queued bodies are unchanged too: what is applied is a copy.
    expect(pending[3]?.body).toEqual({ path: 'list', value: 'b' })
  })

  it('leaves out a write that does not apply to the newest content (and a revert), keeping the rest', () => {
    const failingTest = queued('/batch', { operations: [{ op: 'test', path: 'stock', value: 5 }, { op: 'decrement', path: 'stock' }] })
    const revert = queued('/revert', { version: 1 })
    const later = queued('/set', { path: 'note', value: 'hi' })
    const { content, skipped } = rebase({ stock: 3 }, [failingTest, revert, later])
    expect(content).toEqual({ stock: 3, note: 'hi' })
    expect(skipped).toEqual([failingTest, revert])
    // The same writes on the content they were made on all apply (but the revert).
    expect(rebase({ stock: 5 }, [failingTest, later]).content).toEqual({ stock: 4, note: 'hi' })
  })

  it('an update replaces the content; later writes apply to it', () => {
    expect(rebase({ old: 1 }, [queued('', { fresh: 1 }), queued('/increment', { path: 'fresh' })]).content).toEqual({ fresh: 2 })
    expect(localOperationOf({ method: 'POST', suffix: '/revert', body: { version: 1 } })).toBeNull()
  })
})
