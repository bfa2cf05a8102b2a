// Syncs a file to disk every tenth of a second while a backup writes it
// (sqlite-backup.ts). Left alone, the copy's gigabyte stays dirty in the page cache until the
// backup's one fsync at the end, and that fsync holds up every other sync on the disk for as
// long as the whole gigabyte takes to write: the server's WAL syncs, so its writers' answers.
// Synced as it goes, each sync carries a tenth of a second of the copy, and the server's
// syncs wait for about that much (BENCHMARKS.md, 2026-11-27: the increment's p99 during a
// 1 GiB backup 3.6-14.6× the quiet one without, 1.56-2.54× with). The loop blocks this thread only: the stop
// signal is a shared flag (Atomics), since no message could reach a thread that never yields.
import { closeSync, fdatasyncSync, openSync } from 'node:fs'
import { workerData } from 'node:worker_threads'

const { path, intervalMs, stop } = workerData as { path: string, intervalMs: number, stop: SharedArrayBuffer }
const stopped = new Int32Array(stop)
let fd: number | undefined
try {
  while (Atomics.load(stopped, 0) === 0) {
    Atomics.wait(stopped, 0, 0, intervalMs)
    if (fd === undefined) {
      try {
        fd = openSync(path, 'r')
      } catch {
        continue // not created yet
      }
    }
    fdatasyncSync(fd)
  }
} catch {
  // The file went away (the backup failed and removed it): nothing left to sync.
} finally {
  if (fd !== undefined) closeSync(fd)
}
