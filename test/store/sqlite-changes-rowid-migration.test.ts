// The migration that rebuilds the change log as a rowid table (server/store/sqlite/migrations.ts,
// "The change log as a rowid table"): a store at the previous schema, built by the released
// migrations and filled with a real log (sizes partly unknown, NULL, as the release before
// sizes left them; keyed changes), upgrades with every row intact and answers as before; a
// store at every earlier schema version upgrades; a backup at the previous schema restores
// and upgrades at first start.
import Database from 'better-sqlite3'
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { restoreBackup } from '../../server/backup/restore.js'
import { MIGRATIONS } from '../../server/store/sqlite/migrations.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import type { ProjectRecord } from '../../server/store/types.js'
import { AS_TESTER, openSqliteStore } from '../support/stores.js'

/** The schema just before the rebuild: the count of migrations that precede it. */
const PREVIOUS = MIGRATIONS.findIndex(migration => typeof migration === 'string' && migration.includes('CREATE TABLE changes_rowid'))
const FILE = 'contentd.sqlite'
let root: string
const opened: SqliteStore[] = []

beforeEach(() => { root = mkdtempSync(join(tmpdir(), 'contentd-changes-rowid-')) })
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
  rmSync(root, { recursive: true, force: true })
})

function open (dataDir: string): SqliteStore {
  const store = openSqliteStore({ dataDir, contentLimitBytes: 8 << 20, cacheBytes: 8 << 20 })
  opened.push(store)
  return store
}

/** The released migrations up to `count`, run as database.ts runs them, on a new file. */
function storeAtSchema (dataDir: string, count: number): Database.Database {
  rmSync(dataDir, { recursive: true, force: true })
  mkdirSync(dataDir, { recursive: true })
  const db = new Database(join(dataDir, FILE))
  db.transaction(() => {
    for (const migration of MIGRATIONS.slice(0, count)) {
      if (typeof migration === 'string') db.exec(migration)
      else migration(db)
    }
    db.pragma(`user_version = ${count}`)
  })()
  return db
}

interface LogRow { project_id: string, version: number, bytes: number | null, idem_caller: string | null, idem_key: string | null, idem_fingerprint: string | null, entry: string }

const logRows = (db: Database.Database) => db.prepare('SELECT project_id, version, bytes, idem_caller, idem_key, idem_fingerprint, entry FROM changes ORDER BY project_id, version').all() as LogRow[]

/** A log with what the old layout holds: updates, multi-byte text, increments, keyed changes, a revert, two projects. */
async function writeLog (store: SqliteStore): Promise<ProjectRecord[]> {
  await store.createUser({ id: 'usr_1', username: 'alice', passwordHash: 'x', createdAt: '2026-01-01T00:00:00.000Z' })
  const a = await store.createProject({ id: 'prj_a', ownerId: 'usr_1', ownerName: 'alice', slug: 'a', name: 'a', createdAt: '2026-01-01T00:00:00.000Z' })
  const b = await store.createProject({ id: 'prj_b', ownerId: 'usr_1', ownerName: 'alice', slug: 'b', name: 'b', createdAt: '2026-01-01T00:00:00.000Z' })
  await store.applyOperation(a, { op: 'update', value: { n: 0, text: 'héllo wörld 🎉 日本語', list: [] } }, AS_TESTER)
  for (let i = 0; i < 40; i++) await store.applyOperation(a, { op: 'increment', path: ['n'], value: 1 }, AS_TESTER)
  await store.applyOperation(a, { op: 'set', path: ['text'], value: '€'.repeat(3000) }, { ...AS_TESTER, idempotency: { caller: 'key:k1', key: 'retry-1', fingerprint: 'f1' } })
  await store.applyOperation(a, { op: 'push', path: ['list'], value: 'ü' }, { ...AS_TESTER, idempotency: { caller: 'key:k1', key: 'retry-2', fingerprint: 'f2' } })
  // Larger than a page: the entry overflows.
  await store.applyOperation(a, { op: 'set', path: ['big'], value: 'ß'.repeat(20_000) }, AS_TESTER)
  await store.applyOperation(a, { op: 'revert', version: 10 }, AS_TESTER)
  await store.applyOperation(b, { op: 'set', path: ['x'], value: 1 }, AS_TESTER)
  return [a, b]
}

