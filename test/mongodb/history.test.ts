// Unit tests of the change log's MongoDB documents and bookkeeping (server/store/mongodb/
// history.ts): what the store SENDS and how it reads entries back. Not evidence that MongoDB
// executes it as intended: that is the store contract suite run with MONGODB_URI set (see
// test/mongodb/translate.test.ts).
import { describe, expect, it } from 'vitest'
import type { Actor } from '../../shared/events.js'
import { parsePath } from '../../shared/path.js'
import { changePartsOf, serializeEntry } from '../../server/store/change-entry.js'
import { CHECKPOINT_ENTRIES, CHECKPOINT_MIN_BYTES } from '../../server/store/history-policy.js'
import { changeDocOf, entryOfChangeDoc, readChangesPage, supportsTransactions, withTailBookkeeping, WRITE_RESULT_PROJECTION, type ChangeDoc } from '../../server/store/mongodb/history.js'
import { contentUpdate, pathUpdate } from '../../server/store/mongodb/translate.js'
import type { StoreOperation } from '../../server/store/types.js'

const AT = '2026-11-23T17:00:00.000Z'
const KEY: Actor = { type: 'key', id: 'k1', name: 'writer' }

const OPERATIONS: Array<{ operation: StoreOperation, value?: unknown }> = [
  { operation: { op: 'increment', path: parsePath('a.b'), value: 2 }, value: 2 },
  { operation: { op: 'set', path: parsePath('title'), value: { text: 'hi' } }, value: { text: 'hi' } },
  { operation: { op: 'insert', path: parsePath('list'), value: 'x', index: 0 }, value: 'x' },
  { operation: { op: 'delete', path: parsePath('title') } },
  { operation: { op: 'update', value: { fresh: true } }, value: { fresh: true } },
  { operation: { op: 'revert', version: 3 }, value: { old: 1 } }
]

describe('change documents', () => {
  for (const { operation, value } of OPERATIONS) {
    it(`${operation.op}: read back, the entry is byte for byte the embedded store's`, () => {
      const parts = changePartsOf(operation)
      const doc = changeDocOf('p1', 7, parts, value as never, AT, KEY)
      expect(doc).toMatchObject({ projectId: 'p1', version: 7, op: operation.op, at: AT, actor: KEY })
      const entry = entryOfChangeDoc('@alice/demo', doc)
      const { project, ...stored } = entry
      expect(project).toBe('@alice/demo')
      const valueJson = value === undefined ? undefined : JSON.stringify(value)
      expect(JSON.stringify(stored)).toBe(serializeEntry(7, parts, valueJson, AT, JSON.stringify(KEY)))
    })
  }

  it('a document read back with null optional fields (as a driver may return) gives no such members', () => {
    const entry = entryOfChangeDoc('@a/b', { projectId: 'p', version: 1, op: 'delete', path: 'x', index: null, revertedTo: null, at: AT, actor: KEY } as never)
    expect(Object.keys(entry)).toEqual(['project', 'version', 'op', 'path', 'at', 'actor'])
  })
})

describe('tail bookkeeping on the content update', () => {
  it('adds one entry and its size to an update document, next to the content change', () => {
    const update = pathUpdate({ op: 'increment', path: parsePath('n'), value: 1 }, {})
    const withTail = withTailBookkeeping(update, false, 150) as Record<string, Record<string, unknown>>
    expect(withTail.$inc).toMatchObject({ tailCount: 1, tailBytes: 150 })
    expect(Object.keys(withTail.$inc as object)).toContain('content.n')
  })

  it('resets the tail when the change replaces the whole content', () => {
    const withTail = withTailBookkeeping(contentUpdate({ a: 1 }), true, 150) as Record<string, Record<string, unknown>>
    expect(withTail.$set).toEqual({ content: { a: 1 }, tailCount: 0, tailBytes: 0 })
  })

  it('leaves the translated update itself unchanged', () => {
    const update = pathUpdate({ op: 'set', path: parsePath('a'), value: 1 }, {})
    const before = JSON.stringify(update)
    withTailBookkeeping(update, false, 10)
    expect(JSON.stringify(update)).toBe(before)
  })

  it('asks, with the new version, whether a checkpoint is due by the shared rule', () => {
    expect(WRITE_RESULT_PROJECTION).toEqual({
      _id: 0,
      version: 1,
      checkpointDue: {
        $or: [
          { $gte: [{ $ifNull: ['$tailCount', 0] }, CHECKPOINT_ENTRIES] },
          { $and: [{ $gte: [{ $ifNull: ['$tailBytes', 0] }, CHECKPOINT_MIN_BYTES] }, { $gte: ['$tailBytes', { $bsonSize: '$content' }] }] }
        ]
      }
    })
  })
})

