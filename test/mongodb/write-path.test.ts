// The MongoDB store's write path (server/store/mongodb/write-path.ts, docs/design.md §20) on
// an in-memory collection run by mingo (test/support/mingo-backend.ts): one writer per project
// per node (issue 28, A6/A7), version races between nodes, the content limit in JSON bytes
// as on the embedded store (A3), and refusals that send nothing. Not a run against MongoDB.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BSON } from 'mongodb'
import { afterEach, describe, expect, it } from 'vitest'
import type { ContentOperation } from '../../shared/compound.js'
import { isContentdError } from '../../shared/errors.js'
import type { JsonObject } from '../../shared/json.js'
import { changePartsOf } from '../../server/store/change-entry.js'
import { CommitEmitter } from '../../server/store/commit-emitter.js'
import { MongoWritePath, type ResolvedWrite } from '../../server/store/mongodb/write-path.js'
import type { ProjectRecord } from '../../server/store/types.js'
import { MingoBackend } from '../support/mingo-backend.js'
import { AS_TESTER, openSqliteStore } from '../support/stores.js'

const PROJECT: ProjectRecord = { id: 'p1', ownerId: 'u1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: '2026-11-26T00:00:00.000Z', version: 0 }
const LIMIT = 64 * 1024

function node (backend: MingoBackend, options: { maxAttempts?: number } = {}) {
  const listeners = new CommitEmitter()
  const versions: number[] = []
  listeners.on(change => versions.push(change.entry.version))
  const writes = new MongoWritePath({ backend, contentLimitBytes: LIMIT, commitListeners: listeners, schemaOf: () => { throw new Error('no schemas here') }, ...options })
  return { writes, versions }
}

const write = (op: ContentOperation): ResolvedWrite => ({ applied: op, parts: changePartsOf(op), value: 'value' in op ? op.value : undefined })
const increment = write({ op: 'increment', path: ['n'], value: 1 })
const codeOf = (error: unknown): string | null => isContentdError(error) ? error.code : null

describe('one writer per project per node', () => {
  it('concurrent writes to one project from one node queue: one transaction at a time, none lost, none retried', async () => {
    const backend = new MingoBackend()
    backend.addProject(PROJECT.id)
    const { writes, versions } = node(backend)
    const results = await Promise.all(Array.from({ length: 50 }, () => writes.apply(PROJECT, increment, AS_TESTER)))
    expect(backend.maxConcurrentPerProject).toBe(1)
    expect(backend.lost).toBe(0)
    expect(backend.reads).toBe(50)
    expect(results.map(r => r.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    expect(versions).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    expect(backend.document(PROJECT.id)).toMatchObject({ version: 50, content: { n: 50 } })
  })

  it('writes to different projects are not held up by each other', async () => {
    const backend = new MingoBackend()
    for (const id of ['a', 'b', 'c']) backend.addProject(id)
    const { writes } = node(backend)
    let running = 0
    let most = 0
    const commit = backend.commit.bind(backend)
    backend.commit = async w => { running++; most = Math.max(most, running); try { return await commit(w) } finally { running-- } }
    await Promise.all(['a', 'b', 'c'].map(id => writes.apply({ ...PROJECT, id }, increment, AS_TESTER)))
    expect(most).toBe(3)
  })

  it('two nodes racing on one project: the version filter makes the loser read again; every write lands once', async () => {
    const backend = new MingoBackend()
    backend.addProject(PROJECT.id)
    const one = node(backend, { maxAttempts: 100 })
    const two = node(backend, { maxAttempts: 100 })
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? one : two).writes.apply(PROJECT, increment, AS_TESTER))
      .concat(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? two : one).writes.apply(PROJECT, increment, AS_TESTER))))
    expect(backend.document(PROJECT.id)).toMatchObject({ version: 40, content: { n: 40 } })
    expect(backend.lost).toBeGreaterThan(0)
    expect([...one.versions, ...two.versions].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
  })

  it('a write that keeps losing answers 503 STORE_UNAVAILABLE, having changed nothing', async () => {
    const backend = new MingoBackend()
    backend.addProject(PROJECT.id)
    backend.commit = async () => null
    const { writes, versions } = node(backend, { maxAttempts: 3 })
    const failure = await writes.apply(PROJECT, increment, AS_TESTER).catch((e: unknown) => e)
    expect(codeOf(failure)).toBe('STORE_UNAVAILABLE')
    expect(versions).toEqual([])
  })
})

