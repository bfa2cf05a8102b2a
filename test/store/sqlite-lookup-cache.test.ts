// The embedded store remembers credentials, users, projects and member roles between
// requests. These tests check that what it remembers never outlives a change: made through
// another store on the same file (another process, as far as SQLite can tell), or through
// this one.
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CommitCounter } from '../../server/store/sqlite/lookup-cache.js'
import { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import type { ApiKeyRecord, ProjectRecord } from '../../server/store/types.js'
import { AS_TESTER, DEFAULT_HISTORY } from '../support/stores.js'

let dataDir: string
const opened: SqliteStore[] = []
/** This process's counter: every store opened here shares it, as the stores of a process must. */
const commits = new CommitCounter()

function open (): SqliteStore {
  const store = new SqliteStore({ dataDir, contentLimitBytes: 1024 * 1024, cacheBytes: 1024 * 1024, history: DEFAULT_HISTORY, commits })
  opened.push(store)
  return store
}

const NOW = '2026-01-01T00:00:00.000Z'

function key (id: string, userId: string): ApiKeyRecord {
  return { id, userId, name: id, prefix: 'cdk_x', keyHash: `hash-${id}`, permission: 'write', projectIds: null, paths: null, ops: null, expiresAt: null, createdAt: NOW }
}

/** Alice (owner of "demo"), Bob (no role yet), one key of Alice's; returned with the project. */
async function seed (store: SqliteStore): Promise<ProjectRecord> {
  await store.createUser({ id: 'u_alice', username: 'alice', passwordHash: 'x', createdAt: NOW })
  await store.createUser({ id: 'u_bob', username: 'bob', passwordHash: 'x', createdAt: NOW })
  await store.createApiKey(key('k1', 'u_alice'))
  await store.createSession({ tokenHash: 'session-1', userId: 'u_alice', createdAt: NOW, expiresAt: '2099-01-01T00:00:00.000Z' })
  return store.createProject({ id: 'p1', ownerId: 'u_alice', ownerName: 'alice', slug: 'demo', name: 'Demo', createdAt: NOW })
}

beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'contentd-lookups-')) })
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('SqliteStore look-ups across two stores on one file', () => {
  it('a key revoked through the other store is gone on the very next look-up', async () => {
    const a = open()
    const b = open()
    await seed(a)
    expect((await b.findApiKeyByHash('hash-k1'))?.id).toBe('k1')
    expect((await b.findApiKeyByHash('hash-k1'))?.id).toBe('k1')
    expect(await a.deleteApiKey('u_alice', 'k1')).toBe(true)
    expect(await b.findApiKeyByHash('hash-k1')).toBeNull()
  })

  it('a session ended through the other store is gone on the very next look-up', async () => {
    const a = open()
    const b = open()
    await seed(a)
    expect((await b.findSession('session-1'))?.userId).toBe('u_alice')
    await a.deleteSession('session-1')
    expect(await b.findSession('session-1')).toBeNull()
  })

  it('member roles and projects follow changes made through the other store', async () => {
    const a = open()
    const b = open()
    const project = await seed(a)
    expect(await b.findMemberRole(project.id, 'u_bob')).toBeNull()
    await a.setMember(project.id, 'u_bob', 'editor')
    expect(await b.findMemberRole(project.id, 'u_bob')).toBe('editor')
    await a.setMember(project.id, 'u_bob', 'viewer')
    expect(await b.findMemberRole(project.id, 'u_bob')).toBe('viewer')
    await a.removeMember(project.id, 'u_bob')
    expect(await b.findMemberRole(project.id, 'u_bob')).toBeNull()

    expect((await b.findProject('alice', 'demo'))?.id).toBe('p1')
    await a.deleteProject(project.id)
    expect(await b.findProject('alice', 'demo')).toBeNull()
  })

  it('a project found earlier shows versions committed by the other store', async () => {
    const a = open()
    const b = open()
    const project = await seed(a)
    expect((await b.findProject('alice', 'demo'))?.version).toBe(0)
    await a.applyOperation(project, { op: 'increment', path: ['n'], value: 1 }, AS_TESTER)
    expect((await b.findProject('alice', 'demo'))?.version).toBe(1)
  })
})

