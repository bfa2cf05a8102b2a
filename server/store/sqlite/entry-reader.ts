// Large pages of the change log are read on a worker thread (entry-reader-worker.ts): SQLite
// gathers a 7 MB entry from its overflow pages in tens of ms, which held the event loop for
// every SSE replay burst, changes page and Socket.IO resume ack of such entries while another
// user waited (issue 26, docs/design.md §13b). The page's extent is settled on the event loop
// first, from the sizes kept beside the entries (content-log.ts); the worker only reads those
// entries. Entries never change once written, but retention may delete them meanwhile: a page
// that comes back short is HISTORY_EXPIRED, as the same read a moment later would be.
//
// One worker, started on the first large read, ends with the store. Without its compiled file
// (the sources run by the tests in this process) the reads stay on the event loop.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { ContentdError } from '../../../shared/errors.js'
import type { EntryReadAnswer, EntryReadRequest } from './entry-reader-worker.js'

const WORKER_FILE = new URL('./entry-reader-worker.js', import.meta.url)

export class EntryReader {
  private worker: Worker | null = null
  private nextId = 0
  private readonly pending = new Map<number, { resolve (entries: Buffer[]): void, reject (error: Error): void, count: number }>()

  /** Whether reads can go to the worker. */
  readonly available: boolean

  /** `file`: the database file; null (in memory) keeps every read on the event loop. */
  /** `pageCacheBytes`: the worker connection's SQLite page cache (SQLITE_CACHE_BYTES). */
  constructor (private readonly file: string | null, private readonly busyTimeoutMs: number, private readonly pageCacheBytes: number) {
    this.available = file !== null && existsSync(fileURLToPath(WORKER_FILE))
  }

  /** The `count` entries after `after` up to `last`, as stored (UTF-8 JSON without `project`). */
  read (projectId: string, after: number, last: number, count: number): Promise<Buffer[]> {
    const worker = this.started()
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, count })
      worker.postMessage({ id, projectId, after, last } satisfies EntryReadRequest)
    })
  }

  async close (): Promise<void> {
    const worker = this.worker
    this.worker = null
    this.failAll(new ContentdError('STORE_UNAVAILABLE'))
    await worker?.terminate()
  }

  private started (): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(WORKER_FILE, { workerData: { file: this.file, busyTimeoutMs: this.busyTimeoutMs, pageCacheBytes: this.pageCacheBytes } })
    // Idle, it does not keep the process alive.
    worker.unref()
    worker.on('message', (answer: EntryReadAnswer) => this.answered(answer))
    const fail = () => {
      if (this.worker === worker) this.worker = null
      this.failAll(new ContentdError('STORE_UNAVAILABLE'))
    }
    worker.on('error', fail)
    worker.on('exit', fail)
    this.worker = worker
    return worker
  }

  private answered (answer: EntryReadAnswer): void {
    const waiting = this.pending.get(answer.id)
    if (!waiting) return
    this.pending.delete(answer.id)
    if (!answer.ok) { waiting.reject(new ContentdError('STORE_UNAVAILABLE', answer.message)); return }
    // Structured cloning hands Buffers over as Uint8Arrays.
    const entries = answer.entries.map(entry => Buffer.from(entry.buffer, entry.byteOffset, entry.byteLength))
    if (entries.length !== waiting.count) { waiting.reject(new ContentdError('HISTORY_EXPIRED', 'the change log was pruned while it was read')); return }
    waiting.resolve(entries)
  }

  private failAll (error: Error): void {
    for (const waiting of this.pending.values()) waiting.reject(error)
    this.pending.clear()
  }
}