describe('refusals send nothing', () => {
  it.each([
    ['wrong type', { content: { s: 'x' } }, write({ op: 'increment', path: ['s'], value: 1 }), 'NOT_A_NUMBER'],
    ['past the end of an array', { content: { l: [1] } }, write({ op: 'set', path: ['l', '5'], value: 1 }), 'INDEX_OUT_OF_RANGE'],
    ['through a scalar', { content: { s: 1 } }, write({ op: 'set', path: ['s', 'x'], value: 1 }), 'PATH_CONFLICT'],
    ['a 32-segment path through a number', { content: { 0: 1 } }, write({ op: 'increment', path: Array.from({ length: 32 }, () => '0'), value: 1 }), 'PATH_CONFLICT']
  ])('%s: the core\'s error, no transaction, no version', async (_name, { content }, resolved, code) => {
    const backend = new MingoBackend()
    backend.addProject(PROJECT.id, content as JsonObject)
    const { writes } = node(backend)
    expect(codeOf(await writes.apply(PROJECT, resolved, AS_TESTER).catch((e: unknown) => e))).toBe(code)
    expect(backend.entries).toEqual([])
    expect(backend.document(PROJECT.id)).toMatchObject({ version: 0, content })
  })

  it('a stale If-Match is 412 before the operation\'s own errors', async () => {
    const backend = new MingoBackend()
    backend.addProject(PROJECT.id, { s: 'x' })
    const { writes } = node(backend)
    const failure = await writes.apply(PROJECT, write({ op: 'increment', path: ['s'], value: 1 }), { ...AS_TESTER, ifMatch: [7] }).catch((e: unknown) => e)
    expect(codeOf(failure)).toBe('PRECONDITION_FAILED')
  })

  it.each([['*', '*' as const], ['the current version', [0]]])('If-None-Match matching (%s) is 412 and writes nothing; another version lets it through', async (_name, ifNoneMatch) => {
    const backend = new MingoBackend()
    backend.addProject(PROJECT.id, { n: 1 })
    const { writes } = node(backend)
    const failure = await writes.apply(PROJECT, write({ op: 'increment', path: ['n'], value: 1 }), { ...AS_TESTER, ifNoneMatch }).catch((e: unknown) => e)
    expect(codeOf(failure)).toBe('PRECONDITION_FAILED')
    expect(backend.entries).toEqual([])
    await writes.apply(PROJECT, write({ op: 'increment', path: ['n'], value: 1 }), { ...AS_TESTER, ifNoneMatch: [7] })
    expect(backend.document(PROJECT.id)).toMatchObject({ version: 1, content: { n: 2 } })
  })
})

describe('CONTENT_LIMIT in JSON bytes, as on the embedded store', () => {
  const dirs: string[] = []
  afterEach(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }) })

  /** The same operations on the SQLite store: accepted or refused the same way. */
  async function sqliteOutcomes (ops: ContentOperation[]): Promise<Array<string | number>> {
    const dataDir = mkdtempSync(join(tmpdir(), 'contentd-limit-'))
    dirs.push(dataDir)
    const store = openSqliteStore({ dataDir, contentLimitBytes: LIMIT, cacheBytes: 0 })
    await store.init()
    try {
      await store.createUser({ id: 'u1', username: 'alice', passwordHash: 'x', createdAt: PROJECT.createdAt })
      const project = await store.createProject({ id: PROJECT.id, ownerId: 'u1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: PROJECT.createdAt })
      const outcomes: Array<string | number> = []
      for (const op of ops) outcomes.push(await store.applyOperation(project, op, AS_TESTER).then(r => r.version, (e: unknown) => codeOf(e) ?? 'other'))
      return outcomes
    } finally {
      await store.close()
    }
  }

  it('an array of small numbers under the limit as JSON (6x larger as BSON) is accepted; past it, 413 on both stores', async () => {
    const zeros = Array.from({ length: 16_000 }, () => 0) // 32 KB of JSON
    // What the old store measured: over the limit as BSON, so it answered 413 (issue 28, A3).
    expect(BSON.calculateObjectSize({ zeros })).toBeGreaterThan(2 * LIMIT)
    const ops: ContentOperation[] = [
      { op: 'update', value: { zeros } },
      { op: 'set', path: ['more'], value: zeros.slice(0, 15_000) }, // 62.4 KB: still under 64 KiB
      { op: 'push', path: ['zeros'], value: 'x'.repeat(4000) }, // past it
      { op: 'delete', path: ['more'] },
      { op: 'push', path: ['zeros'], value: 'x'.repeat(4000) }
    ]
    const backend = new MingoBackend()
    backend.addProject(PROJECT.id)
    const { writes } = node(backend)
    const mongo: Array<string | number> = []
    for (const op of ops) mongo.push(await writes.apply(PROJECT, write(op), AS_TESTER).then(r => r.version, (e: unknown) => codeOf(e) ?? 'other'))
    expect(mongo).toEqual([1, 2, 'CONTENT_TOO_LARGE', 3, 4])
    expect(await sqliteOutcomes(ops)).toEqual(mongo)
  })
})