/** What the log answers: every page, past contents, remembered keys, path reads. */
async function answers (store: SqliteStore, [a, b]: ProjectRecord[]) {
  const pages = []
  for (const [project, since, limit] of [[a, 0, 1000], [a, 5, 3], [a, 40, 10], [b, 0, 10]] as const) {
    pages.push(await store.readChanges(project!, since, limit))
    const json = await store.readChangesJson(project!, since, limit)
    pages.push({ ...json, entries: json.entries.map(e => ({ version: e.version, bytes: e.bytes, stored: e.stored.toString() })) })
  }
  const past = []
  for (const version of [1, 10, 41, 42, 43, 44]) past.push((await store.readContentAt(a!.id, version)).content)
  return {
    pages,
    past,
    current: (await store.readContent(a!.id))?.content,
    keys: [
      await store.findLoggedIdempotency({ projectId: a!.id, caller: 'key:k1', key: 'retry-1' }),
      await store.findLoggedIdempotency({ projectId: a!.id, caller: 'key:k1', key: 'retry-2' }),
      await store.findLoggedIdempotency({ projectId: a!.id, caller: 'key:k1', key: 'never' })
    ],
    paths: await store.readPathEntries(a!, 'list', 0, 100)
  }
}

/** The file of `from` copied row by row into a new file at the previous schema (the released migrations). */
function copyToPreviousSchema (from: string, to: string): void {
  const old = storeAtSchema(to, PREVIOUS)
  try {
    old.prepare('ATTACH DATABASE ? AS src').run(join(from, FILE))
    const tables = old.prepare("SELECT name FROM src.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[]
    old.transaction(() => {
      for (const table of tables) {
        // The previous schema's columns: what later migrations added is not in it (the path
        // index's `versions` is NULL for rows written one change at a time, as here).
        const columns = (old.prepare(`PRAGMA main.table_info(${table})`).all() as Array<{ name: string }>).map(c => c.name).join(', ')
        old.exec(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM src.${table}`)
      }
      // The entries of before sizes were kept.
      old.exec('UPDATE changes SET bytes = NULL WHERE version % 3 = 0')
    })()
    old.exec('DETACH DATABASE src')
  } finally {
    old.close()
  }
}

/** A log written by today's store, copied into `dir` at the previous schema; what it answered. */
async function loggedAtPreviousSchema (dir: string): Promise<{ projects: Awaited<ReturnType<typeof writeLog>>, before: Awaited<ReturnType<typeof answers>> }> {
  const fresh = join(root, 'fresh')
  const store = open(fresh)
  const projects = await writeLog(store)
  const before = await answers(store, projects)
  await store.close()
  opened.splice(0)
  copyToPreviousSchema(fresh, dir)
  return { projects, before }
}

describe('the change log rebuilt as a rowid table', () => {
  it('upgrades a store at the previous schema: every entry, version, size and key intact, the same answers', async () => {
    const upgraded = join(root, 'old')
    const { projects, before } = await loggedAtPreviousSchema(upgraded)
    const old = new Database(join(upgraded, FILE))
    // It is the old layout: WITHOUT ROWID, the size index, sizes partly unknown.
    expect(old.prepare("SELECT sql FROM sqlite_master WHERE name = 'changes'").pluck().get()).toMatch(/WITHOUT ROWID/)
    expect(old.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'changes_by_size'").pluck().get()).toBe(1)
    const rowsBefore = logRows(old)
    old.close()
    expect(rowsBefore.filter(row => row.bytes === null).length).toBeGreaterThan(10)
    expect(rowsBefore.filter(row => row.idem_key !== null)).toHaveLength(2)
    expect(rowsBefore.length).toBeGreaterThan(40)

    const reopened = open(upgraded)
    // The rewrite went through the WAL; the start gave that space back (database.ts).
    expect(statSync(join(upgraded, `${FILE}-wal`)).size).toBe(0)
    expect(await answers(reopened, projects)).toEqual(before)
    const db = new Database(join(upgraded, FILE), { readonly: true })
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length)
      // Every row, with its size filled in as a commit computes it (Buffer.byteLength: UTF-8).
      expect(logRows(db)).toEqual(rowsBefore.map(row => ({ ...row, bytes: Buffer.byteLength(row.entry) })))
      expect(rowsBefore.some(row => Buffer.byteLength(row.entry) !== row.entry.length)).toBe(true)
      // The new shape: a rowid table, small columns before the entry, one unique index, the partial key index.
      expect(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'changes'").pluck().get()).not.toMatch(/WITHOUT ROWID/)
      expect((db.prepare('PRAGMA table_info(changes)').all() as Array<{ name: string }>).map(c => c.name))
        .toEqual(['project_id', 'version', 'bytes', 'idem_caller', 'idem_key', 'idem_fingerprint', 'entry'])
      expect(db.prepare('PRAGMA index_list(changes)').all()).toEqual(expect.arrayContaining([
        expect.objectContaining({ name: 'changes_by_version', unique: 1, partial: 0 }),
        expect.objectContaining({ name: 'changes_by_idempotency_key', unique: 0, partial: 1 })
      ]))
      expect(db.prepare('PRAGMA index_list(changes)').all()).toHaveLength(2)
      expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name IN ('changes_by_size', 'changes_rowid')").pluck().get()).toBe(0)
      expect(db.prepare('PRAGMA foreign_key_list(changes)').all()).toEqual([expect.objectContaining({ table: 'projects', from: 'project_id', to: 'id', on_delete: 'CASCADE' })])
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
      expect(db.pragma('foreign_key_check')).toEqual([])
    } finally {
      db.close()
    }
    // The log goes on, and deleting a project still deletes its entries.
    const [a, b] = projects
    expect(await reopened.applyOperation(a!, { op: 'increment', path: ['n'], value: 1 }, AS_TESTER)).toEqual({ version: 46 })
    expect((await reopened.readChanges(a!, 45, 10)).changes.map(c => c.version)).toEqual([46])
    await expect(reopened.applyOperation(b!, { op: 'set', path: ['x'], value: 2 }, AS_TESTER)).resolves.toEqual({ version: 2 })
    await reopened.deleteProject(b!.id)
    const left = new Database(join(upgraded, FILE), { readonly: true })
    try {
      expect(left.prepare("SELECT count(*) FROM changes WHERE project_id = 'prj_b'").pluck().get()).toBe(0)
      expect(left.prepare("SELECT count(*) FROM changes WHERE project_id = 'prj_a'").pluck().get()).toBe(46)
    } finally {
      left.close()
    }
  })

  it('upgrades a store at every earlier schema version to the same change log', async () => {
    for (let count = 1; count <= PREVIOUS; count++) {
      const dataDir = join(root, `v${count}`)
      storeAtSchema(dataDir, count).close()
      const store = open(dataDir)
      await store.createUser({ id: 'usr_1', username: 'alice', passwordHash: 'x', createdAt: '2026-01-01T00:00:00.000Z' })
      const project = await store.createProject({ id: 'prj_1', ownerId: 'usr_1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: '2026-01-01T00:00:00.000Z' })
      await store.applyOperation(project, { op: 'set', path: ['é'], value: 'ü' }, AS_TESTER)
      expect((await store.readChanges(project, 0, 10)).changes.map(c => [c.version, c.op])).toEqual([[1, 'set']])
      const db = new Database(join(dataDir, FILE), { readonly: true })
      try {
        expect((db.prepare('PRAGMA table_info(changes)').all() as Array<{ name: string }>).map(c => c.name), `from schema ${count}`)
          .toEqual(['project_id', 'version', 'bytes', 'idem_caller', 'idem_key', 'idem_fingerprint', 'entry'])
        expect(db.prepare('SELECT bytes = octet_length(entry) FROM changes').pluck().get()).toBe(1)
        expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length)
      } finally {
        db.close()
      }
    }
  })

  it('restores a backup made at the previous schema, and upgrades it at first start', async () => {
    const backup = join(root, 'backup')
    const { projects, before } = await loggedAtPreviousSchema(backup)

    const target = join(root, 'restored')
    const result = restoreBackup({ dataDir: target, file: join(backup, FILE), force: false })
    expect(result).toMatchObject({ users: 1, projects: 2 })
    expect(await answers(open(target), projects)).toEqual(before)
  })
})
