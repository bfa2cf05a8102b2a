// The embedded store's layout of content and history (server/store/sqlite/content-log.ts):
// one `changes` row per version, checkpoints that bound every replay, retention that deletes
// rows without changing an answer, the migration from the layout before the change log, and
// HISTORY=off. The store contract suite checks the answers; these tests also look at the rows.
import Database from 'better-sqlite3'
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import type { JsonObject } from '../../shared/json.js'
import { applyOperation, type Operation } from '../../shared/operations.js'
import { CHECKPOINT_ENTRIES, CHECKPOINT_MIN_BYTES, pruneStep } from '../../server/store/history-policy.js'
import { MIGRATIONS } from '../../server/store/sqlite/migrations.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import type { HistoryOptions, ProjectRecord } from '../../server/store/types.js'
import { AS_TESTER, DEFAULT_HISTORY, openSqliteStore } from '../support/stores.js'

const LIMIT = 8 * 1024 * 1024
let dataDir: string
const opened: SqliteStore[] = []

function open (cacheBytes = 64 * 1024 * 1024, history: HistoryOptions = DEFAULT_HISTORY): SqliteStore {
  const store = openSqliteStore({ dataDir, contentLimitBytes: LIMIT, cacheBytes, history })
  opened.push(store)
  return store
}

/** A read-only look at the file, as another process would have. */
function inspect<T> (read: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'contentd.sqlite'), { readonly: true })
  try {
    return read(db)
  } finally {
    db.close()
  }
}

interface Rows { entries: Array<{ version: number, bytes: number }>, checkpoints: Array<{ version: number, bytes: number | null }>, floor: number }

function rowsOf (projectId: string): Rows {
  return inspect(db => ({
    entries: db.prepare('SELECT version, length(entry) AS bytes FROM changes WHERE project_id = ? ORDER BY version').all(projectId) as Rows['entries'],
    checkpoints: db.prepare('SELECT version, length(content) AS bytes FROM checkpoints WHERE project_id = ? ORDER BY version').all(projectId) as Rows['checkpoints'],
    floor: (db.prepare('SELECT history_floor AS f FROM projects WHERE id = ?').get(projectId) as { f: number }).f
  }))
}

