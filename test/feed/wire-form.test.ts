// The wire form the engine hands over with each committed entry (feed/wire.ts) is, character
// for character, JSON.stringify of the entry, for every kind of change, and stays what was
// committed when later writes change the document in place; the entry's value is a value of
// its own, parsed only when read.
import { describe, expect, it } from 'vitest'
import { parseBatch } from '../../shared/batch-request.js'
import type { JsonObject } from '../../shared/json.js'
import { ContentEngine, type ContentCommitter, type ContentWrite } from '../../server/engine/content-engine.js'
import type { PreparedChange } from '../../server/engine/write-step.js'
import { rememberWire, wireOf } from '../../server/feed/wire.js'
import type { CommittedChange, ProjectRecord, StoreOperation } from '../../server/store/types.js'

const PROJECT: ProjectRecord = { id: 'p1', ownerId: 'u1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: '2026-11-26T00:00:00.000Z', version: 0 }

/** The smallest commit primitive: keeps what the engine's step returns. */
class MemoryContent implements ContentCommitter {
  doc: JsonObject = {}
  bytes = 2
  version = 0
  schema = null
  readonly versions = new Map<number, string>([[0, '{}']])

  async commit (write: ContentWrite): Promise<PreparedChange> {
    const change = write.prepare(this, {
      at: '2026-11-26T12:00:00.000Z',
      contentAt: version => this.versions.get(version) as string
    })
    this.doc = change.doc
    this.bytes = change.bytes
    this.version = change.version
    this.versions.set(change.version, JSON.stringify(change.doc))
    write.committed(change)
    return change
  }
}

describe('the wire form of committed entries', () => {
  it('is JSON.stringify of the entry for every kind of change, and what was committed', async () => {
    const content = new MemoryContent()
    const engine = new ContentEngine(() => content, { contentLimitBytes: 1 << 20 })
    const heard: CommittedChange[] = []
    engine.onCommit(change => heard.push(change))
    const operations = [
      { op: 'set', path: ['doc'], value: { title: 'é "quoted"\n', list: [1, { deep: true }] } },
      { op: 'push', path: ['doc', 'list'], value: { pushed: [2] } },
      { op: 'insert', path: ['doc', 'list'], index: 0, value: 'first' },
      { op: 'increment', path: ['n'], value: 3 },
      { op: 'update', value: { doc: { title: 'replaced' }, n: 1 } },
      { op: 'batch', operations: parseBatch({ operations: [{ op: 'set', path: 'a', value: { b: 1 } }, { op: 'delete', path: 'n' }] }, 100) },
      { op: 'delete', path: ['a'] },
      { op: 'revert', version: 2 }
    ] as unknown as StoreOperation[]
    const wires: string[] = []
    for (const operation of operations) {
      await engine.apply(PROJECT, operation, { actor: { type: 'user', name: '@alice' } })
      // Taken right away, before later writes change the document in place.
      wires.push((heard.at(-1)?.wire as () => string)())
    }
    expect(heard).toHaveLength(operations.length)
    heard.forEach((change, i) => {
      expect(wires[i]).toBe(JSON.stringify(change.entry))
      // As the feed registers it for its consumers.
      rememberWire(change.entry, change.wire as () => string)
      expect(wireOf(change.entry)).toBe(wires[i])
    })
    // The set's value is the entry's own: the push and insert into the same list since did not reach it.
    expect(heard[0]?.entry.value).toEqual({ title: 'é "quoted"\n', list: [1, { deep: true }] })
    expect(heard[4]?.entry.value).toEqual({ doc: { title: 'replaced' }, n: 1 })
  })
})
