// Opens the embedded store's one file: WAL, synchronous=FULL (an acknowledged change
// survives power loss; content batches commit with NORMAL and are acknowledged only after
// content-writer.ts has had the WAL synced off the event loop), busy_timeout so several
// processes can share the file, foreign keys on (deleting a project removes its members,
// change log and checkpoints), migrations applied, and a page cache of SQLITE_CACHE_BYTES.
import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { sqliteFile } from './file.js'
import { MIGRATIONS } from './migrations.js'
import { DEFAULT_SQLITE_CACHE_BYTES, cacheSizePragma } from './page-cache.js'

export function openDatabase (dataDir: string, busyTimeoutMs: number, pageCacheBytes = DEFAULT_SQLITE_CACHE_BYTES): Database.Database {
  mkdirSync(dataDir, { recursive: true })
  const db = new Database(sqliteFile(dataDir))
  db.pragma(cacheSizePragma(pageCacheBytes))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma(`busy_timeout = ${busyTimeoutMs}`)
  db.pragma('foreign_keys = ON')
  // A migration that rewrote a table (the change log's, migrations.ts) left a WAL as large as
  // what it wrote, copied into the file by now: give that disk back (docs/operations.md).
  if (migrate(db) > 0) db.pragma('wal_checkpoint(TRUNCATE)')
  return db
}

/** Runs the migrations not yet applied; returns how many ran. */
function migrate (db: Database.Database): number {
  // IMMEDIATE: two processes starting together must not both run a migration.
  return db.transaction(() => {
    const done = db.pragma('user_version', { simple: true }) as number
    for (const migration of MIGRATIONS.slice(done)) {
      if (typeof migration === 'string') db.exec(migration)
      else migration(db)
    }
    if (done < MIGRATIONS.length) db.pragma(`user_version = ${MIGRATIONS.length}`)
    return MIGRATIONS.length - Math.min(done, MIGRATIONS.length)
  }).immediate()
}
