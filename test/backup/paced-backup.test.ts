// The backup copies in steps, each synced, under one read transaction held across them
// (server/backup/sqlite-backup.ts): another connection writing between every two steps
// neither restarts the copy (without the held snapshot SQLite's backup API would start over
// after each write and never finish) nor gets into it.
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { backupDatabase } from '../../server/backup/sqlite-backup.js'

const dir = mkdtempSync(join(tmpdir(), 'contentd-paced-backup-'))
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })

/** A store-shaped SQLite file (the tables the backup's check looks for) of about `mib` MiB. */
function makeStore (path: string, mib: number): number {
  const db = new Database(path)
  db.pragma('journal_mode = wal')
  db.exec('CREATE TABLE users (id TEXT); CREATE TABLE projects (id TEXT); CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT)')
  db.pragma('user_version = 1')
  const insert = db.prepare('INSERT INTO filler (body) VALUES (?)')
  const rows = mib * 16
  db.transaction(() => { for (let i = 0; i < rows; i++) insert.run(`${i}:`.padEnd(64 * 1024, 'x')) })()
  db.close()
  return rows
}

describe('a backup in synced steps', () => {
  it('copies the snapshot of its start while another connection writes between every two steps', async () => {
    const source = join(dir, 'store.sqlite')
    const rowsAtStart = makeStore(source, 40)
    const writer = new Database(source)
    writer.pragma('busy_timeout = 5000')
    const insert = writer.prepare('INSERT INTO filler (body) VALUES (?)')
    let writes = 0
    let copying = true
    // One write per turn of the event loop: the backup's steps run one a turn too.
    const writeWhileCopying = (): void => {
      if (!copying) return
      insert.run(`during ${writes++}`)
      setImmediate(writeWhileCopying)
    }
    const done = backupDatabase(source, join(dir, 'copy.sqlite'))
    setImmediate(writeWhileCopying)
    const result = await done.finally(() => { copying = false })
    writer.close()

    // 40 MiB is several 8 MiB steps, and writes came between them.
    expect(result.bytes).toBeGreaterThan(3 * 8 * 1024 * 1024)
    expect(writes).toBeGreaterThan(3)
    const copy = new Database(result.path, { readonly: true })
    try {
      expect(copy.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(rowsAtStart)
      expect(copy.prepare("SELECT count(*) FROM filler WHERE body LIKE 'during %'").pluck().get()).toBe(0)
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
    } finally {
      copy.close()
    }
    const source2 = new Database(source, { readonly: true })
    expect(source2.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(rowsAtStart + writes)
    source2.close()
    expect(statSync(result.path).size).toBe(result.bytes)
  }, 60_000)
})
