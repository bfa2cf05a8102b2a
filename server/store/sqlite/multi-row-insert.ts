// One INSERT of many rows instead of one run per row: the change log's group commit appends
// an entry and a path-index row per write, and each statement run costs SQLite its own
// program start and better-sqlite3 its own binding and reset (about 1.4 µs a row of the
// ~8 µs an entry and its path row cost, measured in isolation; BENCHMARKS.md). Statements are
// prepared lazily for powers of two of rows up to MAX_ROWS, so a table keeps at most seven.
import type Database from 'better-sqlite3'

/** The most rows one statement takes (7 columns × 64 rows stays far below SQLite's 32,766 parameters). */
const MAX_ROWS = 64

export class MultiRowInsert {
  private readonly statements = new Map<number, Database.Statement>()

  /** `head`: the statement up to VALUES (`INSERT … (a, b) VALUES`); `columns`: parameters per row. */
  constructor (private readonly db: Database.Database, private readonly head: string, private readonly columns: number) {}

  /** Inserts the rows whose parameters `values` lists row after row, in that order. */
  write (values: ReadonlyArray<string | number | null>): void {
    const rows = values.length / this.columns
    if (!Number.isInteger(rows)) throw new Error(`${values.length} parameters are not rows of ${this.columns}`)
    let done = 0
    while (done < rows) {
      const count = largestPowerOfTwoAtMost(Math.min(rows - done, MAX_ROWS))
      this.statement(count).run(values.slice(done * this.columns, (done + count) * this.columns))
      done += count
    }
  }

  private statement (rows: number): Database.Statement {
    let statement = this.statements.get(rows)
    if (!statement) {
      const row = `(${Array(this.columns).fill('?').join(', ')})`
      statement = this.db.prepare(`${this.head} ${Array(rows).fill(row).join(', ')}`)
      this.statements.set(rows, statement)
    }
    return statement
  }
}

function largestPowerOfTwoAtMost (n: number): number {
  return 2 ** Math.floor(Math.log2(n))
}
