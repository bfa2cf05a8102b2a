// The store contract, content schemas (ContentStorage getSchema/putSchema/deleteSchema and
// the engine's check on every write, docs/design.md §12).
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { parseBatch } from '../../shared/batch-request.js'
import { ContentdError, OperationError } from '../../shared/errors.js'
import { parsePatch } from '../../shared/json-patch.js'
import type { Operation } from '../../shared/operations.js'
import type { ProjectRecord, SchemaRecord, Store, StoreOperation } from '../../server/store/types.js'
import { storeFactories } from '../support/stores.js'
import { contractStore, expectCode, inc, push, set } from './contract.js'

describe.each(storeFactories)('store contract, content schema: $name', (factory) => {
  let store: Store
  const { changesOf, apply, newProject, content } = contractStore(factory, opened => { store = opened })

  describe('content schema (docs/design.md §12)', () => {
    const INVENTORY = {
      type: 'object',
      properties: {
        stock: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
        title: { type: 'string' }
      },
      required: ['stock']
    }
    const schemaRecord = (schema: unknown, revision = randomUUID()): SchemaRecord =>
      ({ revision, schema: schema as SchemaRecord['schema'], setBy: '@alice', setAt: new Date().toISOString() })

    /** Rejects with SCHEMA_VIOLATION, returning its status and errors. */
    async function violation (promise: Promise<unknown>, what: string): Promise<{ status: number, errors: unknown }> {
      let outcome: unknown
      try { outcome = { resolved: await promise } } catch (error) { outcome = error }
      expect(outcome, `${what}: expected SCHEMA_VIOLATION`).toBeInstanceOf(ContentdError)
      const error = outcome as ContentdError
      expect(error.code, what).toBe('SCHEMA_VIOLATION')
      return { status: error.status, errors: error.errors }
    }

    async function inventoryProject (): Promise<ProjectRecord> {
      const project = await newProject()
      await apply(project, { op: 'update', value: { stock: { apples: 3 }, tags: ['fruit'] } })
      await store.putSchema(project.id, schemaRecord(INVENTORY))
      return project
    }

    it('stores, returns, replaces and removes a schema without touching content or version', async () => {
      const project = await newProject()
      await apply(project, set('stock', { apples: 1 }))
      expect(await store.getSchema(project.id)).toBeNull()
      const first = schemaRecord(INVENTORY)
      await store.putSchema(project.id, first)
      expect(await store.getSchema(project.id)).toEqual(first)
      const second = schemaRecord({ type: 'object', $defs: { n: { type: 'number' } } })
      await store.putSchema(project.id, second)
      expect(await store.getSchema(project.id)).toEqual(second)
      expect(await content(project)).toEqual({ version: 1, content: { stock: { apples: 1 } } })
      expect(await store.deleteSchema(project.id)).toBe(true)
      expect(await store.getSchema(project.id)).toBeNull()
      expect(await store.deleteSchema(project.id), 'deleting twice').toBe(false)
      expect(changesOf(project.id).map(c => c.entry.version)).toEqual([1])
    })

    it('refuses a schema the current content breaks: SCHEMA_VIOLATION 409 with the errors, nothing stored', async () => {
      const project = await newProject()
      await apply(project, set('stock', { apples: 'lots' }))
      const refused = await violation(store.putSchema(project.id, schemaRecord(INVENTORY)), 'breaking schema')
      expect(refused).toEqual({ status: 409, errors: [{ path: 'stock.apples', message: 'must be integer' }] })
      expect(await store.getSchema(project.id)).toBeNull()
      const empty = await newProject()
      const missing = await violation(store.putSchema(empty.id, schemaRecord(INVENTORY)), 'missing required member')
      expect(missing.errors).toEqual([{ path: '', message: "must have required property 'stock'" }])
    })

    it('refuses a schema that is not one (INVALID_SCHEMA) and a missing project (PROJECT_NOT_FOUND)', async () => {
      const project = await newProject()
      await expectCode(store.putSchema(project.id, schemaRecord({ type: 'nonsense' })), 'INVALID_SCHEMA', 'bad type')
      await expectCode(store.putSchema(project.id, schemaRecord({ $ref: 'https://example.com/remote.json' })), 'INVALID_SCHEMA', 'remote $ref')
      expect(await store.getSchema(project.id)).toBeNull()
      await expectCode(store.putSchema(randomUUID(), schemaRecord(true)), 'PROJECT_NOT_FOUND', 'missing project')
    })

    it.each<[string, Operation, string]>([
      ['set', set('stock.apples', 'lots'), 'stock.apples'],
      ['increment', inc('title'), 'title'],
      ['decrement below the minimum', { op: 'decrement', path: ['stock', 'apples'], value: 4 }, 'stock.apples'],
      ['push', push('tags', 7), 'tags.1'],
      ['insert', { op: 'insert', path: ['tags'], index: 0, value: false }, 'tags.0'],
      ['delete of a required member', { op: 'delete', path: ['stock'] }, ''],
      ['update', { op: 'update', value: { stock: { pears: -1 } } }, 'stock.pears']
    ])('refuses a %s whose result breaks the schema: 422, nothing changed, nothing notified', async (_what, operation, path) => {
      const project = await inventoryProject()
      const before = await content(project)
      const refused = await violation(apply(project, operation), operation.op)
      expect(refused.status).toBe(422)
      expect(refused.errors).toEqual([{ path, message: expect.any(String) }])
      expect(await content(project)).toEqual(before)
      expect(changesOf(project.id).map(c => c.entry.version)).toEqual([1])
      // The document is intact for the next write (the refused one was undone, not half-applied).
      expect(await apply(project, inc('stock.apples'))).toEqual({ version: 2 })
      expect((await content(project)).content).toEqual({ ...before.content, stock: { ...before.content.stock as object, apples: 4 } })
    })

    it('accepts writes that keep the content valid, and checks nothing once the schema is removed', async () => {
      const project = await inventoryProject()
      await apply(project, set('stock.pears', 2))
      await apply(project, push('tags', 'red'))
      await apply(project, { op: 'delete', path: ['tags', '0'] })
      await apply(project, { op: 'update', value: { stock: {}, title: 'Shop' } })
      expect(await content(project)).toEqual({ version: 5, content: { stock: {}, title: 'Shop' } })
      await store.deleteSchema(project.id)
      await apply(project, set('stock', 'anything'))
      expect((await content(project)).content).toEqual({ stock: 'anything', title: 'Shop' })
    })

    it('applies a replaced schema from the next write on', async () => {
      const project = await inventoryProject()
      await apply(project, set('title', 'x'.repeat(10)))
      await store.putSchema(project.id, schemaRecord({ ...INVENTORY, properties: { ...INVENTORY.properties, title: { type: 'string', maxLength: 10 } } }))
      await violation(apply(project, set('title', 'x'.repeat(11))), 'longer title')
      await apply(project, set('title', 'short'))
      expect((await content(project)).content.title).toBe('short')
    })

    it('checks each of many simultaneous writes on its own: exactly those within the schema commit', async () => {
      const project = await newProject()
      await apply(project, set('votes', 0))
      await store.putSchema(project.id, schemaRecord({ properties: { votes: { type: 'integer', maximum: 25 } } }))
      const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => apply(project, inc('votes'))))
      const refused = outcomes.filter(o => o.status === 'rejected').map(o => (o.reason as ContentdError).code)
      expect(outcomes.filter(o => o.status === 'fulfilled')).toHaveLength(25)
      expect(refused).toEqual(Array.from({ length: 15 }, () => 'SCHEMA_VIOLATION'))
      expect(await content(project)).toEqual({ version: 26, content: { votes: 25 } })
    })

    describe('batches, patches and reverts (docs/design.md §10, §9)', () => {
      const batchOf = (...operations: unknown[]): StoreOperation => ({ op: 'batch', operations: parseBatch({ operations }, 100) })
      const patchOf = (...operations: unknown[]): StoreOperation => ({ op: 'patch', operations: parsePatch(operations, 100) })

      /** Refused with 422 for the write as a whole (no `operation`), content, version and log unchanged. */
      async function expectRefusedWhole (project: ProjectRecord, operation: StoreOperation, path: string): Promise<void> {
        const before = await content(project)
        const logged = (await store.readChanges(project, 0, 1000)).changes.length
        const refused = await violation(apply(project, operation), operation.op)
        expect(refused).toEqual({ status: 422, errors: [{ path, message: expect.any(String) }] })
        const error = await apply(project, operation).catch((e: unknown) => e)
        expect(error, 'a schema violation is not one operation\'s failure').not.toBeInstanceOf(OperationError)
        expect(await content(project)).toEqual(before)
        expect((await store.readChanges(project, 0, 1000)).changes).toHaveLength(logged)
      }

      it('refuses a batch whose result breaks the schema, and accepts one that passes through an invalid state', async () => {
        const project = await inventoryProject()
        await expectRefusedWhole(project, batchOf({ op: 'increment', path: 'stock.apples' }, { op: 'set', path: 'stock.pears', value: 'many' }), 'stock.pears')
        await expectRefusedWhole(project, batchOf({ op: 'delete', path: 'stock' }), '')
        // Only the result counts: -1 on the way is fine when the batch ends at 0 or above.
        expect(await apply(project, batchOf({ op: 'decrement', path: 'stock.apples', value: 10 }, { op: 'increment', path: 'stock.apples', value: 7 }))).toEqual({ version: 2 })
        expect((await content(project)).content.stock).toEqual({ apples: 0 })
        expect(changesOf(project.id).map(c => c.entry.op)).toEqual(['update', 'batch'])
      })

      it('refuses a JSON Patch whose result breaks the schema', async () => {
        const project = await inventoryProject()
        await expectRefusedWhole(project, patchOf({ op: 'add', path: '/tags/-', value: 1 }), 'tags.1')
        await expectRefusedWhole(project, patchOf({ op: 'copy', from: '/tags', path: '/title' }), 'title')
        expect(await apply(project, patchOf({ op: 'replace', path: '/stock/apples', value: 9 }, { op: 'add', path: '/title', value: 'Shop' }))).toEqual({ version: 2 })
        expect((await content(project)).content).toEqual({ stock: { apples: 9 }, tags: ['fruit'], title: 'Shop' })
      })

      it('refuses a revert to content the schema set since then breaks', async () => {
        const project = await newProject()
        await apply(project, { op: 'update', value: { stock: { apples: 'lots' } } })
        await apply(project, { op: 'update', value: { stock: { apples: 3 } } })
        await store.putSchema(project.id, schemaRecord(INVENTORY))
        await expectRefusedWhole(project, { op: 'revert', version: 1 }, 'stock.apples')
        await expectRefusedWhole(project, { op: 'revert', version: 0 }, '')
        expect(await apply(project, { op: 'revert', version: 2 })).toEqual({ version: 3 })
        expect(await content(project)).toEqual({ version: 3, content: { stock: { apples: 3 } } })
      })

      it('checks each of simultaneous batches on its own result', async () => {
        const project = await newProject()
        await apply(project, set('votes', 0))
        await store.putSchema(project.id, schemaRecord({ properties: { votes: { type: 'integer', maximum: 20 } } }))
        const batch = batchOf({ op: 'increment', path: 'votes' }, { op: 'increment', path: 'votes' })
        const outcomes = await Promise.allSettled(Array.from({ length: 15 }, () => apply(project, structuredClone(batch))))
        expect(outcomes.filter(o => o.status === 'fulfilled')).toHaveLength(10)
        expect(outcomes.flatMap(o => o.status === 'rejected' ? [(o.reason as ContentdError).code] : [])).toEqual(Array.from({ length: 5 }, () => 'SCHEMA_VIOLATION'))
        expect(await content(project)).toEqual({ version: 11, content: { votes: 20 } })
      })
    })

    it('forgets the schema of a deleted project', async () => {
      const project = await inventoryProject()
      await store.deleteProject(project.id)
      expect(await store.getSchema(project.id)).toBeNull()
    })
  })

})