function largeDocument (): JsonObject {
  const items = Array.from({ length: 1500 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'] }))
  return { counter: 0, items, nested: { list: [1, 2, 3] } }
}

async function setup (store: SqliteStore, content: JsonObject = largeDocument()): Promise<ProjectRecord> {
  await store.createUser({ id: 'usr_1', username: 'alice', passwordHash: 'x', createdAt: new Date().toISOString() })
  const project = await store.createProject({ id: 'prj_1', ownerId: 'usr_1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: new Date().toISOString() })
  await store.applyOperation(project, { op: 'update', value: content }, AS_TESTER)
  return project
}

const p = (text: string) => text.split('.')

/** A mix of operations on the large document, some of which fail (push onto a number). */
function operation (i: number): Operation {
  switch (i % 6) {
    case 0: return { op: 'increment', path: p('counter'), value: 1 }
    case 1: return { op: 'set', path: p(`settings.k${i % 7}`), value: { i, text: `value ${i}` } }
    case 2: return { op: 'push', path: p('nested.list'), value: i }
    case 3: return { op: 'delete', path: p(`items.${i % 50}`) }
    case 4: return { op: 'insert', path: p('nested.list'), value: -i, index: 1 }
    default: return { op: 'push', path: p('counter'), value: i }
  }
}

/** Sends `count` operations in bursts that share group commits; updates the model; returns successes. */
async function drive (store: SqliteStore, project: ProjectRecord, count: number, model: JsonObject, make = operation): Promise<number> {
  let successes = 0
  for (let start = 0; start < count; start += 20) {
    const burst = Array.from({ length: Math.min(20, count - start) }, (_, j) => make(start + j))
    const results = await Promise.allSettled(burst.map(op => store.applyOperation(project, op, AS_TESTER)))
    results.forEach((result, j) => {
      if (result.status === 'fulfilled') {
        applyOperation(model, burst[j] as Operation)
        successes++
      } else {
        expect(() => applyOperation(structuredClone(model), burst[j] as Operation)).toThrow()
      }
    })
  }
  return successes
}

beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'contentd-log-')) })
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('the change log in the file', () => {
  it('has one row per version, and another store on the file rebuilds the same document from it', async () => {
    const writer = open()
    const project = await setup(writer)
    const model = largeDocument()
    const successes = await drive(writer, project, 120, model)
    const rows = rowsOf(project.id)
    expect(rows.entries.map(e => e.version)).toEqual(Array.from({ length: 1 + successes }, (_, i) => i + 1))

    const reader = open(0)
    const seen = await reader.readContent(project.id)
    expect(seen?.version).toBe(1 + successes)
    expect(seen?.content).toEqual(model)
    expect(JSON.parse(seen?.json ?? 'null')).toEqual(model)
    expect((await writer.readContent(project.id))?.content).toEqual(model)
    // The other store reads the same history.
    expect((await reader.readChanges(project, 0, 1000)).changes).toEqual((await writer.readChanges(project, 0, 1000)).changes)
  })

  it('logs each operation as it ran, even when a later one in the batch changes its value', async () => {
    const writer = open()
    const project = await setup(writer)
    // One group commit: the push mutates the object the set inserted. Logging the set's value
    // at commit time would replay {b:[1,2]} and then push 2 again.
    await Promise.all([
      writer.applyOperation(project, { op: 'set', path: p('box'), value: { b: [1] } }, AS_TESTER),
      writer.applyOperation(project, { op: 'push', path: p('box.b'), value: 2 }, AS_TESTER)
    ])
    const changes = (await writer.readChanges(project, 1, 10)).changes
    expect(changes.map(c => c.value)).toEqual([{ b: [1] }, 2])
    const rebuilt = await open(0).readContent(project.id)
    expect(rebuilt?.content.box).toEqual({ b: [1, 2] })
  })

  it('stores an update once: its version is a checkpoint that points at the entry', async () => {
    const store = open()
    const project = await setup(store)
    await drive(store, project, 30, largeDocument())
    const replacement = { ...largeDocument(), replaced: true }
    const { version } = await store.applyOperation(project, { op: 'update', value: structuredClone(replacement) }, AS_TESTER)
    const rows = rowsOf(project.id)
    expect(rows.checkpoints.find(c => c.version === version)).toEqual({ version, bytes: null })
    expect((await open(0).readContent(project.id))?.content).toEqual(replacement)
    await store.applyOperation(project, { op: 'increment', path: p('counter'), value: 1 }, AS_TESTER)
    expect((await open(0).readContent(project.id))?.content).toEqual({ ...replacement, counter: 1 })
    expect((await open(0).readContentAt(project.id, version)).content).toEqual(replacement)
  })

  it('bounds every replay: at most CHECKPOINT_ENTRIES entries, or about a document\'s size of them, after a checkpoint', async () => {
    const store = open(0)
    const project = await setup(store, { counter: 0, blob: 'y'.repeat(256 * 1024) })
    // Small entries on a 256 KiB document: the count rule...
    const model: JsonObject = { counter: 0, blob: 'y'.repeat(256 * 1024) }
    await drive(store, project, 2500, model, () => ({ op: 'increment', path: p('counter'), value: 1 }))
    // ...then large entries: the size rule.
    await drive(store, project, 100, model, i => ({ op: 'set', path: p(`big${i % 5}`), value: 'z'.repeat(6000) }))
    const { entries, checkpoints } = rowsOf(project.id)
    expect(checkpoints.length).toBeGreaterThan(3)
    const current = entries.at(-1)!.version
    const documentBytes = Buffer.byteLength(JSON.stringify(model))
    const largestEntry = Math.max(...entries.map(e => e.bytes))
    let worstCount = 0
    for (let version = 1; version <= current; version++) {
      const base = checkpoints.filter(c => c.version <= version).at(-1)
      const replayed = entries.filter(e => e.version > (base?.version ?? 0) && e.version <= version)
      worstCount = Math.max(worstCount, replayed.length)
      expect(replayed.length, `entries replayed for version ${version}`).toBeLessThanOrEqual(CHECKPOINT_ENTRIES)
      // What the checkpoint parses (a marker's content is its update's entry), then the entries.
      const baseBytes = base === undefined ? 2 : base.bytes ?? entries.find(e => e.version === base.version)!.bytes
      const bytes = replayed.reduce((sum, e) => sum + e.bytes, 0)
      expect(bytes, `bytes replayed for version ${version}`).toBeLessThanOrEqual(Math.max(baseBytes, CHECKPOINT_MIN_BYTES) + largestEntry)
      expect(baseBytes).toBeLessThanOrEqual(documentBytes + 6000 * 5)
    }
    expect(worstCount, 'the count rule was reached').toBeGreaterThan(CHECKPOINT_ENTRIES / 2)
    expect((await store.readContent(project.id))?.content).toEqual(model)
    expect((await store.readContentAt(project.id, 1500)).content.counter).toBe(1499)
  })

  it('answers past versions alike from cached checkpoints, in any order, and forgets them with the project', async () => {
    const cached = open()
    const project = await setup(cached)
    let model = largeDocument()
    const models = new Map<number, string>([[1, JSON.stringify(model)]])
    // Each op alone, so each version's model is known; an update in the middle adds a checkpoint.
    for (let i = 0; i < 60; i++) {
      const op: Operation = i === 30 ? { op: 'update', value: { ...largeDocument(), replaced: i } } : operation(i)
      try {
        const { version } = await cached.applyOperation(project, structuredClone(op), AS_TESTER)
        model = applyOperation(model, structuredClone(op))
        models.set(version, JSON.stringify(model))
      } catch (e) {
        expect(e).toBeInstanceOf(ContentdError)
      }
    }
    const versions = [...models.keys()]
    const uncached = open(0)
    // Backwards, forwards, and each twice: a read never changes what a later one starts from.
    for (const version of [...versions].reverse().concat(versions, versions.filter((_, i) => i % 3 === 0))) {
      const answer = await cached.readContentAt(project.id, version)
      // Compared as booleans: a failure would print two 60 KiB documents.
      expect(answer.json === models.get(version), `version ${version}`).toBe(true)
      expect(JSON.stringify(answer.content) === models.get(version), `version ${version}'s content`).toBe(true)
      expect((await uncached.readContentAt(project.id, version)).json === models.get(version), `version ${version}, uncached`).toBe(true)
    }
    // The same id again, with other content: nothing of the old project is answered.
    await cached.deleteProject(project.id)
    const again = await cached.createProject({ id: project.id, ownerId: 'usr_1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: new Date().toISOString() })
    await cached.applyOperation(again, { op: 'update', value: { other: true } }, AS_TESTER)
    await cached.applyOperation(again, { op: 'increment', path: p('n'), value: 1 }, AS_TESTER)
    expect((await cached.readContentAt(project.id, 1)).content).toEqual({ other: true })
  })
})

describe('retention in the file', () => {
  it('deletes old rows as checkpoints are added, raises history_floor, and never changes an answer', async () => {
    const store = open(1024 * 1024, { limit: 5, enabled: true })
    const project = await setup(store, {})
    const model: JsonObject = {}
    await drive(store, project, 3000, model, i => ({ op: 'push', path: p('list'), value: { i, pad: 'p'.repeat(40) } }))
    const current = 3001
    const { entries, checkpoints, floor } = rowsOf(project.id)
    // Physically: far fewer rows than versions (at most a checkpoint interval more than kept),
    // and nothing an answerable version needs is gone.
    expect(entries.length).toBeLessThanOrEqual(5 + CHECKPOINT_ENTRIES + 20)
    expect(floor).toBeGreaterThan(1000)
    expect(floor).toBeLessThanOrEqual(current - 5)
    expect(checkpoints[0]!.version).toBe(floor)
    expect(entries[0]!.version).toBeLessThanOrEqual(floor + 1)
    expect((await store.readChanges(project, current - 5, 10)).changes).toHaveLength(5)
    await expect(store.readChanges(project, current - 6, 10)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
  })

  it('prunes the path index in bulk, once as many versions as are kept have left: bounded, and every path read the same', async () => {
    const store = open(1024 * 1024, { limit: 5, enabled: true })
    const project = await setup(store, {})
    const model: JsonObject = {}
    // Two paths, each written every other version: 2 index rows per version.
    await drive(store, project, 4000, model, i => ({ op: 'increment', path: p(i % 2 === 0 ? 'even' : 'odd'), value: 1 }))
    const current = 4001
    // The oldest answerable version: the stored floor, or the newest 5 (the limit) past it.
    const floor = Math.max(rowsOf(project.id).floor, current - 5)
    const paths = inspect(db => db.prepare('SELECT version FROM change_paths WHERE project_id = ? ORDER BY version').pluck().all(project.id) as number[])
    // Kept: the retained versions, and at most one bulk's worth below the floor waiting.
    expect(paths.length).toBeGreaterThan(0)
    expect(paths.length).toBeLessThanOrEqual(2 * CHECKPOINT_ENTRIES + 5 + CHECKPOINT_ENTRIES + 20)
    expect(paths[0]).toBeGreaterThan(current - 2 * CHECKPOINT_ENTRIES - CHECKPOINT_ENTRIES - 30)
    // Rows below the floor may wait; no read sees them.
    const evens = await store.readPathEntries(project, 'even', floor, 1000)
    expect(evens.entries.map(e => e.version)).toEqual(Array.from({ length: current - floor }, (_, i) => floor + 1 + i).filter(v => v % 2 === 0))
    await expect(store.readPathEntries(project, 'even', floor - 1, 100)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
  })

  it('indexes a group commit\'s paths in one row each (path-index.ts), and a revert inside it cuts the unit', async () => {
    const store = open(1024 * 1024, { limit: 0, enabled: true })
    const project = await setup(store, { n: 0, m: 0 })
    const writes: Array<Promise<unknown>> = []
    for (let i = 0; i < 6; i++) writes.push(store.applyOperation(project, { op: 'increment', path: p(i % 3 === 2 ? 'm' : 'n'), value: 1 }, AS_TESTER))
    // Reads the log inside the transaction: what came before it is flushed as a unit.
    writes.push(store.applyOperation(project, { op: 'revert', version: 1 }, AS_TESTER))
    writes.push(store.applyOperation(project, { op: 'increment', path: p('n'), value: 1 }, AS_TESTER))
    await Promise.all(writes)
    const rows = inspect(db => db.prepare('SELECT path, version, versions FROM change_paths WHERE project_id = ? ORDER BY version, path').all(project.id))
    expect(rows).toEqual([
      { path: '', version: 1, versions: null },
      { path: 'm', version: 7, versions: '3,0' },
      { path: 'n', version: 7, versions: '5,4,2,1' },
      { path: '', version: 9, versions: '1' },
      { path: 'n', version: 9, versions: null }
    ])
    expect((await store.readPathEntries(project, 'n', 0, 10)).entries.map(e => e.version)).toEqual([1, 2, 3, 5, 6, 8, 9])
    expect((await store.readPathEntries(project, 'm', 3, 2)).entries.map(e => e.version)).toEqual([4, 7])
  })

  it('deletes in bulk: the floor moves by at least a tenth of the limit, the rows stay bounded, every answer exact', async () => {
    const limit = 1000
    const store = open(1024 * 1024, { limit, enabled: true })
    const project = await setup(store, {})
    const floors: number[] = []
    let current = 1
    // Small entries on a small document: a checkpoint every few dozen versions, far more
    // often than pruneStep(1000) = 100 versions.
    for (let burst = 0; burst < 150; burst++) {
      await drive(store, project, 20, {}, () => ({ op: 'increment', path: p('n'), value: 1 }))
      current += 20
      floors.push(rowsOf(project.id).floor)
    }
    expect(pruneStep(limit)).toBe(100)
    const moves = floors.slice(1).map((floor, i) => floor - floors[i]!).filter(move => move > 0)
    expect(moves.length).toBeGreaterThan(5)
    // The first prune of this process may be any size; each later one waited for a bulk.
    for (const move of moves.slice(1)) expect(move).toBeGreaterThanOrEqual(pruneStep(limit))
    const { entries, checkpoints, floor } = rowsOf(project.id)
    expect(floor).toBeLessThanOrEqual(current - limit)
    // At most the limit, a bulk and two checkpoint intervals (CHECKPOINT_MIN_BYTES of entries each).
    expect(entries.length).toBeLessThanOrEqual(limit + pruneStep(limit) + 2 * CHECKPOINT_MIN_BYTES / 50)
    expect(checkpoints[0]!.version).toBe(floor)
    // The answers are the limit's, wherever the rows stand.
    expect((await store.readChanges(project, current - limit, 10)).changes[0]!.version).toBe(current - limit + 1)
    await expect(store.readChanges(project, current - limit - 1, 10)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
    await expect(store.readContentAt(project.id, current - limit - 1)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
    expect((await store.readContentAt(project.id, current - limit)).content).toEqual({ n: current - limit - 1 })
  })

  it('a larger HISTORY_LIMIT after a restart does not bring pruned history back', async () => {
    const first = open(1024 * 1024, { limit: 5, enabled: true })
    const project = await setup(first, {})
    await drive(first, project, 600, {}, i => ({ op: 'set', path: p(`k${i % 10}`), value: 'v'.repeat(500) }))
    await first.close()
    const { floor } = rowsOf(project.id)
    expect(floor).toBeGreaterThan(0)
    const reopened = open(1024 * 1024, { limit: 100_000, enabled: true })
    expect((await reopened.readChanges(project, floor, 1000)).changes.length).toBe(601 - floor)
    await expect(reopened.readChanges(project, floor - 1, 10)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
    await expect(reopened.readContentAt(project.id, floor - 1)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
    expect((await reopened.readContentAt(project.id, floor)).version).toBe(floor)
  })
})

describe('HISTORY=off (the benchmark\'s reference)', () => {
  it('records no entries, keeps one checkpoint per project, and answers only the current version', async () => {
    const store = open(1024 * 1024, { limit: 10_000, enabled: false })
    const project = await setup(store, { n: 0 })
    const model: JsonObject = { n: 0 }
    await drive(store, project, 100, model, () => ({ op: 'increment', path: p('n'), value: 1 }))
    const rows = rowsOf(project.id)
    expect(rows.entries).toEqual([])
    expect(rows.checkpoints).toHaveLength(1)
    expect(rows.checkpoints[0]!.version).toBe(101)
    expect(await store.readChanges(project, 101, 10)).toEqual({ version: 101, changes: [], more: false })
    await expect(store.readChanges(project, 100, 10)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
    await expect(store.readContentAt(project.id, 100)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
    expect((await open(0, { limit: 10_000, enabled: false }).readContent(project.id))?.content).toEqual(model)
    // Turned on again, history starts where it was off.
    await store.close()
    const on = open()
    await on.applyOperation(project, { op: 'increment', path: p('n'), value: 1 }, AS_TESTER)
    expect((await on.readChanges(project, 101, 10)).changes.map(c => c.version)).toEqual([102])
    await expect(on.readChanges(project, 100, 10)).rejects.toBeInstanceOf(ContentdError)
  })
})

describe('migration from the layout before the change log', () => {
  it('starts each project\'s history at its version, with its content (snapshot + old log) as a checkpoint', async () => {
    // A file as the previous release left it: schema version 2, a snapshot and logged operations.
    const old = new Database(join(dataDir, 'contentd.sqlite'))
    for (const migration of MIGRATIONS.slice(0, 2)) old.exec(migration as string)
    old.pragma('user_version = 2')
    old.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)').run('usr_1', 'alice', 'x', '2026-01-01T00:00:00.000Z')
    const insertProject = old.prepare('INSERT INTO projects (id, owner_id, slug, name, created_at, version, content, snapshot_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    insertProject.run('prj_1', 'usr_1', 'logged', 'logged', '2026-01-01T00:00:00.000Z', 7, JSON.stringify({ n: 1, list: [] }), 5)
    insertProject.run('prj_2', 'usr_1', 'plain', 'plain', '2026-01-01T00:00:00.000Z', 3, JSON.stringify({ a: 'b' }), 3)
    insertProject.run('prj_3', 'usr_1', 'fresh', 'fresh', '2026-01-01T00:00:00.000Z', 0, '{}', 0)
    const log = old.prepare('INSERT INTO content_log (project_id, version, operation) VALUES (?, ?, ?)')
    log.run('prj_1', 6, JSON.stringify({ op: 'increment', path: ['n'], value: 2 }))
    log.run('prj_1', 7, JSON.stringify({ op: 'push', path: ['list'], value: 'x' }))
    old.close()

    const store = open(0)
    const logged = (await store.findProject('alice', 'logged'))!
    const plain = (await store.findProject('alice', 'plain'))!
    const fresh = (await store.findProject('alice', 'fresh'))!
    expect(await store.readContent(logged.id)).toMatchObject({ version: 7, content: { n: 3, list: ['x'] } })
    expect(await store.readContent(plain.id)).toMatchObject({ version: 3, content: { a: 'b' } })
    expect(await store.readContent(fresh.id)).toMatchObject({ version: 0, content: {} })
    // History starts now: the current version is answerable, nothing before it.
    expect(await store.readChanges(logged, 7, 10)).toEqual({ version: 7, changes: [], more: false })
    await expect(store.readChanges(logged, 6, 10)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
    await expect(store.readContentAt(plain.id, 2)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
    expect((await store.readChanges(fresh, 0, 10)).changes).toEqual([])
    // And it goes on from there.
    await store.applyOperation(logged, { op: 'increment', path: ['n'], value: 1 }, AS_TESTER)
    expect((await store.readChanges(logged, 7, 10)).changes.map(c => [c.version, c.op])).toEqual([[8, 'increment']])
    expect((await store.readContentAt(logged.id, 7)).content).toEqual({ n: 3, list: ['x'] })
    const columns = inspect(db => (db.prepare('PRAGMA table_info(projects)').all() as Array<{ name: string }>).map(c => c.name))
    expect(columns).not.toContain('content')
    expect(columns).not.toContain('snapshot_version')
    expect(inspect(db => db.prepare("SELECT name FROM sqlite_master WHERE name = 'content_log'").get())).toBeUndefined()
  })
})

describe('entry sizes (docs/design.md §13b, issue 26 finding 3)', () => {
  /** Four updates of about 3000 bytes on a store paging at 4096 bytes: one entry per page. */
  async function sizedLog () {
    const store = openSqliteStore({ dataDir, contentLimitBytes: LIMIT, cacheBytes: 1024 * 1024, changesPageBytes: 4096 })
    opened.push(store)
    const project = await setup(store, { text: 'a'.repeat(3000) })
    for (const c of 'bcd') await store.applyOperation(project, { op: 'update', value: { text: c.repeat(3000) } }, AS_TESTER)
    return { store, project }
  }
  const change = (sql: string) => {
    const db = new Database(join(dataDir, 'contentd.sqlite'))
    try { db.prepare(sql).run() } finally { db.close() }
  }
  /** Every version from `since` on, following `more`, as [versions of each page]. */
  async function pagesOf (store: SqliteStore, project: ProjectRecord): Promise<number[][]> {
    const pages: number[][] = []
    for (let since = 0, more = true; more;) {
      const page = await store.readChangesJson(project, since, 100)
      pages.push(page.entries.map(entry => entry.version))
      since = page.entries.at(-1)?.version ?? since
      more = page.more
    }
    return pages
  }

  it('keeps each entry\'s UTF-8 length at commit and pages by it, read before the entry in each row', async () => {
    const { store, project } = await sizedLog()
    expect(await pagesOf(store, project)).toEqual([[1], [2], [3], [4]])
    expect(inspect(db => db.prepare('SELECT count(*) FROM changes WHERE bytes IS NOT octet_length(entry)').pluck().get())).toBe(0)
    // The kept sizes are believed, not measured again: made small, a page takes all four.
    change('UPDATE changes SET bytes = 10')
    expect(await pagesOf(store, project)).toEqual([[1, 2, 3, 4]])
    // The statement that sizes a page walks the (project_id, version) index and reads `bytes`
    // from each row, which comes before `entry` (the next test shows no entry page is read).
    const probe = new Database(':memory:')
    const statements = Object.getPrototypeOf(probe.prepare('SELECT 1')) as { iterate: (...args: unknown[]) => unknown }
    probe.close()
    const sources: string[] = []
    const iterate = statements.iterate
    vi.spyOn(statements, 'iterate').mockImplementation(function (this: { source: string }, ...args: unknown[]) {
      sources.push(this.source)
      return iterate.apply(this, args)
    })
    try { await store.readChangesJson(project, 0, 100) } finally { vi.restoreAllMocks() }
    const sizing = sources.filter(sql => /FROM changes/.test(sql))
    expect(sizing).toHaveLength(1)
    expect(sizing[0]).not.toMatch(/\bentry\b/)
    const plan = inspect(db => db.prepare(`EXPLAIN QUERY PLAN ${sizing[0]!}`).all('prj_1', 0, 101) as Array<{ detail: string }>)
    expect(plan.map(step => step.detail)).toEqual([expect.stringMatching(/^SEARCH changes USING INDEX changes_by_version \(project_id=\? AND version>\?\)$/)])
    expect(inspect(db => (db.prepare('PRAGMA table_info(changes)').all() as Array<{ name: string }>).map(c => c.name)).at(-1)).toBe('entry')
  })

  it('sizes a page without reading the overflow pages of an entry it measures (a 7 MB entry, its overflow pages zeroed)', async () => {
    const store = open()
    const project = await setup(store, { n: 0 })
    await store.applyOperation(project, { op: 'set', path: p('big'), value: 'x'.repeat(7_000_000) }, AS_TESTER)
    await store.applyOperation(project, { op: 'increment', path: p('n'), value: 1 }, AS_TESTER)
    await store.close()
    opened.splice(opened.indexOf(store), 1)
    // Every overflow page of the log (all of them the 7 MB entry's), overwritten with zeros in
    // the file: a read that follows the entry's overflow chain now fails (SQLITE_CORRUPT).
    const file = join(dataDir, 'contentd.sqlite')
    const db = new Database(file)
    db.pragma('wal_checkpoint(TRUNCATE)')
    const pageSize = db.pragma('page_size', { simple: true }) as number
    const pages = db.prepare("SELECT pageno FROM dbstat WHERE name = 'changes' AND pagetype = 'overflow'").pluck().all() as number[]
    db.close()
    expect(pages.length * pageSize).toBeGreaterThan(6_900_000)
    const fd = openSync(file, 'r+')
    try {
      for (const page of pages) writeSync(fd, Buffer.alloc(pageSize), 0, pageSize, (page - 1) * pageSize)
    } finally {
      closeSync(fd)
    }
    expect(() => inspect(db => db.prepare('SELECT entry FROM changes WHERE version = 2').get())).toThrow(/malformed|corrupt/i)
    const reopened = open()
    // Version 1 fits the page; version 2 is measured (the budget is 8 MiB) but only 1 is asked for.
    const first = await reopened.readChangesJson(project, 0, 1)
    expect(first.entries.map(e => e.version)).toEqual([1])
    expect(first.more).toBe(true)
    // With a page budget below it, version 2 is sized and left for the next page.
    const small = openSqliteStore({ dataDir, contentLimitBytes: LIMIT, cacheBytes: 1024 * 1024, changesPageBytes: 4096 })
    opened.push(small)
    const page = await small.readChangesJson(project, 0, 100)
    expect(page.entries.map(e => e.version)).toEqual([1])
    expect(page.more).toBe(true)
    // And an entry after it is read without it.
    expect((await small.readChanges(project, 2, 100)).changes.map(c => c.version)).toEqual([3])
  })
})
