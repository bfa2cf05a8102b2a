// Issue 30: when a group commit's sync returns, the change feed hands its changes on (the
// `change` and `query` events) before the writes that waited meanwhile are committed as the
// next batch (content-writer.ts). Otherwise that batch's transaction — a whole-document
// checkpoint, SQLite's WAL checkpoint — would sit between a commit and its events.
import type Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ChangeFeed } from '../../server/feed/change-feed.js'
import { AccessEvents } from '../../server/services/access-events.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import type { ProjectRecord } from '../../server/store/types.js'
import { aliceWithProject, openGatedStore, type GatedSync } from '../support/gated-sync.js'
import { AS_TESTER } from '../support/stores.js'

let dataDir: string
let store: SqliteStore
let gate: GatedSync
let project: ProjectRecord

const turns = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise(resolve => setTimeout(resolve, 5))
}

const increment = () => store.applyOperation(project, { op: 'increment', path: ['count'], value: 1 }, AS_TESTER)

/** The project's version as committed in the file now (a committed batch is visible before its sync). */
const versionInFile = (): number => {
  const db = (store as unknown as { db: Database.Database }).db
  return db.prepare('SELECT version FROM projects WHERE id = ?').pluck().get(project.id) as number
}

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'contentd-fanout-first-'))
  store = openGatedStore(dataDir, opened => { gate = opened })
  project = await aliceWithProject(store)
})

afterEach(async () => {
  gate.release()
  await store.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('SqliteStore: a synced batch\'s changes go out before the next batch commits', () => {
  it('the feed hands version 1 on while version 2, which waited for 1\'s sync, is not yet committed', async () => {
    const feed = new ChangeFeed(store, new AccessEvents())
    const heard: Array<{ version: number, inFile: number }> = []
    feed.subscribe(project.id, change => heard.push({ version: change.version, inFile: versionInFile() }))
    gate.holding = true
    const first = increment()
    await turns()
    // Arrives while 1's sync is in flight: it waits, to be committed as the next batch.
    const second = increment()
    await turns()
    expect(gate.started).toBe(1)
    expect(versionInFile()).toBe(1)
    gate.release()
    expect(await Promise.all([first, second])).toEqual([{ version: 1 }, { version: 2 }])
    await turns()
    // When 1 was handed on, 2 was not in the file yet: its transaction came after.
    expect(heard).toEqual([{ version: 1, inFile: 1 }, { version: 2, inFile: 2 }])
    expect(gate.started).toBe(2)
  })

  it('still commits every write that waited, in order, one batch per sync', async () => {
    const told: number[] = []
    store.onCommit(change => told.push(change.entry.version))
    gate.holding = true
    const first = increment()
    await turns()
    const waiting = [increment(), increment(), increment()]
    await turns()
    gate.release()
    expect(await Promise.all([first, ...waiting])).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }])
    expect(told).toEqual([1, 2, 3, 4])
    expect(gate.started).toBe(2)
  })
})
