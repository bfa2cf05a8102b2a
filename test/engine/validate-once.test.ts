// validateOperation runs once per write along the engine path (issue 27): the route's check
// (docs/design.md §4 step 5) is remembered for that operation object, and the engine's apply
// does not repeat it; a caller that hands the store an operation it did not check is checked
// there, as before. Counted through the checks validateOperation makes in other modules
// (shared/path.ts assertPathSegments per path operation, shared/json.ts assertWritableValue
// per value), on the real app over a real SQLite file.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { applyOperation, type Operation } from '../../shared/operations.js'
import { validateOperation } from '../../shared/validate-operation.js'
import type { ProjectRecord } from '../../server/store/types.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

const counts = { paths: 0, values: 0 }

vi.mock('../../shared/path.js', async original => {
  const real = await original<typeof import('../../shared/path.js')>()
  return { ...real, assertPathSegments: (segments: readonly string[]) => { counts.paths += 1; real.assertPathSegments(segments) } }
})
vi.mock('../../shared/json.js', async original => {
  const real = await original<typeof import('../../shared/json.js')>()
  const assertWritableValue: typeof real.assertWritableValue = real.assertWritableValue
  // The route's check of a body it may find the value's JSON in adds up lengths as it checks (issue 35).
  const writableStringifiedLength = real.writableStringifiedLength
  return {
    ...real,
    assertWritableValue: (...args: Parameters<typeof real.assertWritableValue>) => { counts.values += 1; assertWritableValue(...args) },
    writableStringifiedLength: (...args: Parameters<typeof real.writableStringifiedLength>) => { counts.values += 1; return writableStringifiedLength(...args) }
  }
})

let app: TestApp
let owner: Awaited<ReturnType<typeof ownerWithProject>>
let project: ProjectRecord

beforeAll(async () => {
  app = await startTestApp()
  owner = await ownerWithProject(app.url, 'once')
  project = await app.store.findProject('once', 'demo') as ProjectRecord
})
afterAll(async () => {
  await app?.close()
})

/** The checks one request makes. */
async function counted (op: string, body: unknown): Promise<{ paths: number, values: number }> {
  counts.paths = 0
  counts.values = 0
  const r = await call(app.url, 'POST', `${owner.path}/content/${op}`, { token: owner.key, body })
  expect(r.status, r.text).toBe(200)
  return { ...counts }
}

describe('validateOperation once per write', () => {
  it('an increment checks its path once; a set its path and its value once', async () => {
    // parsePath's own check of the request's path is inside path.ts, so not counted here.
    expect(await counted('increment', { path: 'n', value: 1 })).toEqual({ paths: 1, values: 0 })
    expect(await counted('set', { path: 'doc', value: { a: [1, 2, { b: 'c' }] } })).toEqual({ paths: 1, values: 1 })
  })

  it('a batch checks each operation once', async () => {
    const operations = [{ op: 'set', path: 'x', value: { y: 1 } }, { op: 'increment', path: 'n', value: 2 }, { op: 'push', path: 'list', value: 'a' }]
    expect(await counted('batch', { operations })).toEqual({ paths: 3, values: 2 })
  })

  it('an operation the store is handed unchecked is checked once, and refused when malformed', async () => {
    const actor = { type: 'user' as const, name: '@once' }
    counts.paths = 0
    await app.store.applyOperation(project, { op: 'increment', path: ['n'], value: 1 }, { actor })
    expect(counts.paths).toBe(1)
    const bad = app.store.applyOperation(project, { op: 'increment', path: ['a.b'], value: 1 }, { actor })
    await expect(bad).rejects.toMatchObject({ code: 'INVALID_PATH' })
    await expect(app.store.applyOperation(project, { op: 'set', path: ['s'], value: Number.NaN as never }, { actor })).rejects.toBeInstanceOf(ContentdError)
  })

  it('applyOperation itself still checks an operation that passed once and was changed after', () => {
    const operation: Operation = { op: 'set', path: ['a'], value: 1 }
    validateOperation(operation)
    operation.path = ['__proto__']
    expect(() => applyOperation({}, operation)).toThrow(expect.objectContaining({ code: 'INVALID_PATH' }))
  })
})
