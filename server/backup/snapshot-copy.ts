// A consistent copy of a WAL-mode SQLite store at the speed of a file copy (docs/design.md
// §18). SQLite's backup API copies page by page through two pagers, 5–7× slower than `cp`
// on the same file; here the kernel copies the file, and the write-ahead log's frames of one
// snapshot are laid over it, as SQLite itself would read them. Why the copy is that snapshot:
//
// - A read transaction pins a snapshot: the last commit frame it sees (its mark M). While it
//   is open, no checkpoint copies a frame past M into the database file, and the log is not
//   restarted while the snapshot needs frames of it (SQLite's WAL locking: a checkpoint
//   stops at the smallest reader mark; a restart needs every reader off the log).
// - M is read while this process holds the write lock (BEGIN IMMEDIATE), so that it is the
//   snapshot's: the log's last commit frame, `mxFrame` of the wal-index header in the -shm
//   file (https://www.sqlite.org/walformat.html, "The WAL-Index Header"); the lock is held only
//   for that instant. (The log file's length says nothing: a restarted log is overwritten from
//   its start, and keeps its old length.)
// - The database file, read while the snapshot is open, holds for every page either the
//   version of the snapshot or an older one; a page that is older has a frame at or before M,
//   and the newest such frame is laid over it. Frames are checked as SQLite's recovery checks
//   them (the header's salts, the running checksum, a commit frame at M); the snapshot's page
//   count sets the file's length.
// - A reader whose snapshot needs no frame (every frame already in the file) reads the file
//   alone, and no checkpoint writes to the file while it reads; the log may then be restarted
//   under it, which the salts reveal: the frames read before that are already in the file.
//
// The caller checks the copy (integrity_check) before calling it a backup.
import Database from 'better-sqlite3'
import { closeSync, copyFileSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs'
import { endianness } from 'node:os'

const WAL_HEADER_BYTES = 32
const FRAME_HEADER_BYTES = 24
const WAL_INDEX_HEADER_BYTES = 48
/** The log's magic numbers: the low bit says whether checksums read words big-endian. */
const WAL_MAGIC = 0x377f0682

/** Copies the database `source` (in WAL mode, or with no log) to `destination`, as of one moment. */
export function copySnapshot (source: string, destination: string): void {
  const reader = new Database(source, { fileMustExist: true })
  try {
    reader.pragma('busy_timeout = 5000')
    const pageSize = reader.pragma('page_size', { simple: true }) as number
    const { lastFrame, salts } = pinSnapshot(reader, source)
    try {
      // The pages of the snapshot: a read inside the pinned transaction.
      const pageCount = reader.pragma('page_count', { simple: true }) as number
      const logFile = `${source}-wal`
      copyFileSync(source, destination)
      const out = openSync(destination, 'r+')
      try {
        if (salts !== null && lastFrame > 0) {
          const laid = layFrames(logFile, lastFrame, salts, pageSize, out)
          // A log restarted (or truncated) meanwhile means the snapshot reads the file alone,
          // which no checkpoint may then change: the file as it is now is the snapshot.
          if (saltsOf(logFile) !== salts) copyFileSync(source, destination)
          else if (!laid) throw new Error(`the write-ahead log ${logFile} does not hold the frames its index names`)
        }
        ftruncateSync(out, pageCount * pageSize)
      } finally {
        closeSync(out)
      }
    } finally {
      reader.exec('COMMIT')
    }
  } finally {
    reader.close()
  }
}

/**
 * Opens a read transaction on `reader` while another connection holds the write lock, so
 * that no commit (and no restart of the log) lands between the snapshot and the reading of
 * the wal-index: its last frame is the snapshot's last frame, and the log's salts are those
 * of the snapshot's frames.
 */
function pinSnapshot (reader: Database.Database, source: string): { lastFrame: number, salts: string | null } {
  const writer = new Database(source, { fileMustExist: true })
  try {
    writer.pragma('busy_timeout = 5000')
    writer.exec('BEGIN IMMEDIATE')
    try {
      reader.exec('BEGIN')
      reader.prepare('SELECT count(*) FROM sqlite_master').pluck().get()
      return { lastFrame: lastFrameOf(`${source}-shm`), salts: saltsOf(`${source}-wal`) }
    } finally {
      writer.exec('ROLLBACK')
    }
  } finally {
    writer.close()
  }
}

/** The log header's two salts as one string (they change when the log restarts), or null. */
function saltsOf (logFile: string): string | null {
  let log: number
  try {
    log = openSync(logFile, 'r')
  } catch {
    return null
  }
  try {
    const header = readExactly(log, WAL_HEADER_BYTES, 0)
    return header === null ? null : header.subarray(16, 24).toString('hex')
  } finally {
    closeSync(log)
  }
}

/**
 * `mxFrame` of the wal-index header: the last frame of the last commit (0: none, or no
 * -shm file, as in rollback-journal mode). The header is kept twice, in the machine's byte
 * order; both copies agree while the write lock is held.
 */
function lastFrameOf (shmFile: string): number {
  let shm: number
  try {
    shm = openSync(shmFile, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw error
  }
  try {
    const headers = readExactly(shm, 2 * WAL_INDEX_HEADER_BYTES, 0)
    if (headers === null) return 0
    const first = headers.subarray(0, WAL_INDEX_HEADER_BYTES)
    if (!first.equals(headers.subarray(WAL_INDEX_HEADER_BYTES))) throw new Error('the wal-index header is being written; try again')
    return endianness() === 'LE' ? first.readUInt32LE(16) : first.readUInt32BE(16)
  } finally {
    closeSync(shm)
  }
}

/**
 * Writes into `out` the newest page of each of the log's frames 1..`lastFrame`, checked as
 * SQLite's recovery checks them (salts, running checksum, a commit frame last). False when
 * the log no longer holds them (restarted or truncated since: see copySnapshot).
 */
function layFrames (logFile: string, lastFrame: number, snapshotSalts: string, pageSize: number, out: number): boolean {
  const log = openSync(logFile, 'r')
  try {
    const header = readExactly(log, WAL_HEADER_BYTES, 0)
    if (header === null || header.subarray(16, 24).toString('hex') !== snapshotSalts) return false
    if ((header.readUInt32BE(0) & ~1) >>> 0 !== WAL_MAGIC || header.readUInt32BE(8) !== pageSize) return false
    const bigEndian = (header.readUInt32BE(0) & 1) === 1
    let checksum = walChecksum(header.subarray(0, 24), [0, 0], bigEndian)
    if (checksum[0] !== header.readUInt32BE(24) || checksum[1] !== header.readUInt32BE(28)) return false
    const salt1 = header.readUInt32BE(16)
    const salt2 = header.readUInt32BE(20)
    const frameBytes = FRAME_HEADER_BYTES + pageSize
    // Where each page's newest frame of the snapshot is.
    const newest = new Map<number, number>()
    for (let frameNumber = 1; frameNumber <= lastFrame; frameNumber++) {
      const offset = WAL_HEADER_BYTES + (frameNumber - 1) * frameBytes
      const frame = readExactly(log, frameBytes, offset)
      if (frame === null || frame.readUInt32BE(8) !== salt1 || frame.readUInt32BE(12) !== salt2) return false
      checksum = walChecksum(frame.subarray(FRAME_HEADER_BYTES), walChecksum(frame.subarray(0, 8), checksum, bigEndian), bigEndian)
      if (checksum[0] !== frame.readUInt32BE(16) || checksum[1] !== frame.readUInt32BE(20)) return false
      // The snapshot ends with a commit frame (its database size is not 0).
      if (frameNumber === lastFrame && frame.readUInt32BE(4) === 0) return false
      newest.set(frame.readUInt32BE(0), offset + FRAME_HEADER_BYTES)
    }
    const data = Buffer.allocUnsafe(pageSize)
    for (const [page, at] of newest) {
      if (readSync(log, data, 0, pageSize, at) !== pageSize) return false
      writeSync(out, data, 0, pageSize, (page - 1) * pageSize)
    }
    return true
  } finally {
    closeSync(log)
  }
}

/** SQLite's WAL checksum (wal.c, walChecksumBytes): two running 32-bit sums over word pairs. */
export function walChecksum (bytes: Buffer, seed: readonly [number, number], bigEndian: boolean): [number, number] {
  let s1 = seed[0]
  let s2 = seed[1]
  for (let i = 0; i + 8 <= bytes.length; i += 8) {
    const x0 = bigEndian ? bytes.readUInt32BE(i) : bytes.readUInt32LE(i)
    const x1 = bigEndian ? bytes.readUInt32BE(i + 4) : bytes.readUInt32LE(i + 4)
    s1 = (s1 + x0 + s2) >>> 0
    s2 = (s2 + x1 + s1) >>> 0
  }
  return [s1, s2]
}

function readExactly (fd: number, length: number, position: number): Buffer | null {
  const buffer = Buffer.allocUnsafe(length)
  return readSync(fd, buffer, 0, length, position) === length ? buffer : null
}
