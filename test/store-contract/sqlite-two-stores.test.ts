// The store contract, SQLite only: two stores on one data directory, as two processes.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CommitCounter } from '../../server/store/sqlite/lookup-cache.js'
import { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import { CONTRACT_CONTENT_LIMIT, DEFAULT_HISTORY } from '../support/stores.js'
import { AS_TEST, expectCode, inc, set, userRecord } from './contract.js'

describe('sqlite: two stores on one data directory (like two processes)', () => {
  let dataDir: string
  let first: SqliteStore
  let second: SqliteStore

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'contentd-contract-shared-'))
    // Caches on: each must notice the other's writes by version, never serve a stale document.
    // One process here, so one commit counter for both (see lookup-cache.ts).
    const commits = new CommitCounter()
    first = new SqliteStore({ dataDir, contentLimitBytes: CONTRACT_CONTENT_LIMIT, cacheBytes: 16 * 1024 * 1024, history: DEFAULT_HISTORY, commits })
    second = new SqliteStore({ dataDir, contentLimitBytes: CONTRACT_CONTENT_LIMIT, cacheBytes: 16 * 1024 * 1024, history: DEFAULT_HISTORY, commits })
  })
  afterAll(async () => {
    await first?.close()
    await second?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('interleaving 200 increments each ends at exactly 400, and each sees the other\'s writes', async () => {
    const owner = userRecord()
    await first.createUser(owner)
    const created = await first.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: 'shared', name: 'Shared', createdAt: new Date().toISOString() })
    const seenBySecond = await second.findProject(owner.username, 'shared')
    expect(seenBySecond).toEqual(created)
    const notified = { first: 0, second: 0 }
    first.onCommit(() => { notified.first += 1 })
    second.onCommit(() => { notified.second += 1 })

    // Strict alternation: every write must be visible to the other store at once.
    for (let i = 0; i < 100; i++) {
      const a = await first.applyOperation(created, inc('n'), AS_TEST)
      expect(await second.readContent(created.id), `second after first's write ${a.version}`).toMatchObject({ version: a.version, content: { n: a.version } })
      const b = await second.applyOperation(seenBySecond!, inc('n'), AS_TEST)
      expect(b.version, 'versions continue across stores').toBe(a.version + 1)
      expect(await first.readContent(created.id), `first after second's write ${b.version}`).toMatchObject({ version: b.version, content: { n: b.version } })
    }
    // Then both at once: 100 more each submitted in the same tick, two batches racing.
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0 ? first.applyOperation(created, inc('n'), AS_TEST) : second.applyOperation(seenBySecond!, inc('n'), AS_TEST)))
    expect(results.map(r => r.version).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => 201 + i))

    for (const store of [first, second]) {
      const snapshot = await store.readContent(created.id)
      expect(snapshot?.version).toBe(400)
      expect(snapshot?.content).toEqual({ n: 400 })
    }
    expect((await second.findProject(owner.username, 'shared'))?.version).toBe(400)
    // Each store notifies its own commits only; other processes' changes travel via Redis.
    expect(notified).toEqual({ first: 200, second: 200 })
  })

  it('a schema set through one store applies to writes through the other at once', async () => {
    const owner = userRecord()
    await first.createUser(owner)
    const project = await first.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: 'schema-shared', name: 'S', createdAt: new Date().toISOString() })
    await second.applyOperation(project, set('n', 1), AS_TEST)
    await first.putSchema(project.id, { revision: randomUUID(), schema: { properties: { n: { maximum: 1 } } }, setBy: '@x', setAt: new Date().toISOString() })
    await expectCode(second.applyOperation(project, inc('n'), AS_TEST), 'SCHEMA_VIOLATION', 'write through the other store')
    expect(await second.getSchema(project.id)).toMatchObject({ schema: { properties: { n: { maximum: 1 } } } })
    expect(await first.deleteSchema(project.id)).toBe(true)
    await second.applyOperation(project, inc('n'), AS_TEST)
    expect(await first.readContent(project.id)).toMatchObject({ version: 2, content: { n: 2 } })
  })

  it('a project deleted through one store is gone for the other', async () => {
    const owner = userRecord()
    await first.createUser(owner)
    const project = await first.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: 'doomed', name: 'Doomed', createdAt: new Date().toISOString() })
    await second.applyOperation(project, set('a', 1), AS_TEST)
    expect(await first.readContent(project.id)).toMatchObject({ version: 1, content: { a: 1 } })
    await second.deleteProject(project.id)
    expect(await first.readContent(project.id)).toBeNull()
    await expectCode(first.applyOperation(project, inc('n'), AS_TEST), 'PROJECT_NOT_FOUND', 'write through the other store')
  })
})