describe('transactions', () => {
  it('are available on a replica set member or through mongos, not on a standalone mongod', () => {
    expect(supportsTransactions({ isWritablePrimary: true, setName: 'rs0' })).toBe(true)
    expect(supportsTransactions({ isWritablePrimary: true, msg: 'isdbgrid' })).toBe(true)
    expect(supportsTransactions({ isWritablePrimary: true })).toBe(false)
  })
})

describe('reading a page of changes (docs/design.md §13b)', () => {
  /** A cursor over `docs` that counts what was read from it and whether it was closed. */
  function cursorOver (docs: ChangeDoc[]) {
    const state = { read: 0, closed: false }
    return {
      state,
      cursor: {
        async * [Symbol.asyncIterator] () { for (const doc of docs) { state.read += 1; yield doc } },
        async close () { state.closed = true }
      }
    }
  }
  const docOf = (version: number, text: string): ChangeDoc => changeDocOf('p1', version, { op: 'update' }, { text }, AT, KEY)
  const bytesOf = (doc: ChangeDoc) => Buffer.byteLength(JSON.stringify(entryOfChangeDoc('@a/p', doc)))

  it('stops reading at the byte budget, the first entry always in; closes the cursor', async () => {
    const docs = [docOf(1, 'a'.repeat(600)), docOf(2, 'é'.repeat(300)), docOf(3, 'c'.repeat(5000)), docOf(4, 'd')]
    const budget = bytesOf(docs[0]!) + bytesOf(docs[1]!)
    const first = cursorOver(docs)
    expect(await readChangesPage(first.cursor, '@a/p', 0, 100, budget)).toMatchObject({ entries: [{ version: 1 }, { version: 2 }], more: true, complete: true })
    // Read up to the entry that did not fit, not beyond it.
    expect(first.state).toEqual({ read: 3, closed: true })
    const oversize = cursorOver(docs.slice(2))
    expect(await readChangesPage(oversize.cursor, '@a/p', 2, 100, budget)).toMatchObject({ entries: [{ version: 3 }], more: true, complete: true })
    expect(oversize.state).toEqual({ read: 2, closed: true })
    // One byte short: the second entry waits for the next page.
    expect((await readChangesPage(cursorOver(docs).cursor, '@a/p', 0, 100, budget - 1)).entries).toHaveLength(1)
  })

  it('`limit` ends a page too; the end of the log is no `more`; a missing version is incomplete', async () => {
    const docs = [docOf(5, 'a'), docOf(6, 'b'), docOf(7, 'c')]
    expect(await readChangesPage(cursorOver(docs).cursor, '@a/p', 4, 2, 1_000_000)).toMatchObject({ entries: [{ version: 5 }, { version: 6 }], more: true, complete: true })
    expect(await readChangesPage(cursorOver(docs).cursor, '@a/p', 4, 3, 1_000_000)).toMatchObject({ more: false, complete: true })
    expect(await readChangesPage(cursorOver([docs[0]!, docs[2]!]).cursor, '@a/p', 4, 3, 1_000_000)).toMatchObject({ complete: false })
  })
})
