// The embedded store reads a page of large change-log entries on a worker thread
// (server/store/sqlite/entry-reader.ts, docs/design.md §13b): SQLite takes tens of ms to
// gather a 7 MB entry, which held the event loop on every replay (issue 26 finding 3). The
// worker runs from the compiled file, so this test opens the built store (dist/, which the
// tests' global setup keeps fresh) and compares its pages with the store run from the sources
// in this process, which reads on the event loop.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { EntryReader as EntryReaderType } from '../../server/store/sqlite/entry-reader.js'
import type { SqliteStore as SqliteStoreType } from '../../server/store/sqlite/sqlite-store.js'
import { AS_TESTER, DEFAULT_HISTORY, openSqliteStore, processCommits } from '../support/stores.js'

const DIST = join(import.meta.dirname, '../../dist/server/store/sqlite')
const BIG = 300_000

let dataDir: string
const opened: Array<{ close (): Promise<void> }> = []
beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'contentd-reader-')) })
afterEach(async () => {
  vi.restoreAllMocks()
  for (const store of opened.splice(0)) await store.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('large pages of the change log, read on a worker thread', () => {
  it('give the same entries as a read on the event loop, and end with the store', async () => {
    const { SqliteStore } = await import(join(DIST, 'sqlite-store.js')) as { SqliteStore: typeof SqliteStoreType }
    const { EntryReader } = await import(join(DIST, 'entry-reader.js')) as { EntryReader: typeof EntryReaderType }
    const built = new SqliteStore({ dataDir, contentLimitBytes: 8 * 1024 * 1024, cacheBytes: 1024 * 1024, history: DEFAULT_HISTORY, commits: processCommits })
    opened.push(built)
    await built.createUser({ id: 'usr_1', username: 'alice', passwordHash: 'x', createdAt: new Date().toISOString() })
    const project = await built.createProject({ id: 'prj_1', ownerId: 'usr_1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: new Date().toISOString() })
    await built.applyOperation(project, { op: 'update', value: { big: 'é'.repeat(BIG), n: 0 } }, AS_TESTER)
    await built.applyOperation(project, { op: 'increment', path: ['n'], value: 1 }, AS_TESTER)
    await built.applyOperation(project, { op: 'revert', version: 1 }, AS_TESTER)

    const read = vi.spyOn(EntryReader.prototype, 'read')
    const page = await built.readChangesJson(project, 0, 1000)
    // Two entries of 600 KB (é is two bytes) do not fit one MiB: two pages, both off the loop.
    expect(page.entries.map(entry => entry.version)).toEqual([1, 2])
    expect(read).toHaveBeenCalledTimes(1)
    const rest = await built.readChangesJson(project, 2, 1000)
    expect(rest.entries.map(entry => entry.version)).toEqual([3])
    expect(read).toHaveBeenCalledTimes(2)
    // A small page stays on the event loop.
    expect((await built.readChangesJson(project, 1, 1)).entries.map(entry => entry.version)).toEqual([2])
    expect(read).toHaveBeenCalledTimes(2)

    const onLoop = openSqliteStore({ dataDir, contentLimitBytes: 8 * 1024 * 1024, cacheBytes: 1024 * 1024 })
    opened.push(onLoop)
    for (const since of [0, 2]) {
      const [off, on] = [await built.readChangesJson(project, since, 1000), await onLoop.readChangesJson(project, since, 1000)]
      expect(off.entries.map(entry => entry.stored.toString())).toEqual(on.entries.map(entry => entry.stored.toString()))
      expect(off.entries.map(entry => entry.bytes)).toEqual(on.entries.map(entry => entry.bytes))
      expect(await built.readChanges(project, since, 1000)).toEqual(await onLoop.readChanges(project, since, 1000))
    }
    expect((await built.readChanges(project, 2, 1000)).changes[0]).toMatchObject({ project: '@alice/demo', version: 3, op: 'revert', value: { big: 'é'.repeat(BIG), n: 0 } })
    await built.close()
    opened.splice(opened.indexOf(built), 1)
  })
})