describe('SqliteStore look-ups and another process', () => {
  // A plain connection stands for another process: it commits without this module knowing.
  // The store checks SQLite once per event-loop callback, and a request that comes after
  // the revocation is read in a later callback than the revocation: so is the look-up here.
  const nextCallback = () => new Promise(resolve => setImmediate(resolve))

  it('a key deleted by another connection is gone for the next request', async () => {
    const store = open()
    await seed(store)
    expect((await store.findApiKeyByHash('hash-k1'))?.id).toBe('k1')
    expect(await store.findMemberRole('p1', 'u_bob')).toBeNull()
    await nextCallback()
    expect((await store.findApiKeyByHash('hash-k1'))?.id).toBe('k1')
    const other = new Database(join(dataDir, 'contentd.sqlite'))
    try {
      other.prepare('DELETE FROM api_keys WHERE id = ?').run('k1')
      other.prepare("DELETE FROM members WHERE project_id = 'p1'").run()
      other.prepare("INSERT INTO members (project_id, user_id, role) VALUES ('p1', 'u_bob', 'viewer')").run()
    } finally {
      other.close()
    }
    await nextCallback()
    expect(await store.findApiKeyByHash('hash-k1')).toBeNull()
    expect(await store.findMemberRole('p1', 'u_bob')).toBe('viewer')
  })
})

describe('SqliteStore look-ups after its own writes', () => {
  it('forgets revoked keys, ended sessions, changed roles and deleted projects at once', async () => {
    const store = open()
    const project = await seed(store)
    expect((await store.findApiKeyByHash('hash-k1'))?.id).toBe('k1')
    expect((await store.findSession('session-1'))?.userId).toBe('u_alice')
    expect(await store.findMemberRole(project.id, 'u_bob')).toBeNull()
    expect((await store.findProject('alice', 'demo'))?.id).toBe('p1')

    await store.deleteApiKey('u_alice', 'k1')
    expect(await store.findApiKeyByHash('hash-k1')).toBeNull()
    await store.deleteSession('session-1')
    expect(await store.findSession('session-1')).toBeNull()
    await store.setMember(project.id, 'u_bob', 'editor')
    expect(await store.findMemberRole(project.id, 'u_bob')).toBe('editor')
    await store.deleteProject(project.id)
    expect(await store.findProject('alice', 'demo')).toBeNull()
  })

  it('a project found earlier shows the versions this store commits, as a new record', async () => {
    const store = open()
    const project = await seed(store)
    const before = await store.findProject('alice', 'demo')
    await store.applyOperation(project, { op: 'increment', path: ['n'], value: 1 }, AS_TESTER)
    await store.applyOperation(project, { op: 'increment', path: ['n'], value: 1 }, AS_TESTER)
    const after = await store.findProject('alice', 'demo')
    expect(after?.version).toBe(2)
    expect(before?.version).toBe(0)
  })

  it('a key created after a failed look-up is found', async () => {
    const store = open()
    await seed(store)
    expect(await store.findApiKeyByHash('hash-k2')).toBeNull()
    await store.createApiKey(key('k2', 'u_alice'))
    expect((await store.findApiKeyByHash('hash-k2'))?.id).toBe('k2')
  })
})

describe('SqliteStore key pages name only the scoped projects that still exist', () => {
  // Key pages name scoped projects from memory (by id); a deleted project must drop out of
  // the very next page, whoever deleted it.
  const nextCallback = () => new Promise(resolve => setImmediate(resolve))
  const scopeOf = async (store: SqliteStore) => (await store.listApiKeys('u_alice', { after: null, limit: 10 }))
    .find(k => k.id === 'k2')?.projectNames?.map(p => `${p.ownerName}/${p.slug}`)

  /** Seed plus a second project and a key scoped to both. */
  async function seedScoped (store: SqliteStore): Promise<void> {
    await seed(store)
    await store.createProject({ id: 'p2', ownerId: 'u_alice', ownerName: 'alice', slug: 'other', name: 'Other', createdAt: NOW })
    await store.createApiKey({ ...key('k2', 'u_alice'), projectIds: ['p1', 'p2'] })
  }

  it('after this store deletes one', async () => {
    const store = open()
    await seedScoped(store)
    expect(await scopeOf(store)).toEqual(['alice/demo', 'alice/other'])
    expect(await scopeOf(store)).toEqual(['alice/demo', 'alice/other'])
    await store.deleteProject('p1')
    expect(await scopeOf(store)).toEqual(['alice/other'])
  })

  it('after another store on the file deletes one', async () => {
    const a = open()
    const b = open()
    await seedScoped(a)
    expect(await scopeOf(b)).toEqual(['alice/demo', 'alice/other'])
    await a.deleteProject('p2')
    expect(await scopeOf(b)).toEqual(['alice/demo'])
  })

  it('after another connection deletes one, from the next request on', async () => {
    const store = open()
    await seedScoped(store)
    expect(await scopeOf(store)).toEqual(['alice/demo', 'alice/other'])
    await nextCallback()
    const other = new Database(join(dataDir, 'contentd.sqlite'))
    try {
      other.prepare("DELETE FROM projects WHERE id = 'p1'").run()
    } finally {
      other.close()
    }
    await nextCallback()
    expect(await scopeOf(store)).toEqual(['alice/other'])
  })
})
