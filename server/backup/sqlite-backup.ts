// Online backups of the embedded store (docs/design.md §18): a consistent copy taken with
// SQLite's backup API while servers keep writing, never a file copy (a copy of a WAL
// database taken mid-write can miss committed pages or mix two states). The copy is made
// under a temporary name, checked (PRAGMA integrity_check and the shape of a contentd
// store), synced, and only then renamed to its final name: a file named contentd-*.sqlite
// is always a checked backup.
import Database from 'better-sqlite3'
import { closeSync, existsSync, fdatasyncSync, fsyncSync, openSync, readSync, renameSync, statSync, unlinkSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { MIGRATIONS } from '../store/sqlite/migrations.js'

/** A backup that cannot be made, or a file that is not a usable backup: one line, said as is. */
export class BackupError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'BackupError'
  }
}

export interface BackupResult {
  path: string
  bytes: number
}

/** Scheduled backups are named so; only such files count for BACKUP_KEEP and are pruned. */
export const BACKUP_NAME = /^contentd-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z)\.sqlite$/

/** contentd-2026-11-26T14-50-46.123Z.sqlite: UTC, sortable, no colons (not allowed everywhere). */
export function backupFileName (at: Date): string {
  return `contentd-${at.toISOString().replace(/:/g, '-')}.sqlite`
}

/** The moment a backup named by backupFileName began, or null for any other name. */
export function backupTimeOf (name: string): Date | null {
  const match = BACKUP_NAME.exec(name)
  if (!match) return null
  const iso = (match[1] as string).replace(/T(\d{2})-(\d{2})-(\d{2})/, 'T$1:$2:$3')
  const at = new Date(iso)
  return Number.isNaN(at.getTime()) ? null : at
}

/**
 * Copies the store file `source` to `destination` with SQLite's backup API, in steps of
 * PAGES_PER_STEP pages, each synced to disk before the next (pacedSync). The API starts over
 * when another connection writes between two steps, which under a steady write load would
 * never finish; so the source connection holds one read transaction across all the steps: a
 * snapshot of one moment that the steps copy, while writers go on (WAL readers never block
 * them) and no step sees their changes. Call it off the server's event loop
 * (backup-worker.ts): the steps take as long as reading and writing the file.
 */
export async function backupDatabase (source: string, destination: string): Promise<BackupResult> {
  if (!existsSync(source)) throw new BackupError(`there is no store at ${source} (is DATA_DIR right?)`)
  if (existsSync(destination)) throw new BackupError(`${destination} already exists; choose another --out`)
  const partial = `${destination}.partial`
  removeIfPresent(partial)
  const db = new Database(source, { fileMustExist: true })
  const synced = pacedSync(partial)
  try {
    db.pragma('busy_timeout = 5000')
    readThroughMemoryMap(db)
    // The snapshot: a read transaction begins at its first read, and every step reads in it.
    db.exec('BEGIN')
    db.prepare('SELECT count(*) FROM sqlite_master').get()
    await db.backup(partial, { progress: () => { synced.step(); return PAGES_PER_STEP } })
    db.exec('COMMIT')
  } catch (error) {
    synced.close()
    removeIfPresent(partial)
    throw new BackupError(`the backup of ${source} failed: ${messageOf(error)}`)
  } finally {
    db.close()
  }
  synced.close()
  try {
    // A backup is one self-contained file: no -wal beside it is needed to read it.
    // Mapped: the copy is our own file, just written (a restore checks a file it is given
    // with plain reads, the cautious way for a file that may be damaged).
    checkDatabase(partial, { journalMode: 'delete', memoryMapped: true })
    syncFile(partial)
    renameSync(partial, destination)
    syncFile(dirname(destination))
  } catch (error) {
    removeIfPresent(partial)
    throw error instanceof BackupError ? error : new BackupError(`the backup of ${source} failed: ${messageOf(error)}`)
  }
  return { path: destination, bytes: statSync(destination).size }
}

/** 8 MiB of 4 KiB pages: what one step copies before the copy so far is synced. */
const PAGES_PER_STEP = 2048

/**
 * Syncs the copy after every step. Left to the kernel, a copy made at memory speed piles up
 * dirty pages far faster than the disk takes them, and the server's own WAL syncs wait behind
 * all of them: the increment p99 during a 1 GiB backup was 2.3-4.4× the quiet one, and with a
 * sync every 8 MiB 0.96-1.16× (BENCHMARKS.md, "What the benchmark changed in the server"). Each step's sync waits
 * for at most 8 MiB.
 */
function pacedSync (path: string): { step (): void, close (): void } {
  let fd: number | undefined
  return {
    step () {
      // The first step creates the copy; from then on it is there to sync.
      fd ??= existsSync(path) ? openSync(path, 'r') : undefined
      if (fd !== undefined) fdatasyncSync(fd)
    },
    close () {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
    }
  }
}

