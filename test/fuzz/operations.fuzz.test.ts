// Property: random sequences of operations, fired at a real SqliteStore in bursts that share
// a group commit, keep the store's promises:
//  - a failed operation changes nothing (content and version as before it);
//  - each success adds exactly one to the version, in order;
//  - the stored content equals applying the successes in order to {} (model check), is
//    valid JSON, nests at most 64 levels, stays within CONTENT_LIMIT, and survives a reopen;
//  - no prototype is ever polluted, and every stored object is a plain object.
import fc from 'fast-check'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { isPlainObject, MAX_VALUE_DEPTH, type Json, type JsonObject } from '../../shared/json.js'
import { applyOperation, type Operation } from '../../shared/operations.js'
import { parsePath } from '../../shared/path.js'
import type { ProjectRecord } from '../../server/store/types.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import { AS_TESTER, openSqliteStore } from '../support/stores.js'
import { fuzzSeed, rawOperation, type RawOperation } from './arbitraries.js'

const CONTENT_LIMIT = 4096
const NUM_RUNS = 150
let dataDir: string
let store: SqliteStore
let projectCount = 0
let ownerId: string

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'contentd-fuzz-'))
  store = openSqliteStore({ dataDir, contentLimitBytes: CONTENT_LIMIT, cacheBytes: 1 << 20 })
  await store.init()
  ownerId = 'usr_fuzz'
  await store.createUser({ id: ownerId, username: 'fuzz', passwordHash: 'x', createdAt: new Date().toISOString() })
})
afterAll(async () => {
  await store?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/**
 * The operation a route would build; null when the route would refuse the path (400). Its
 * value is parsed afresh, as from a request body, so store and model never share objects.
 */
function toOperation (raw: RawOperation): Operation | null {
  const fresh = JSON.parse(JSON.stringify(raw)) as RawOperation
  if (fresh.op === 'update') return fresh
  try {
    return { ...fresh, path: parsePath(fresh.path) } as Operation
  } catch (e) {
    if (e instanceof ContentdError && e.code === 'INVALID_PATH') return null
    throw e
  }
}

function depth (value: Json): number {
  if (value === null || typeof value !== 'object') return 0
  const children = Array.isArray(value) ? value : Object.values(value)
  return 1 + Math.max(0, ...children.map(depth))
}

function assertPlain (value: Json): void {
  if (value === null || typeof value !== 'object') return
  if (!Array.isArray(value)) {
    expect(isPlainObject(value), 'stored objects are plain objects').toBe(true)
    expect(Object.prototype.hasOwnProperty.call(value, '__proto__')).toBe(false)
  }
  for (const child of Array.isArray(value) ? value : Object.values(value)) assertPlain(child)
}

const expectedOutcome = (model: JsonObject, operation: Operation): { ok: true, doc: JsonObject } | { ok: false, code: string } => {
  const copy = structuredClone(model)
  try {
    const doc = applyOperation(copy, operation)
    if (Buffer.byteLength(JSON.stringify(doc)) > CONTENT_LIMIT) return { ok: false, code: 'CONTENT_TOO_LARGE' }
    return { ok: true, doc }
  } catch (e) {
    if (e instanceof ContentdError) return { ok: false, code: e.code }
    throw e
  }
}

describe('operation sequences through the store', () => {
  it('keep atomicity, versions, limits and prototypes intact', async () => {
    const seed = fuzzSeed('operations')
    let cases = 0
    let successes = 0
    let failures = 0
    await fc.assert(fc.asyncProperty(
      fc.array(fc.tuple(rawOperation, fc.boolean()), { minLength: 1, maxLength: 25 }),
      async steps => {
        cases++
        const project: ProjectRecord = await store.createProject({ id: `prj_${++projectCount}`, ownerId, ownerName: 'fuzz', slug: `p${projectCount}`, name: 'p', createdAt: new Date().toISOString() })
        let model: JsonObject = {}
        let version = 0
        // Bursts: an operation flagged `true` joins the previous one's event-loop turn, so
        // both land in one group-commit transaction.
        const bursts: Operation[][] = []
        for (const [raw, sameTurn] of steps) {
          const operation = toOperation(raw)
          if (!operation) continue
          if (sameTurn && bursts.length > 0) (bursts[bursts.length - 1] as Operation[]).push(operation)
          else bursts.push([operation])
        }
        for (const burst of bursts) {
          const outcomes = await Promise.allSettled(burst.map(operation => store.applyOperation(project, structuredClone(operation), AS_TESTER)))
          burst.forEach((operation, i) => {
            const expected = expectedOutcome(model, operation)
            const actual = outcomes[i] as PromiseSettledResult<{ version: number }>
            if (expected.ok) {
              expect(actual.status, `${operation.op} should succeed`).toBe('fulfilled')
              version++
              expect((actual as PromiseFulfilledResult<{ version: number }>).value.version).toBe(version)
              model = expected.doc
              successes++
            } else {
              expect(actual.status, `${operation.op} should fail with ${expected.code}`).toBe('rejected')
              const reason = (actual as PromiseRejectedResult).reason as unknown
              expect(reason).toBeInstanceOf(ContentdError)
              expect((reason as ContentdError).code).toBe(expected.code)
              failures++
            }
          })
          const snapshot = await store.readContent(project.id)
          expect(snapshot?.version).toBe(version)
          expect(snapshot?.content).toEqual(model)
        }
        const snapshot = await store.readContent(project.id)
        const json = JSON.stringify(snapshot?.content)
        expect(JSON.parse(json)).toEqual(model)
        expect(Buffer.byteLength(json)).toBeLessThanOrEqual(CONTENT_LIMIT)
        expect(depth(snapshot?.content as Json)).toBeLessThanOrEqual(MAX_VALUE_DEPTH)
        assertPlain(snapshot?.content as Json)
        expect(({} as Record<string, unknown>).polluted).toBeUndefined()
        expect(Object.prototype).not.toHaveProperty('polluted')
      }
    ), { seed, numRuns: NUM_RUNS })
    console.log(`operations: ${cases} sequences, ${successes} operations succeeded, ${failures} failed as expected`)
    expect(successes).toBeGreaterThan(0)
    expect(failures).toBeGreaterThan(0)

    // What was acknowledged is on disk: a fresh store on the same file reads the same.
    const reopened = openSqliteStore({ dataDir, contentLimitBytes: CONTENT_LIMIT, cacheBytes: 0 })
    try {
      for (let i = 1; i <= projectCount; i++) {
        const [fromCache, fromDisk] = [await store.readContent(`prj_${i}`), await reopened.readContent(`prj_${i}`)]
        expect(fromDisk).toMatchObject({ version: fromCache?.version, content: fromCache?.content })
      }
    } finally {
      await reopened.close()
    }
  })
})
