// The embedded store's group commit syncs the WAL off the event loop (content-writer.ts,
// wal-sync.ts). These tests hold the real sync at a gate to check what may happen before it
// returns (the commit, reads) and what may not (an answer, a change told to listeners), how
// writes that arrive meanwhile are batched, and what a failed sync does.
import type Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isContentdError } from '../../shared/errors.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import type { ProjectRecord } from '../../server/store/types.js'
import { aliceWithProject, openGatedStore, type GatedSync } from '../support/gated-sync.js'
import { AS_TESTER } from '../support/stores.js'

let dataDir: string
let store: SqliteStore
let gate: GatedSync
let project: ProjectRecord

function open (): SqliteStore {
  return openGatedStore(dataDir, opened => { gate = opened })
}

/** Lets the event loop run a few turns (setImmediate flushes, thread-pool callbacks). */
async function turns (n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise(resolve => setTimeout(resolve, 5))
}

function increment (): Promise<{ version: number }> {
  return store.applyOperation(project, { op: 'increment', path: ['count'], value: 1 }, AS_TESTER)
}

/** The versions the store tells its commit listeners of, as they are told. */
function versionsTold (): number[] {
  const told: number[] = []
  store.onCommit(change => { told.push(change.entry.version) })
  return told
}

/** Which of the promises have settled, without waiting for the others. */
async function settled (promises: Array<Promise<unknown>>): Promise<boolean[]> {
  const states = promises.map(() => false)
  promises.forEach((promise, i) => { promise.then(() => { states[i] = true }, () => { states[i] = true }) })
  await turns(1)
  return states
}

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'contentd-walsync-'))
  store = open()
  project = await aliceWithProject(store)
})

afterEach(async () => {
  gate.release()
  await store.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('SqliteStore group commit with the WAL synced off the event loop', () => {
  it('answers a write and tells listeners only after its sync returns; reads may see it before', async () => {
    const told = versionsTold()
    gate.holding = true
    const write = increment()
    await turns()
    expect(gate.started).toBe(1)
    expect(await settled([write])).toEqual([false])
    expect(told).toEqual([])
    // Committed already: this process's reads see it (as MongoDB's "local" read concern would).
    expect((await store.readContent(project.id))?.content).toEqual({ count: 1 })
    gate.release()
    expect(await write).toEqual({ version: 1 })
    expect(told).toEqual([1])
  })

  it('commits the writes that arrive during a sync as the next batch, after it, in order', async () => {
    const told = versionsTold()
    gate.holding = true
    const first = increment()
    await turns()
    const waiting = [increment(), increment(), increment(), increment()]
    await turns()
    // One sync in flight; the four wait for it and are not even committed yet.
    expect(gate.started).toBe(1)
    expect((await store.readContent(project.id))?.content).toEqual({ count: 1 })
    gate.release()
    gate.holding = true
    await first
    await turns()
    expect(gate.started).toBe(2)
    expect(await settled(waiting)).toEqual([false, false, false, false])
    expect((await store.readContent(project.id))?.content).toEqual({ count: 5 })
    gate.release()
    expect(await Promise.all(waiting)).toEqual([{ version: 2 }, { version: 3 }, { version: 4 }, { version: 5 }])
    expect(told).toEqual([1, 2, 3, 4, 5])
  })

  it('keeps synchronous=FULL for every other write of the connection', async () => {
    await increment()
    const db = (store as unknown as { db: Database.Database }).db
    // 2 is FULL: users, keys, projects and schemas still sync in their own COMMIT.
    expect(db.pragma('synchronous', { simple: true })).toBe(2)
  })

  it('fails the batch whose sync failed, and every later write until the store is reopened', async () => {
    gate.failWith = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
    const failed = increment().then(() => 'answered', (error: unknown) => error)
    const failure = await failed
    // Its outcome is unknown: an internal error, not a refusal that "changed nothing".
    expect(failure).toBeInstanceOf(Error)
    expect(isContentdError(failure)).toBe(false)
    gate.failWith = undefined
    const later = await increment().then(() => 'answered', (error: unknown) => error)
    expect(isContentdError(later) && later.code).toBe('STORE_UNAVAILABLE')
    expect(gate.started).toBe(1)
    // /healthz and /readyz answer 503 from here on, so an orchestrator restarts the process.
    await expect(store.ping()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    await store.close()
    store = open()
    await store.ping()
    expect(await increment()).toEqual({ version: 2 })
  })

  it('closes only after the writes it accepted are synced and answered', async () => {
    gate.holding = true
    const write = increment()
    await turns()
    let closed = false
    const closing = store.close().then(() => { closed = true })
    const queued = increment()
    await turns()
    expect(closed).toBe(false)
    gate.release()
    expect(await write).toEqual({ version: 1 })
    expect(await queued).toEqual({ version: 2 })
    await closing
    store = open()
    expect((await store.readContent(project.id))?.content).toEqual({ count: 2 })
  })
})
