// `contentd restore FILE` (docs/design.md §18): puts a backup in place of DATA_DIR's store.
// In order, each step refusing with one line and nothing changed:
// 1. the file is copied beside the store (so a slow or remote source cannot leave a half
//    store, and the check reads exactly what will be used) and checked (sqlite-backup.ts);
// 2. no process has the store open: SQLite's own lock says so, not a guess. Every
//    connection to a WAL database (a server, another contentd command) holds a shared lock
//    on the file for as long as it is open, and the kernel drops the locks of a process that
//    died, even by kill -9. The restore asks for an exclusive lock without waiting
//    (locking_mode=EXCLUSIVE, BEGIN EXCLUSIVE); refused = in use. It keeps that lock to the
//    end, so a server starting meanwhile waits (busy timeout) instead of opening the old file;
// 3. the store holds no user or project, or --force was given (also for a store that
//    cannot be read: what it holds is unknown).
// Then the old store leaves WAL mode (SQLite folds in and deletes its -wal itself: a -wal
// left beside the restored file would be replayed into it), and the checked copy is renamed
// over it, atomically. A store that cannot be opened at all (garbage over it) is refused
// with what to do: move it aside.
import Database from 'better-sqlite3'
import { copyFileSync, existsSync, mkdirSync, renameSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { sqliteFile } from '../store/sqlite/file.js'
import { BackupError, checkDatabase, messageOf, removeIfPresent, syncFile, type StoreSummary } from './sqlite-backup.js'

export interface RestoreResult extends StoreSummary {
  path: string
  bytes: number
}

export function restoreBackup (options: { dataDir: string, file: string, force: boolean }): RestoreResult {
  const target = sqliteFile(options.dataDir)
  if (!existsSync(options.file)) throw new BackupError(`${options.file} does not exist; nothing changed`)
  if (!statSync(options.file).isFile()) throw new BackupError(`${options.file} is not a file; nothing changed`)
  mkdirSync(options.dataDir, { recursive: true })
  const incoming = `${target}.restoring`
  removeIfPresent(incoming)
  try {
    copyFileSync(options.file, incoming)
    const summary = checkDatabase(incoming, { name: options.file })
    syncFile(incoming)
    const lock = lockStore(target)
    try {
      // Out of WAL mode, the lock's own connection never touches a -wal again, not even
      // when it closes after the new store is in place.
      if (lock && refuseToOverwrite(lock, target, options.force) === 'readable') lock.pragma('journal_mode = DELETE')
      // Whatever -wal is left (a damaged store's, or one whose store was moved away) belongs
      // to no database any more, and would be replayed into the restored one. Nothing else
      // has it open: we hold the store's exclusive lock, or there is no store.
      removeIfPresent(`${target}-wal`)
      removeIfPresent(`${target}-shm`)
      renameSync(incoming, target)
      syncFile(dirname(target))
    } finally {
      lock?.close()
    }
    return { ...summary, path: target, bytes: statSync(target).size }
  } catch (error) {
    removeIfPresent(incoming)
    if (error instanceof BackupError) throw new BackupError(`${error.message}${error.message.endsWith('nothing changed') ? '' : '; nothing changed'}`)
    throw error
  }
}

/** An exclusive lock on the current store, or null when there is no store yet. */
function lockStore (target: string): Database.Database | null {
  if (!existsSync(target)) return null
  const db = new Database(target, { fileMustExist: true, timeout: 0 })
  try {
    // Before the first read: in exclusive mode a WAL database uses no shared memory and
    // keeps the lock it gets until closed.
    db.pragma('locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE')
    db.exec('COMMIT')
    return db
  } catch (error) {
    db.close()
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new BackupError(`the store at ${target} is in use (a server or another contentd command has it open); stop it first`)
    }
    // Garbage where the store was (a bad deploy wrote over it): SQLite reads the header
    // before it locks, so its lock cannot tell whether a process has the file open. The
    // operator, who can, moves it aside (keeping it to look at); a restore into an empty
    // place needs no lock.
    throw new BackupError(`the store at ${target} cannot be read (${messageOf(error)}), so whether a process has it open cannot be told: stop the servers, move it aside (mv ${target} ${target}.damaged) and restore again`)
  }
}

/**
 * Refuses to replace a store holding any user or project, or one that cannot be read (a bad
 * deploy wrote over it: what it holds is unknown), unless --force.
 */
function refuseToOverwrite (db: Database.Database, target: string, force: boolean): 'readable' | 'unreadable' {
  let users: number
  let projects: number
  try {
    const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[])
    const count = (table: string) => tables.has(table) ? db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number : 0
    users = count('users')
    projects = count('projects')
  } catch (error) {
    if (!force) throw new BackupError(`the store at ${target} cannot be read (${messageOf(error)}); add --force to replace it`)
    return 'unreadable'
  }
  if (users + projects > 0 && !force) {
    throw new BackupError(`the store at ${target} holds ${users} user${users === 1 ? '' : 's'} and ${projects} project${projects === 1 ? '' : 's'}; add --force to replace them`)
  }
  return 'readable'
}
