// Reads change-log entries on a worker thread for entry-reader.ts: a 7 MB entry takes SQLite
// tens of ms to gather from its overflow pages, which the event loop must not wait for
// (docs/design.md §13b). Read-only, its own connection; each entry comes back as a Buffer whose
// memory is transferred, not copied.
import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'
import { cacheSizePragma } from './page-cache.js'

export interface EntryReadRequest { id: number, projectId: string, after: number, last: number }
export type EntryReadAnswer = { id: number, ok: true, entries: Buffer[] } | { id: number, ok: false, message: string }

const { file, busyTimeoutMs, pageCacheBytes } = workerData as { file: string, busyTimeoutMs: number, pageCacheBytes: number }
const db = new Database(file, { readonly: true, fileMustExist: true })
db.pragma(`busy_timeout = ${busyTimeoutMs}`)
db.pragma(cacheSizePragma(pageCacheBytes))
const entriesBetween = db.prepare('SELECT CAST(entry AS BLOB) FROM changes WHERE project_id = ? AND version > ? AND version <= ? ORDER BY version').pluck()

parentPort?.on('message', (request: EntryReadRequest) => {
  try {
    const entries = entriesBetween.all(request.projectId, request.after, request.last) as Buffer[]
    // A Buffer that is all of its ArrayBuffer can be handed over; one that shares it (a pool) is copied.
    const transfer = entries.filter(entry => entry.byteOffset === 0 && entry.byteLength === entry.buffer.byteLength).map(entry => entry.buffer as ArrayBuffer)
    parentPort?.postMessage({ id: request.id, ok: true, entries } satisfies EntryReadAnswer, transfer)
  } catch (error) {
    parentPort?.postMessage({ id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) } satisfies EntryReadAnswer)
  }
})
