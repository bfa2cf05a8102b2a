// The store contract, ApplyOptions.valueHandedOver (issue 35, server/engine/content-engine.ts):
// a write whose caller hands its operation's value over commits exactly what the same write
// without it commits (content, version, log entry, listeners' entry), and refused writes are
// refused alike. A store may then let go of the value in the operation once the write is
// committed (the embedded store's group commit does; a store that may prepare a write again
// after a conflict does not): the caller must not read it afterwards, and one that does not
// hand it over keeps its operation intact, to reuse.
import { describe, expect, it } from 'vitest'
import type { Json, JsonObject } from '../../shared/json.js'
import type { ProjectRecord, Store, StoreOperation } from '../../server/store/types.js'
import { storeFactories } from '../support/stores.js'
import { contractStore, expectCode } from './contract.js'

/** A value of objects, arrays and strings, as a `set` of records carries (a fresh object each call). */
const records = (n: number, tag: string): JsonObject => ({ items: Array.from({ length: n }, (_, i) => ({ id: i, name: `${tag} ${i}`, tags: ['alpha', tag] })) })

describe.each(storeFactories)('store contract, values handed over: $name', (factory) => {
  let store: Store
  const { apply, newProject, content, changesOf } = contractStore(factory, opened => { store = opened })

  /** The same operations on two projects, one handing values over and one not: every observable result compared. */
  async function sameEither (operations: () => StoreOperation[]): Promise<{ handed: ProjectRecord, kept: ProjectRecord }> {
    const handed = await newProject()
    const kept = await newProject()
    for (const operation of operations()) await apply(kept, operation)
    for (const operation of operations()) await apply(handed, operation, { valueHandedOver: true })
    expect(await content(handed)).toEqual(await content(kept))
    const entries = (project: ProjectRecord) => changesOf(project.id).map(c => ({ ...c.entry, project: undefined, at: undefined }))
    expect(entries(handed)).toEqual(entries(kept))
    const log = async (project: ProjectRecord) => (await store.readChanges(project, 0, 100)).changes.map(e => ({ ...e, project: undefined, at: undefined }))
    expect(await log(handed)).toEqual(await log(kept))
    return { handed, kept }
  }

  it('set, push, insert and update commit the same content and entries as without it', async () => {
    await sameEither((): StoreOperation[] => [
      { op: 'update', value: { a: 1, list: [] } },
      { op: 'set', path: ['blob'], value: records(20, 'x') },
      { op: 'push', path: ['list'], value: records(3, 'p') },
      { op: 'insert', path: ['list'], index: 0, value: { first: true } },
      { op: 'set', path: ['blob', 'items', '0', 'name'], value: 'renamed' },
      { op: 'set', path: ['blob'], value: records(5, 'y') }
    ])
  })

  it('writes committed together (one group commit) each keep their own value, the last one in the document', async () => {
    const project = await newProject()
    await apply(project, { op: 'update', value: { n: 0 } })
    const values = Array.from({ length: 8 }, (_, i) => records(4, `v${i}`))
    const expected = structuredClone(values)
    await Promise.all(values.map(value => apply(project, { op: 'set', path: ['blob'], value }, { valueHandedOver: true })))
    const now = await content(project)
    expect(now.version).toBe(9)
    expect(now.content.blob).toEqual(expected[7])
    const logged = (await store.readChanges(project, 1, 100)).changes.map(e => e.value as Json)
    expect(logged).toEqual(expected)
  })

  it('a refused write is refused alike, and its operation still holds its value', async () => {
    const project = await newProject()
    await apply(project, { op: 'update', value: { n: 0 } })
    const value = records(2, 'r')
    const operation: StoreOperation = { op: 'set', path: ['blob'], value }
    await expectCode(apply(project, operation, { valueHandedOver: true, ifMatch: [7] }), 'PRECONDITION_FAILED')
    expect(operation.value).toBe(value)
    expect((await content(project)).version).toBe(1)
  })

  it('an operation not handed over keeps its value and can be applied again', async () => {
    const project = await newProject()
    await apply(project, { op: 'update', value: { list: [] } })
    const operation: StoreOperation = { op: 'push', path: ['list'], value: { id: 1 } }
    await apply(project, operation)
    await apply(project, operation)
    expect(operation.value).toEqual({ id: 1 })
    expect((await content(project)).content).toEqual({ list: [{ id: 1 }, { id: 1 }] })
  })

  it.runIf(factory.name.startsWith('sqlite'))('the embedded store lets go of a committed value handed over (it lives on in the document)', async () => {
    const project = await newProject()
    await apply(project, { op: 'update', value: { n: 0 } })
    const operation: StoreOperation = { op: 'set', path: ['blob'], value: records(3, 'g') }
    const expected = structuredClone(operation.value)
    await apply(project, operation, { valueHandedOver: true })
    expect(operation.value).toBeUndefined()
    expect((await content(project)).content.blob).toEqual(expected)
  })
})
