// The snapshot copy under the store's backups (server/backup/snapshot-copy.ts): the file
// copied by the kernel with the write-ahead log's committed frames laid over it must be one
// moment of the database, whatever writers and checkpoints do meanwhile.
import Database from 'better-sqlite3'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { copySnapshot, walChecksum } from '../../server/backup/snapshot-copy.js'

let dir: string
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'contentd-snapshot-')) })
afterEach(() => { rmSync(dir, { recursive: true, force: true }) })

/** A WAL store whose invariant is checkable: `total` is always the sum of `entries.amount`. */
function makeStore (file: string, autocheckpoint: number): Database.Database {
  const db = new Database(file)
  db.pragma('journal_mode = wal')
  db.pragma(`wal_autocheckpoint = ${autocheckpoint}`)
  db.exec('CREATE TABLE entries (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL, payload TEXT NOT NULL); CREATE INDEX entries_amount ON entries (amount); CREATE TABLE total (n INTEGER NOT NULL, sum INTEGER NOT NULL); INSERT INTO total VALUES (0, 0)')
  return db
}

function stateOf (file: string): { integrity: string, rows: number, sum: number, total: { n: number, sum: number } } {
  const db = new Database(file, { readonly: true })
  try {
    return {
      integrity: (db.pragma('integrity_check') as Array<{ integrity_check: string }>)[0]?.integrity_check ?? '',
      rows: db.prepare('SELECT count(*) FROM entries').pluck().get() as number,
      sum: db.prepare('SELECT coalesce(sum(amount), 0) FROM entries').pluck().get() as number,
      total: db.prepare('SELECT n, sum FROM total').get() as { n: number, sum: number }
    }
  } finally {
    db.close()
  }
}

describe('copySnapshot', () => {
  it('includes what lives only in the write-ahead log', () => {
    const file = join(dir, 'store.sqlite')
    const db = makeStore(file, 0)
    const insert = db.prepare('INSERT INTO entries (amount, payload) VALUES (?, ?)')
    db.transaction(() => { for (let i = 1; i <= 500; i++) insert.run(i, 'x'.repeat(300)) })()
    db.prepare('UPDATE total SET n = 500, sum = 125250').run()
    // Nothing checkpointed: the file alone has none of these rows.
    expect(stateOf(file).rows).toBe(500)
    copySnapshot(file, join(dir, 'copy.sqlite'))
    db.close()
    expect(stateOf(join(dir, 'copy.sqlite'))).toEqual({ integrity: 'ok', rows: 500, sum: 125250, total: { n: 500, sum: 125250 } })
  })

  it('is one moment of the database while another thread writes and checkpoints', async () => {
    const file = join(dir, 'store.sqlite')
    makeStore(file, 20).close()
    // The writer: transactions that insert a row and move the total with it, some large enough
    // to span many frames; checkpoints every 20 pages, so the log restarts again and again.
    const writer = new Worker(`
      const { workerData, parentPort } = require('node:worker_threads')
      const Database = require(workerData.sqlite)
      const db = new Database(workerData.file)
      db.pragma('busy_timeout = 5000')
      db.pragma('wal_autocheckpoint = 20')
      const insert = db.prepare('INSERT INTO entries (amount, payload) VALUES (?, ?)')
      const total = db.prepare('UPDATE total SET n = n + ?, sum = sum + ?')
      let i = 0
      let stop = false
      parentPort.on('message', () => { stop = true })
      const step = () => {
        if (stop) { db.close(); parentPort.postMessage('done'); return }
        db.transaction(() => {
          const rows = i % 7 === 0 ? 40 : 1
          let sum = 0
          for (let r = 0; r < rows; r++) { insert.run(++i, 'y'.repeat(i % 5 === 0 ? 3000 : 100)); sum += i }
          total.run(rows, sum)
        })()
        setImmediate(step)
      }
      step()
    `, { eval: true, workerData: { file, sqlite: createRequire(import.meta.url).resolve('better-sqlite3') } })
    try {
      const seen = new Set<number>()
      for (let round = 0; round < 25; round++) {
        await new Promise(resolve => setTimeout(resolve, 20))
        const copy = join(dir, `copy-${round}.sqlite`)
        copySnapshot(file, copy)
        const state = stateOf(copy)
        expect(state.integrity).toBe('ok')
        expect(state.total).toEqual({ n: state.rows, sum: state.sum })
        seen.add(state.rows)
        rmSync(copy)
      }
      // The copies saw the database grow: the writer really ran alongside.
      expect(seen.size).toBeGreaterThan(5)
    } finally {
      const done = new Promise(resolve => writer.once('message', resolve))
      writer.postMessage('stop')
      await done
      await writer.terminate()
    }
  })
})

describe('walChecksum', () => {
  it('matches the checksums SQLite wrote into a real log', () => {
    const file = join(dir, 'store.sqlite')
    const db = makeStore(file, 0)
    db.prepare('INSERT INTO entries (amount, payload) VALUES (1, ?)').run('z'.repeat(100))
    const log = readFileSync(`${file}-wal`)
    db.close()
    const bigEndian = (log.readUInt32BE(0) & 1) === 1
    const header = walChecksum(log.subarray(0, 24), [0, 0], bigEndian)
    expect(header).toEqual([log.readUInt32BE(24), log.readUInt32BE(28)])
    const pageSize = log.readUInt32BE(8)
    const frame = log.subarray(32, 32 + 24 + pageSize)
    const first = walChecksum(frame.subarray(24), walChecksum(frame.subarray(0, 8), header, bigEndian), bigEndian)
    expect(first).toEqual([frame.readUInt32BE(16), frame.readUInt32BE(20)])
  })
})
