// The change log's appends, many rows to a statement (server/store/sqlite/multi-row-insert.ts):
// every row lands once, in order, whatever the count; statements are few; a failing row fails
// the call (its transaction rolls back, as one run per row would have).
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MultiRowInsert } from '../../server/store/sqlite/multi-row-insert.js'

let db: Database.Database

beforeEach(() => {
  db = new Database(':memory:')
  db.exec('CREATE TABLE t (k TEXT NOT NULL, v INTEGER NOT NULL, note TEXT, PRIMARY KEY (k, v)) WITHOUT ROWID')
})
afterEach(() => { db.close() })

const rowsOf = (from: number, count: number) => Array.from({ length: count }, (_, i) => ['p', from + i, (from + i) % 3 === 0 ? null : `n${from + i}`] as const)

describe('MultiRowInsert', () => {
  it('writes every row once, in order, for any count (chunks of powers of two up to 64)', () => {
    const insert = new MultiRowInsert(db, 'INSERT INTO t (k, v, note) VALUES', 3)
    let next = 1
    for (const count of [1, 2, 3, 7, 16, 33, 64, 65, 100, 200]) {
      insert.write(rowsOf(next, count).flat())
      next += count
    }
    const stored = db.prepare('SELECT k, v, note FROM t ORDER BY k, v').raw().all() as Array<[string, number, string | null]>
    expect(stored).toEqual(rowsOf(1, next - 1).map(row => [...row]))
    // Only powers of two are prepared: 1, 2, 4, 8, 16, 32, 64.
    expect((insert as unknown as { statements: Map<number, unknown> }).statements.size).toBeLessThanOrEqual(7)
  })

  it('writes nothing for no rows, and refuses parameters that are not whole rows', () => {
    const insert = new MultiRowInsert(db, 'INSERT INTO t (k, v, note) VALUES', 3)
    insert.write([])
    expect(() => insert.write(['p', 1])).toThrow(/not rows of 3/)
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0)
  })

  it('fails the call on a constraint, so the caller\'s transaction rolls back every row', () => {
    const insert = new MultiRowInsert(db, 'INSERT INTO t (k, v, note) VALUES', 3)
    const write = db.transaction(() => { insert.write([...rowsOf(1, 5).flat(), 'p', 3, 'again']) })
    expect(() => write()).toThrow(/UNIQUE/)
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0)
  })
})
