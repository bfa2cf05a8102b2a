// The store contract, batches and patches through the engine, and Idempotency-Key records
// (IdempotencyStorage, docs/design.md §10).
import { describe, expect, it } from 'vitest'
import { parseBatch } from '../../shared/batch-request.js'
import { OperationError, type ErrorCode } from '../../shared/errors.js'
import { parsePatch } from '../../shared/json-patch.js'
import type { JsonObject } from '../../shared/json.js'
import { applyContentOperation } from '../../shared/compound.js'
import { operationOfChange } from '../../shared/events.js'
import type { Store, StoreOperation } from '../../server/store/types.js'
import { CONTRACT_CONTENT_LIMIT, storeFactories } from '../support/stores.js'
import { contractStore, expectCode, inc, push, set, unique } from './contract.js'

describe.each(storeFactories)('store contract, batches, patches and Idempotency-Key records: $name', (factory) => {
  let store: Store
  const { changesOf, apply, newProject, content } = contractStore(factory, opened => { store = opened })

  describe('batches, patches and Idempotency-Key records (docs/design.md §10)', () => {
    const batchOf = (...operations: unknown[]): StoreOperation => ({ op: 'batch', operations: parseBatch({ operations }, 100) })
    const patchOf = (...operations: unknown[]): StoreOperation => ({ op: 'patch', operations: parsePatch(operations, 100) })

    async function expectOperationError (promise: Promise<unknown>, code: ErrorCode, operation: number): Promise<void> {
      const error = await promise.then(() => null, (e: unknown) => e)
      expect(error).toBeInstanceOf(OperationError)
      expect([(error as OperationError).code, (error as OperationError).operation]).toEqual([code, operation])
    }

    it('applies a batch as one version and one entry with its operations; a failing one changes nothing', async () => {
      const project = await newProject()
      await apply(project, set('stock', 5))
      await apply(project, batchOf({ op: 'test', path: 'stock', value: 5 }, { op: 'decrement', path: 'stock' }, { op: 'set', path: 'o', value: { l: [] } }, { op: 'push', path: 'o.l', value: 1 }))
      expect(await content(project)).toEqual({ version: 2, content: { stock: 4, o: { l: [1] } } })
      await expectOperationError(apply(project, batchOf({ op: 'increment', path: 'stock' }, { op: 'test', path: 'stock', value: 4 })), 'TEST_FAILED', 1)
      await expectOperationError(apply(project, batchOf({ op: 'increment', path: 'stock' }, { op: 'push', path: 'stock', value: 1 })), 'NOT_AN_ARRAY', 1)
      expect(await content(project)).toEqual({ version: 2, content: { stock: 4, o: { l: [1] } } })
      const entries = (await store.readChanges(project, 1, 10)).changes
      expect(entries).toEqual([expect.objectContaining({ version: 2, op: 'batch', operations: [
        { op: 'test', path: 'stock', value: 5 }, { op: 'decrement', path: 'stock', value: 1 }, { op: 'set', path: 'o', value: { l: [] } }, { op: 'push', path: 'o.l', value: 1 }
      ] })])
      expect(entries[0]).not.toHaveProperty('value')
      expect(changesOf(project.id).map(c => c.entry.op)).toEqual(['set', 'batch'])
      // What listeners got is their own: later changes to the content do not alter it.
      await apply(project, push('o.l', 2))
      expect(changesOf(project.id)[1]?.entry.operations?.[2]).toEqual({ op: 'set', path: 'o', value: { l: [] } })
    })

    it('applies an RFC 6902 patch as one change (op "patch"), replayable from the log', async () => {
      const project = await newProject()
      await apply(project, { op: 'update', value: { todo: ['a', 'b'], done: [] } })
      await apply(project, patchOf({ op: 'move', from: '/todo/0', path: '/done/-' }, { op: 'copy', from: '/done', path: '/log' }, { op: 'add', path: '/log/0', value: 'start' }))
      expect(await content(project)).toEqual({ version: 2, content: { todo: ['b'], done: ['a'], log: ['start', 'a'] } })
      await expectOperationError(apply(project, patchOf({ op: 'remove', path: '/todo/0' }, { op: 'remove', path: '/todo/0' })), 'INVALID_PATCH', 1)
      expect((await content(project)).version).toBe(2)
      await apply(project, inc('n'))
      expect((await store.readContentAt(project.id, 2)).content).toEqual({ todo: ['b'], done: ['a'], log: ['start', 'a'] })
      const entries = (await store.readChanges(project, 0, 10)).changes
      let doc: JsonObject = {}
      for (const entry of entries) doc = applyContentOperation(doc, operationOfChange(structuredClone(entry)))
      expect(doc).toEqual((await content(project)).content)
      expect(entries[1]).toEqual(expect.objectContaining({ op: 'patch', operations: [{ op: 'move', from: '/todo/0', path: '/done/-' }, { op: 'copy', from: '/done', path: '/log' }, { op: 'add', path: '/log/0', value: 'start' }] }))
    })

    it('checks If-Match and the content limit for a batch as for any write', async () => {
      const project = await newProject()
      await apply(project, set('a', 1))
      await expectCode(apply(project, batchOf({ op: 'increment', path: 'a' }), { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale If-Match')
      await apply(project, batchOf({ op: 'increment', path: 'a' }), { ifMatch: [1] })
      const chunk = 'x'.repeat(Math.floor(CONTRACT_CONTENT_LIMIT / 2))
      await expectCode(apply(project, batchOf({ op: 'set', path: 'b', value: chunk }, { op: 'set', path: 'c', value: chunk }, { op: 'set', path: 'd', value: chunk })), 'CONTENT_TOO_LARGE', 'a batch past the limit')
      expect(await content(project)).toEqual({ version: 2, content: { a: 2 } })
    })

    it('refuses a patch of doubling copies at the copy that crosses the limit, and a result of exactly the limit is accepted (docs/design.md §13b)', async () => {
      const project = await newProject()
      const start = { d: ['x'.repeat(64)] }
      await apply(project, { op: 'update', value: start })
      // Each copy appends d to itself: d's JSON doubles plus a comma; 24 of them ask for a GiB.
      let arrayBytes = JSON.stringify(start.d).length
      let crossing = 0
      while (arrayBytes * 2 + 1 + '{"d":}'.length <= CONTRACT_CONTENT_LIMIT) { arrayBytes = arrayBytes * 2 + 1; crossing++ }
      const doubling = patchOf(...Array.from({ length: 24 }, () => ({ op: 'copy', from: '/d', path: '/d/-' })))
      await expectOperationError(apply(project, doubling), 'CONTENT_TOO_LARGE', crossing)
      expect(await content(project)).toEqual({ version: 1, content: start })
      // The count agrees with the content's JSON bytes to the byte ("é" is two of them).
      const room = CONTRACT_CONTENT_LIMIT - Buffer.byteLength(JSON.stringify(start)) - ',"f":""'.length
      const text = (bytes: number) => 'é'.repeat(Math.floor(bytes / 2)) + 'y'.repeat(bytes % 2)
      await expectOperationError(apply(project, patchOf({ op: 'add', path: '/f', value: text(room + 1) })), 'CONTENT_TOO_LARGE', 0)
      await expectOperationError(apply(project, patchOf({ op: 'add', path: '/e', value: 1 }, { op: 'add', path: '/f', value: text(room) })), 'CONTENT_TOO_LARGE', 1)
      await apply(project, patchOf({ op: 'add', path: '/f', value: text(room) }))
      const full = await content(project)
      expect(full.version).toBe(2)
      expect(Buffer.byteLength(JSON.stringify(full.content))).toBe(CONTRACT_CONTENT_LIMIT)
    })

    it('100 concurrent batches of 10 increments sum exactly, one version each', async () => {
      const project = await newProject()
      const batch = batchOf(...Array.from({ length: 10 }, () => ({ op: 'increment', path: 'n' })))
      const results = await Promise.all(Array.from({ length: 100 }, () => apply(project, structuredClone(batch))))
      expect(new Set(results.map(r => r.version)).size).toBe(100)
      expect(await content(project)).toEqual({ version: 100, content: { n: 1000 } })
    })

    describe('Idempotency-Key records', () => {
      const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString()
      const claimOf = (projectId: string, key: string, nowMs = 0, fingerprint = 'f1') => ({ projectId, caller: 'user:u1', key, fingerprint, now: at(nowMs), expiresAt: at(nowMs + 1000), userId: 'u1' })
      const answer = { status: 200, body: '{"message":"ok"}', etag: '"1"' }

      it('claims once; then running, then done with the answer; released claims are free again', async () => {
        const project = await newProject()
        const claim = claimOf(project.id, 'k1')
        expect(await store.claimIdempotencyKey(claim)).toEqual({ state: 'claimed' })
        expect(await store.claimIdempotencyKey({ ...claim, fingerprint: 'f2' })).toEqual({ state: 'running', fingerprint: 'f1' })
        await store.finishIdempotencyKey(claim, answer)
        expect(await store.claimIdempotencyKey(claim)).toEqual({ state: 'done', fingerprint: 'f1', response: answer })
        // Another caller's key of the same name is another record.
        expect(await store.claimIdempotencyKey({ ...claim, caller: 'key:k9' })).toEqual({ state: 'claimed' })
        await store.finishIdempotencyKey({ ...claim, caller: 'key:k9' }, null)
        expect(await store.claimIdempotencyKey({ ...claim, caller: 'key:k9' })).toEqual({ state: 'claimed' })
      })

      it('lets an expired record be claimed anew, and deletes expired records', async () => {
        const project = await newProject()
        await store.claimIdempotencyKey(claimOf(project.id, 'old'))
        await store.finishIdempotencyKey(claimOf(project.id, 'old'), answer)
        expect(await store.claimIdempotencyKey(claimOf(project.id, 'old', 999, 'f2'))).toEqual({ state: 'done', fingerprint: 'f1', response: answer })
        expect(await store.claimIdempotencyKey(claimOf(project.id, 'old', 1000, 'f2'))).toEqual({ state: 'claimed' })
        await store.claimIdempotencyKey(claimOf(project.id, 'stale', 0))
        expect(await store.deleteExpiredIdempotencyKeys(at(1500))).toBeGreaterThanOrEqual(1)
        expect(await store.claimIdempotencyKey(claimOf(project.id, 'stale', 0))).toEqual({ state: 'claimed' })
      })

      // docs/design.md §13b: MAX_IDEMPOTENCY_KEYS_PER_USER, over all the user's projects and callers.
      describe('bounded per user (maxPerUser)', () => {
        const bounded = (projectId: string, key: string, nowMs: number, userId: string, caller = `user:${userId}`) =>
          ({ ...claimOf(projectId, key, nowMs), caller, userId, maxPerUser: 3 })

        it('refuses a new key past the bound, recording nothing; stored keys still answer; a release or an expiry frees a slot', async () => {
          const project = await newProject()
          const other = await newProject()
          const user = unique('bound')
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k1', 0, user))).toEqual({ state: 'claimed' })
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k2', 100, user))).toEqual({ state: 'claimed' })
          // Another project and another caller (the user's API key) count against the same user.
          expect(await store.claimIdempotencyKey(bounded(other.id, 'k3', 200, user, 'key:k-of-user'))).toEqual({ state: 'claimed' })
          // Full: the oldest record (k1, expiring at 1000) frees a slot then.
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k4', 300, user))).toEqual({ state: 'full', retryAt: at(1000) })
          expect(await store.claimIdempotencyKey(bounded(other.id, 'k4', 300, user, 'key:k-of-user'))).toEqual({ state: 'full', retryAt: at(1000) })
          // Refused means not recorded: with the bound lifted, k4 is new.
          expect(await store.claimIdempotencyKey({ ...bounded(project.id, 'k4', 300, user), maxPerUser: undefined, fingerprint: 'f9' })).toEqual({ state: 'claimed' })
          await store.finishIdempotencyKey(bounded(project.id, 'k4', 300, user), null)
          // A key already stored still answers: replayed when done, running while running.
          await store.finishIdempotencyKey(bounded(project.id, 'k1', 0, user), answer)
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k1', 400, user))).toEqual({ state: 'done', fingerprint: 'f1', response: answer })
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k2', 400, user))).toEqual({ state: 'running', fingerprint: 'f1' })
          // Another user is not held by this one's records.
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k4', 400, unique('other-user')))).toEqual({ state: 'claimed' })
          // A released claim (its answer not kept) frees its slot.
          await store.finishIdempotencyKey(bounded(other.id, 'k3', 200, user, 'key:k-of-user'), null)
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k5', 500, user))).toEqual({ state: 'claimed' })
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k6', 500, user))).toEqual({ state: 'full', retryAt: at(1000) })
          // Once k1 has expired, a new key fits again.
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k6', 1000, user))).toEqual({ state: 'claimed' })
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k7', 1000, user))).toMatchObject({ state: 'full' })
        })

        it('lets exactly maxPerUser of 10 simultaneous new keys through', async () => {
          const project = await newProject()
          const user = unique('racer')
          const states = await Promise.all(Array.from({ length: 10 }, (_, i) => store.claimIdempotencyKey(bounded(project.id, `r${i}`, 0, user))))
          expect(states.filter(s => s.state === 'claimed')).toHaveLength(3)
          expect(states.filter(s => s.state === 'full')).toHaveLength(7)
        })
      })

      it('gives exactly one of 20 simultaneous claims of a key', async () => {
        const project = await newProject()
        const states = await Promise.all(Array.from({ length: 20 }, () => store.claimIdempotencyKey(claimOf(project.id, 'race'))))
        expect(states.filter(s => s.state === 'claimed')).toHaveLength(1)
        expect(states.filter(s => s.state === 'running')).toHaveLength(19)
      })
    })
  })

})
