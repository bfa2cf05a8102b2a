// The store contract, content writes (ContentApi over each store's commit primitive,
// server/engine/): the shared operation table, versions and conditions, the content limit,
// commit notifications, concurrency.
import { describe, expect, it } from 'vitest'
import { parseBatch } from '../../shared/batch-request.js'
import { ContentdError, type ErrorCode } from '../../shared/errors.js'
import type { Operation } from '../../shared/operations.js'
import type { Store } from '../../server/store/types.js'
import { isSameJson, toOperation } from '../cases/operation-cases.js'
import { CONTRACT_CONTENT_LIMIT, storeFactories } from '../support/stores.js'
import { AS_TEST, contractStore, expectCode, inc, push, REQUEST_CASES, set, STORE_CASES } from './contract.js'

describe('operation cases that never reach a store', () => {
  it.each(REQUEST_CASES)('$name: rejected while building the operation, as the table expects', (c) => {
    expect('code' in c.expect, 'a case the request layer refuses must expect an error').toBe(true)
    expect(() => toOperation(c)).toThrow(ContentdError)
    try { toOperation(c) } catch (error) { expect((error as ContentdError).code).toBe((c.expect as { code: ErrorCode }).code) }
  })
})

describe.each(storeFactories)('store contract, content writes: $name', (factory) => {
  let store: Store
  const { changesOf, apply, newProject, content } = contractStore(factory, opened => { store = opened })

  describe('operation cases (test/cases/operation-cases.ts)', () => {
    it.each(STORE_CASES)('$name', async (c) => {
      const project = await newProject()
      // The starting content goes in as an update, so it is version 1 on every store.
      await apply(project, { op: 'update', value: structuredClone(c.before) })
      const operation = toOperation(c)
      const notifiedBefore = changesOf(project.id).length
      if ('content' in c.expect) {
        expect(await apply(project, operation)).toEqual({ version: 2 })
        const after = await content(project)
        expect(after.content).toEqual(c.expect.content)
        expect(isSameJson(after.content, c.expect.content), 'same JSON types and own keys').toBe(true)
        expect(after.version).toBe(2)
        expect(changesOf(project.id).length - notifiedBefore, 'one notification').toBe(1)
      } else {
        await expectCode(apply(project, operation), c.expect.code, c.name)
        const after = await content(project)
        expect(after.content, 'a failed operation changes nothing').toEqual(c.before)
        expect(isSameJson(after.content, c.before)).toBe(true)
        expect(after.version).toBe(1)
        expect(changesOf(project.id).length - notifiedBefore, 'no notification').toBe(0)
      }
    })
  })


  describe('versions and conditions', () => {
    it('adds exactly 1 to the version per successful operation and nothing per failed one', async () => {
      const project = await newProject()
      expect(await apply(project, set('a', 'text'))).toEqual({ version: 1 })
      expect(await apply(project, inc('n'))).toEqual({ version: 2 })
      await expectCode(apply(project, inc('a')), 'NOT_A_NUMBER', 'increment a string')
      await expectCode(apply(project, push('a', 1)), 'NOT_AN_ARRAY', 'push onto a string')
      expect(await content(project)).toEqual({ version: 2, content: { a: 'text', n: 1 } })
      expect(await apply(project, { op: 'delete', path: ['missing'] }), 'a delete of nothing still commits').toEqual({ version: 3 })
      expect((await store.findProject(project.ownerName, project.slug))?.version).toBe(3)
    })

    it('honours ifMatch: "*" and the current version pass, a stale one is PRECONDITION_FAILED and changes nothing', async () => {
      const project = await newProject()
      expect(await apply(project, inc('n'), { ifMatch: '*' })).toEqual({ version: 1 })
      expect(await apply(project, inc('n'), { ifMatch: [1] })).toEqual({ version: 2 })
      expect(await apply(project, inc('n'), { ifMatch: [7, 2] }), 'one of several listed').toEqual({ version: 3 })
      await expectCode(apply(project, inc('n'), { ifMatch: [2] }), 'PRECONDITION_FAILED', 'stale version')
      await expectCode(apply(project, inc('n'), { ifMatch: [] }), 'PRECONDITION_FAILED', 'no version listed')
      expect(await content(project)).toEqual({ version: 3, content: { n: 3 } })
    })

    it('honours ifNoneMatch (docs/design.md §13b): a matching version or "*" is PRECONDITION_FAILED after ifMatch, and changes nothing', async () => {
      const project = await newProject()
      expect(await apply(project, inc('n'), { ifNoneMatch: [5] }), 'another version').toEqual({ version: 1 })
      await expectCode(apply(project, inc('n'), { ifNoneMatch: [7, 1] }), 'PRECONDITION_FAILED', 'the current version listed')
      await expectCode(apply(project, inc('n'), { ifNoneMatch: '*' }), 'PRECONDITION_FAILED', '* (the content exists)')
      await expectCode(apply(project, { op: 'update', value: {} }, { ifNoneMatch: '*' }), 'PRECONDITION_FAILED', 'an update')
      await expectCode(apply(project, { op: 'revert', version: 0 }, { ifNoneMatch: [1] }), 'PRECONDITION_FAILED', 'a revert')
      await expectCode(apply(project, { op: 'batch', operations: parseBatch({ operations: [{ op: 'increment', path: 'n' }] }, 100) }, { ifNoneMatch: [1] }), 'PRECONDITION_FAILED', 'a batch')
      await expectCode(apply(project, inc('n'), { ifMatch: [1], ifNoneMatch: [1] }), 'PRECONDITION_FAILED', 'ifMatch passes, ifNoneMatch matches')
      await expectCode(apply(project, push('n', 1), { ifNoneMatch: [1] }), 'PRECONDITION_FAILED', 'before the operation\'s own errors')
      expect(await content(project)).toEqual({ version: 1, content: { n: 1 } })
    })

    it('checks ifMatch before the operation itself: a stale condition wins over an operation error', async () => {
      const project = await newProject()
      await apply(project, set('a', 'text'))
      await expectCode(apply(project, inc('a'), { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale + wrong type')
    })

    it('answers PROJECT_NOT_FOUND once the project is deleted', async () => {
      const project = await newProject()
      await apply(project, inc('n'))
      await store.deleteProject(project.id)
      await expectCode(apply(project, inc('n')), 'PROJECT_NOT_FOUND', 'after delete')
      await expectCode(apply(project, set('x', 1), { ifMatch: '*' }), 'PROJECT_NOT_FOUND', 'after delete, with ifMatch')
      expect(await store.readContent(project.id)).toBeNull()
    })

    it('gives out snapshots that later operations do not change', async () => {
      const project = await newProject()
      await apply(project, set('list', [1]))
      const before = await store.readContent(project.id)
      await apply(project, push('list', 2))
      await apply(project, set('other', true))
      expect(before?.version).toBe(1)
      expect(before?.content).toEqual({ list: [1] })
      if (before?.json !== undefined) expect(JSON.parse(before.json)).toEqual({ list: [1] })
      expect(await content(project)).toEqual({ version: 3, content: { list: [1, 2], other: true } })
    })
  })


  describe('content limit', () => {
    const big = (bytes: number): string => 'x'.repeat(bytes)

    it('refuses a set that would outgrow the limit: CONTENT_TOO_LARGE, nothing changed', async () => {
      const project = await newProject()
      await apply(project, set('small', 'ok'))
      await expectCode(apply(project, set('huge', big(CONTRACT_CONTENT_LIMIT + 1024))), 'CONTENT_TOO_LARGE', 'one huge set')
      expect(await content(project)).toEqual({ version: 1, content: { small: 'ok' } })
    })

    it('refuses growth past the limit step by step, and still allows shrinking near it', async () => {
      const project = await newProject()
      const chunk = big(Math.floor(CONTRACT_CONTENT_LIMIT / 4))
      await apply(project, set('a', chunk))
      await apply(project, set('b', chunk))
      await apply(project, push('list', chunk))
      await expectCode(apply(project, push('list', chunk)), 'CONTENT_TOO_LARGE', 'the fourth quarter plus keys')
      await expectCode(apply(project, set('c', chunk)), 'CONTENT_TOO_LARGE', 'another quarter')
      let after = await content(project)
      expect(after.version).toBe(3)
      expect(after.content).toEqual({ a: chunk, b: chunk, list: [chunk] })
      await apply(project, { op: 'delete', path: ['a'] })
      await apply(project, set('b', 'short'))
      await apply(project, inc('count'))
      after = await content(project)
      expect(after).toEqual({ version: 6, content: { b: 'short', list: [chunk], count: 1 } })
      await apply(project, set('c', chunk))
      expect((await content(project)).version).toBe(7)
    })

    it('refuses an update (whole-content replacement) over the limit', async () => {
      const project = await newProject()
      await apply(project, { op: 'update', value: { keep: 'me' } })
      await expectCode(apply(project, { op: 'update', value: { huge: big(CONTRACT_CONTENT_LIMIT + 1024) } }), 'CONTENT_TOO_LARGE', 'huge update')
      expect(await content(project)).toEqual({ version: 1, content: { keep: 'me' } })
      await apply(project, { op: 'update', value: { replaced: [1, 2] } })
      expect(await content(project)).toEqual({ version: 2, content: { replaced: [1, 2] } })
    })
  })


  describe('commit notifications', () => {
    it('emits exactly one change per success, in version order, as its log entry with project and actor; none for failures', async () => {
      const project = await newProject()
      const operations: Operation[] = [set('a', { b: [1] }), inc('n', 5), push('a.b', 2), { op: 'delete', path: ['n'] }, { op: 'insert', path: ['a', 'b'], index: 0, value: 0 }]
      await apply(project, operations[0]!)
      await apply(project, operations[1]!)
      await expectCode(apply(project, inc('a')), 'NOT_A_NUMBER', 'failure in between')
      await expectCode(apply(project, inc('n'), { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale in between')
      for (const operation of operations.slice(2)) await apply(project, operation)
      const changes = changesOf(project.id)
      const ref = `@${project.ownerName}/${project.slug}`
      const actor = AS_TEST.actor
      // Values as they were applied: later operations must not reach back into values already notified.
      expect(changes.map(c => ({ ...c.entry, at: 'at' }))).toEqual([
        { project: ref, version: 1, op: 'set', path: 'a', value: { b: [1] }, at: 'at', actor },
        { project: ref, version: 2, op: 'increment', path: 'n', value: 5, at: 'at', actor },
        { project: ref, version: 3, op: 'push', path: 'a.b', value: 2, at: 'at', actor },
        { project: ref, version: 4, op: 'delete', path: 'n', at: 'at', actor },
        { project: ref, version: 5, op: 'insert', path: 'a.b', value: 0, index: 0, at: 'at', actor }
      ])
      for (const change of changes) {
        expect(change.project.id).toBe(project.id)
        expect(change.project.slug).toBe(project.slug)
        expect(change.project.ownerName).toBe(project.ownerName)
        expect(Number.isNaN(Date.parse(change.entry.at)), `at = ${change.entry.at}`).toBe(false)
      }
      // What listeners heard is exactly what the log keeps.
      expect((await store.readChanges(project, 0, 100)).changes).toEqual(changes.map(c => c.entry))
      expect(await content(project)).toEqual({ version: 5, content: { a: { b: [0, 1, 2] } } })
    })

    it('emits nothing for a deleted project or an oversized change', async () => {
      const project = await newProject()
      await expectCode(apply(project, set('huge', 'x'.repeat(CONTRACT_CONTENT_LIMIT * 2))), 'CONTENT_TOO_LARGE', 'oversized')
      await store.deleteProject(project.id)
      await expectCode(apply(project, inc('n')), 'PROJECT_NOT_FOUND', 'deleted')
      expect(changesOf(project.id)).toEqual([])
    })
  })


  describe('concurrency', () => {
    it('500 simultaneous increments all count: 500, version 500, notified in version order', async () => {
      const project = await newProject()
      const results = await Promise.all(Array.from({ length: 500 }, () => apply(project, inc('hits'))))
      expect(results.map(r => r.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1))
      expect(await content(project)).toEqual({ version: 500, content: { hits: 500 } })
      expect(changesOf(project.id).map(c => c.entry.version)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1))
    })

    it('100 concurrent pushes keep every element', async () => {
      const project = await newProject()
      await Promise.all(Array.from({ length: 100 }, (_, i) => apply(project, push('log', i))))
      const after = await content(project)
      expect(after.version).toBe(100)
      const log = after.content.log as number[]
      expect(log).toHaveLength(100)
      expect([...log].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i))
    })

    it('succeeding and failing operations sent together each get their own outcome; failures change nothing', async () => {
      const project = await newProject()
      await apply(project, { op: 'update', value: { n: 0, text: 'hello', list: [] } })
      const batch: Array<{ operation: Operation, options?: { ifMatch: number[] }, code?: ErrorCode }> = [
        { operation: inc('n', 1) },
        { operation: inc('text'), code: 'NOT_A_NUMBER' },
        { operation: push('list', 'a') },
        { operation: push('n', 'x'), code: 'NOT_AN_ARRAY' },
        { operation: inc('n', 10) },
        { operation: inc('n', 100), options: { ifMatch: [0] }, code: 'PRECONDITION_FAILED' },
        { operation: set('text.deep', 1), code: 'PATH_CONFLICT' },
        { operation: inc('n', 1000) },
        { operation: set('huge', 'x'.repeat(CONTRACT_CONTENT_LIMIT * 2)), code: 'CONTENT_TOO_LARGE' },
        { operation: push('list', 'b') }
      ]
      // All submitted in the same tick, before any settles.
      const settled = await Promise.allSettled(batch.map(b => apply(project, b.operation, b.options)))
      const versions: number[] = []
      settled.forEach((result, i) => {
        const expected = batch[i]!
        const label = `batch item ${i} (${expected.operation.op})`
        if (expected.code) {
          expect(result.status, label).toBe('rejected')
          const reason = (result as PromiseRejectedResult).reason as unknown
          expect(reason, label).toBeInstanceOf(ContentdError)
          expect((reason as ContentdError).code, label).toBe(expected.code)
        } else {
          expect(result.status, label).toBe('fulfilled')
          versions.push((result as PromiseFulfilledResult<{ version: number }>).value.version)
        }
      })
      expect(versions.sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6])
      const after = await content(project)
      expect(after.version).toBe(6)
      expect(after.content.n).toBe(1011)
      expect(after.content.text).toBe('hello')
      expect([...(after.content.list as string[])].sort()).toEqual(['a', 'b'])
      expect(Object.keys(after.content).sort()).toEqual(['list', 'n', 'text'])
      expect(changesOf(project.id).map(c => c.entry.version)).toEqual([1, 2, 3, 4, 5, 6])
    })
  })

})
