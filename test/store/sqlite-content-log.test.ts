// The embedded store's content log: changes to a large document are appended to content_log
// instead of rewriting the document, and the document is rebuilt from snapshot + log by any
// reader that has no cached copy (another store on the same file, a reopened store). These
// tests check that rebuilt documents equal a model built with applyOperation, that the log
// is really used (rows exist) and that it is compacted into a new snapshot.
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { JsonObject } from '../../shared/json.js'
import { applyOperation, type Operation } from '../../shared/operations.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import { openSqliteStore } from '../support/stores.js'
import type { ProjectRecord } from '../../server/store/types.js'

const LIMIT = 8 * 1024 * 1024
let dataDir: string
const opened: SqliteStore[] = []

function open (cacheBytes = 64 * 1024 * 1024): SqliteStore {
  const store = openSqliteStore({ dataDir, contentLimitBytes: LIMIT, cacheBytes })
  opened.push(store)
  return store
}

function largeDocument (): JsonObject {
  const items = Array.from({ length: 1500 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'] }))
  return { counter: 0, items, nested: { list: [1, 2, 3] } }
}

function logRows (projectId: string): { rows: number, snapshotVersion: number } {
  const db = new Database(join(dataDir, 'contentd.sqlite'), { readonly: true })
  try {
    const rows = (db.prepare('SELECT count(*) AS n FROM content_log WHERE project_id = ?').get(projectId) as { n: number }).n
    const snapshotVersion = (db.prepare('SELECT snapshot_version AS v FROM projects WHERE id = ?').get(projectId) as { v: number }).v
    return { rows, snapshotVersion }
  } finally {
    db.close()
  }
}

async function setup (store: SqliteStore): Promise<ProjectRecord> {
  await store.createUser({ id: 'usr_1', username: 'alice', passwordHash: 'x', createdAt: new Date().toISOString() })
  const project = await store.createProject({ id: 'prj_1', ownerId: 'usr_1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: new Date().toISOString() })
  await store.applyOperation(project, { op: 'update', value: largeDocument() })
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

/** Sends `count` operations in bursts that share group commits; returns the model. */
async function drive (store: SqliteStore, project: ProjectRecord, count: number, model: JsonObject): Promise<number> {
  let successes = 0
  for (let start = 0; start < count; start += 20) {
    const burst = Array.from({ length: Math.min(20, count - start) }, (_, j) => operation(start + j))
    const results = await Promise.allSettled(burst.map(op => store.applyOperation(project, op)))
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

describe('content log of large documents', () => {
  it('logs small changes and rebuilds the same document in another store on the file', async () => {
    const writer = open()
    const project = await setup(writer)
    const model = largeDocument()
    const successes = await drive(writer, project, 120, model)
    expect(logRows(project.id).rows).toBeGreaterThan(0)

    const reader = open(0)
    const seen = await reader.readContent(project.id)
    expect(seen?.version).toBe(1 + successes)
    expect(seen?.content).toEqual(model)
    expect(JSON.parse(seen?.json ?? 'null')).toEqual(model)
    expect((await writer.readContent(project.id))?.content).toEqual(model)
  })

  it('sees a change logged by another store, and writes on top of it', async () => {
    const first = open()
    const project = await setup(first)
    const model = largeDocument()
    await first.readContent(project.id)
    const second = open()
    await second.applyOperation(project, { op: 'increment', path: p('counter'), value: 5 })
    applyOperation(model, { op: 'increment', path: p('counter'), value: 5 })
    await first.applyOperation(project, { op: 'set', path: p('after'), value: true })
    applyOperation(model, { op: 'set', path: p('after'), value: true })
    expect((await first.readContent(project.id))?.content).toEqual(model)
    expect((await second.readContent(project.id))?.content).toEqual(model)
    expect((await second.readContent(project.id))?.version).toBe(3)
  })

  it('logs each operation as it ran, even when a later one in the batch changes its value', async () => {
    const writer = open()
    const project = await setup(writer)
    // One group commit: the push mutates the object the set inserted. Logging the set's value
    // at write time would replay {b:[1,2]} and then push 2 again.
    await Promise.all([
      writer.applyOperation(project, { op: 'set', path: p('box'), value: { b: [1] } }),
      writer.applyOperation(project, { op: 'push', path: p('box.b'), value: 2 })
    ])
    expect(logRows(project.id).rows).toBe(2)
    const rebuilt = await open(0).readContent(project.id)
    expect(rebuilt?.content.box).toEqual({ b: [1, 2] })
  })

  it('compacts the log into a new snapshot, and the content survives a reopen', async () => {
    const store = open()
    const project = await setup(store)
    const model = largeDocument()
    const successes = await drive(store, project, 1300, model)
    const { rows, snapshotVersion } = logRows(project.id)
    expect(snapshotVersion).toBeGreaterThan(1)
    expect(rows).toBeLessThanOrEqual(1000)
    expect(rows).toBe(1 + successes - snapshotVersion)
    await store.close()
    const reopened = open()
    expect((await reopened.readContent(project.id))?.content).toEqual(model)
  })

  it('writes an update as a snapshot and empties the log', async () => {
    const store = open()
    const project = await setup(store)
    await drive(store, project, 30, largeDocument())
    expect(logRows(project.id).rows).toBeGreaterThan(0)
    const replacement = { ...largeDocument(), replaced: true }
    const { version } = await store.applyOperation(project, { op: 'update', value: replacement })
    expect(logRows(project.id)).toEqual({ rows: 0, snapshotVersion: version })
    expect((await open(0).readContent(project.id))?.content).toEqual(replacement)
  })
})