/**
 * Lets SQLite read the file's pages from a memory map instead of one read() per page: a copy
 * or an integrity check of a 1 GiB store is 262,144 pages, and per-page reads were most of
 * the system time (BENCHMARKS.md, "Backup under load"). Only for these short-lived
 * connections: the mapped pages are the page cache's (file-backed, reclaimable, shown in RSS
 * while mapped) and are unmapped when the connection closes. SQLite maps at most its
 * compile-time maximum (2 GiB in better-sqlite3's build) and reads the rest as before. A
 * mapped file must not shrink under us: the copy is one read transaction, which keeps any
 * checkpoint from completing (and so from truncating the store), and the check is of our own
 * copy, which nothing else has open.
 */
function readThroughMemoryMap (db: Database.Database): void {
  db.pragma(`mmap_size = ${MEMORY_MAP_BYTES}`)
}

const MEMORY_MAP_BYTES = 2 ** 31

export interface StoreSummary {
  users: number
  projects: number
}

/**
 * Checks that `path` is a whole, uncorrupted contentd store this version can open: an SQLite
 * file of the length its header says, passing integrity_check, with contentd's tables at a
 * schema version no newer than this one. Opens it read-write (it must be a file of our own:
 * a copy) and, with `journalMode`, sets that journal mode; `memoryMapped` reads it through a
 * memory map (readThroughMemoryMap). Throws a BackupError naming what is wrong.
 */
export function checkDatabase (path: string, options: { journalMode?: 'delete' | 'wal', name?: string, memoryMapped?: boolean } = {}): StoreSummary {
  const name = options.name ?? basename(path)
  checkHeader(path, name)
  let db: Database.Database | undefined
  try {
    db = new Database(path, { fileMustExist: true })
    if (options.memoryMapped === true) readThroughMemoryMap(db)
    const problems = db.pragma('integrity_check') as Array<{ integrity_check: string }>
    const first = problems[0]?.integrity_check
    if (first !== 'ok') throw new BackupError(`${name} is corrupted (integrity_check: ${oneLine(first ?? 'no answer')})`)
    const schemaVersion = db.pragma('user_version', { simple: true }) as number
    const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[])
    if (schemaVersion === 0 || !tables.has('users') || !tables.has('projects')) throw new BackupError(`${name} is an SQLite file but not a contentd store`)
    if (schemaVersion > MIGRATIONS.length) throw new BackupError(`${name} was made by a newer contentd (schema ${schemaVersion}, this one knows ${MIGRATIONS.length})`)
    const summary = {
      users: db.prepare('SELECT count(*) FROM users').pluck().get() as number,
      projects: db.prepare('SELECT count(*) FROM projects').pluck().get() as number
    }
    if (options.journalMode) db.pragma(`journal_mode = ${options.journalMode}`)
    return summary
  } catch (error) {
    if (error instanceof BackupError) throw error
    throw new BackupError(`${name} is corrupted (${oneLine(messageOf(error))})`)
  } finally {
    db?.close()
  }
}

const HEADER = Buffer.from('SQLite format 3\0', 'latin1')

/**
 * The header's own account of the file: the magic string, and the page count times the page
 * size (bytes 28 and 16, valid when the change counter at 24 equals the one at 92, as every
 * SQLite since 3.7 writes) equal to the file's length. A file cut short fails here, with a
 * clear message, before SQLite reads a missing page.
 */
function checkHeader (path: string, name: string): void {
  const header = Buffer.alloc(100)
  const fd = openSync(path, 'r')
  let read: number
  try {
    read = readSync(fd, header, 0, 100, 0)
  } finally {
    closeSync(fd)
  }
  if (read < 100 || !header.subarray(0, 16).equals(HEADER)) throw new BackupError(`${name} is not an SQLite database${read === 0 ? ' (it is empty)' : ''}`)
  const pageSizeField = header.readUInt16BE(16)
  const pageSize = pageSizeField === 1 ? 65536 : pageSizeField
  const pages = header.readUInt32BE(28)
  if (header.readUInt32BE(24) !== header.readUInt32BE(92) || pages === 0) return
  const expected = pages * pageSize
  const actual = statSync(path).size
  if (actual < expected) throw new BackupError(`${name} is truncated: ${actual} bytes, its header says ${expected}`)
}

export function syncFile (path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

export function removeIfPresent (path: string): void {
  try {
    unlinkSync(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

/** SQLite's integrity report spans lines; a refusal is one. */
function oneLine (text: string): string {
  return text.split('\n').map(line => line.trim()).filter(line => line !== '' && !line.startsWith('***')).join('; ')
}

export function messageOf (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
