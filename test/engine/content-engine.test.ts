// The content engine (server/engine/) over the smallest store there can be: an in-memory
// commit primitive that only keeps what the engine's step returns. Every write rule it shows
// (If-Match before the operation's errors, the content limit, the schema refused with its
// in-place undo, a revert's history read in If-Match's order, the entry, notification
// after the commit and never for a failure) comes from the engine, so a third store gets
// them by implementing the primitive (CONTRIBUTING.md, "The interface, by concern").
import { describe, expect, it } from 'vitest'
import { ContentdError, isContentdError } from '../../shared/errors.js'
import type { JsonObject } from '../../shared/json.js'
import { ContentEngine, type ContentCommitter, type ContentWrite } from '../../server/engine/content-engine.js'
import type { PreparedChange } from '../../server/engine/write-step.js'
import { ContentSchema } from '../../server/schema/content-schema.js'
import type { CommittedChange, ProjectRecord } from '../../server/store/types.js'

const PROJECT: ProjectRecord = { id: 'p1', ownerId: 'u1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: '2026-11-26T00:00:00.000Z', version: 0 }
const AS_ALICE = { actor: { type: 'user' as const, name: '@alice' } }
const AT = '2026-11-26T12:00:00.000Z'

/** One project in memory: the content at each version, and the document the store keeps. */
class MemoryContent implements ContentCommitter {
  doc: JsonObject = {}
  bytes = 2
  version = 0
  schema: ContentSchema | null = null
  readonly versions = new Map<number, string>([[0, '{}']])
  /** What the store was told, in order: "committed v" or "resolved v". */
  readonly told: string[] = []

  async commit (write: ContentWrite): Promise<PreparedChange> {
    const change = write.prepare(this, {
      at: AT,
      contentAt: version => {
        const json = this.versions.get(version)
        if (json === undefined) throw new ContentdError('VERSION_NOT_FOUND')
        return json
      }
    })
    this.doc = change.doc
    this.bytes = change.bytes
    this.version = change.version
    this.versions.set(change.version, JSON.stringify(change.doc))
    write.committed(change)
    this.told.push(`committed ${change.version}`)
    return change
  }
}

function engineOver (limit = 1024) {
  const content = new MemoryContent()
  const engine = new ContentEngine(() => content, { contentLimitBytes: limit })
  const heard: CommittedChange[] = []
  engine.onCommit(change => { heard.push(change); content.told.push(`heard ${change.entry.version}`) })
  const apply = (operation: Parameters<ContentEngine['apply']>[1], options: Partial<Parameters<ContentEngine['apply']>[2]> = {}) =>
    engine.apply(PROJECT, operation, { ...AS_ALICE, ...options })
  return { content, engine, heard, apply }
}

const codeOf = (error: unknown): string | null => isContentdError(error) ? error.code : null

describe('the content engine over a bare commit primitive', () => {
  it('applies a write, and tells listeners its entry once committed, before the writer is answered', async () => {
    const { content, heard, apply } = engineOver()
    const { version } = await apply({ op: 'set', path: ['a'], value: { b: [1] } })
    content.told.push(`resolved ${version}`)
    expect(content.doc).toEqual({ a: { b: [1] } })
    expect(content.told).toEqual(['heard 1', 'committed 1', 'resolved 1'])
    expect(heard.map(c => c.entry)).toEqual([{ project: '@alice/demo', version: 1, op: 'set', path: 'a', value: { b: [1] }, at: AT, actor: AS_ALICE.actor }])
    // The listener's value is its own: the store's document changing later does not alter it.
    await apply({ op: 'push', path: ['a', 'b'], value: 2 })
    expect(heard[0]?.entry.value).toEqual({ b: [1] })
  })

  it('a stale If-Match is PRECONDITION_FAILED before the operation\'s own error; nothing kept, nobody told', async () => {
    const { content, heard, apply } = engineOver()
    await apply({ op: 'set', path: ['s'], value: 'x' })
    const failure = await apply({ op: 'increment', path: ['s'], value: 1 }, { ifMatch: [7] }).catch((e: unknown) => e)
    expect(codeOf(failure)).toBe('PRECONDITION_FAILED')
    expect(codeOf(await apply({ op: 'increment', path: ['s'], value: 1 }).catch((e: unknown) => e))).toBe('NOT_A_NUMBER')
    expect(content.version).toBe(1)
    expect(heard).toHaveLength(1)
  })

  it('refuses a result past the content limit (413), the document untouched', async () => {
    const { content, apply } = engineOver(64)
    await apply({ op: 'set', path: ['a'], value: 'x'.repeat(40) })
    const kept = content.doc
    expect(codeOf(await apply({ op: 'set', path: ['b'], value: 'y'.repeat(40) }).catch((e: unknown) => e))).toBe('CONTENT_TOO_LARGE')
    expect(content.doc).toBe(kept)
    expect(content.doc).toEqual({ a: 'x'.repeat(40) })
  })

  it('a schema refusal (422) undoes the path operation it applied in place: same document, same key order', async () => {
    const { content, apply } = engineOver()
    await apply({ op: 'update', value: { n: 1, m: 2 } })
    content.schema = ContentSchema.compile({ type: 'object', properties: { n: { type: 'number', maximum: 5 } } })
    const kept = content.doc
    expect(codeOf(await apply({ op: 'increment', path: ['n'], value: 10 }).catch((e: unknown) => e))).toBe('SCHEMA_VIOLATION')
    expect(content.doc).toBe(kept)
    expect(JSON.stringify(content.doc)).toBe('{"n":1,"m":2}')
    expect(content.version).toBe(1)
  })

  it('a revert replaces the content by the store\'s past version, and its entry says so; If-Match is checked before the version', async () => {
    const { content, heard, apply } = engineOver()
    await apply({ op: 'set', path: ['a'], value: 1 })
    await apply({ op: 'set', path: ['a'], value: 2 })
    expect(codeOf(await apply({ op: 'revert', version: 9 }, { ifMatch: [0] }).catch((e: unknown) => e))).toBe('PRECONDITION_FAILED')
    expect(codeOf(await apply({ op: 'revert', version: 9 }).catch((e: unknown) => e))).toBe('VERSION_NOT_FOUND')
    await apply({ op: 'revert', version: 1 })
    expect(content.doc).toEqual({ a: 1 })
    expect(heard.at(-1)?.entry).toEqual({ project: '@alice/demo', version: 3, op: 'revert', value: { a: 1 }, revertedTo: 1, at: AT, actor: AS_ALICE.actor })
  })
})
