// The durable outbox of one project (docs/design.md §19): the writes made and not yet
// acknowledged, in the order they were made, each with the Idempotency-Key it got when it was
// made. A write is in the store before `add` resolves, and leaves it only once the server
// answered it (applied, or refused). Bounded (docs/design.md §13b): at most `maxWrites`
// writes and `maxBytes` of their JSON; past either, `add` refuses with OUTBOX_FULL and
// nothing is queued, so an app offline for long cannot fill its disk without noticing.
import type { Json } from '../../json.js'
import { ContentdClientError } from '../errors.js'
import type { OfflineStore } from './storage.js'

/** One queued write: the request as it will be sent, and what the local copy was based on. */
export interface QueuedWrite {
  /** The order writes were made in (ascending within a project). */
  seq: number
  /** Its Idempotency-Key, chosen when it was made. */
  key: string
  method: 'POST' | 'PATCH'
  /** After `…/content`: "" (update, or PATCH), "/increment", "/batch", … */
  suffix: string
  body: Json
  /** If-Match, as the app asked. */
  ifVersion?: number
  /** The server version the local copy was based on when the write was made. */
  baseVersion?: number
  /** When it was made (ISO). */
  at: string
}

export interface OutboxLimits {
  /** Writes queued at most (default 10000). */
  maxWrites: number
  /** Bytes of the queued writes' JSON at most (default 8 MiB). */
  maxBytes: number
}

export const DEFAULT_OUTBOX_LIMITS: OutboxLimits = { maxWrites: 10_000, maxBytes: 8 * 1024 * 1024 }

const utf8 = new TextEncoder()
const sizeOf = (write: QueuedWrite) => utf8.encode(JSON.stringify(write)).length

export class Outbox {
  private writes: QueuedWrite[] = []
  private bytes = 0
  private nextSeq = 1

  constructor (private readonly store: OfflineStore, private readonly prefix: string, private readonly limits: OutboxLimits) {}

  /** Reads the queued writes back from the store (at start). */
  async load (): Promise<void> {
    const writes: QueuedWrite[] = []
    for (const key of await this.store.keys(this.prefix)) {
      const write = await this.store.get(key) as QueuedWrite | undefined
      if (write) writes.push(write)
    }
    this.writes = writes.sort((a, b) => a.seq - b.seq)
    this.bytes = this.writes.reduce((sum, write) => sum + sizeOf(write), 0)
    this.nextSeq = (this.writes.at(-1)?.seq ?? 0) + 1
  }

  get pending (): readonly QueuedWrite[] { return this.writes }
  get size (): { writes: number, bytes: number } { return { writes: this.writes.length, bytes: this.bytes } }

  /** Queues a write durably; OUTBOX_FULL (nothing queued) past the limits. */
  async add (write: Omit<QueuedWrite, 'seq'>): Promise<QueuedWrite> {
    const queued: QueuedWrite = { ...write, seq: this.nextSeq }
    const bytes = sizeOf(queued)
    if (this.writes.length + 1 > this.limits.maxWrites || this.bytes + bytes > this.limits.maxBytes) {
      throw new ContentdClientError(0, 'OUTBOX_FULL', `the offline outbox holds ${this.writes.length} writes (${this.bytes} bytes); its limits are ${this.limits.maxWrites} writes and ${this.limits.maxBytes} bytes`)
    }
    this.nextSeq += 1
    // Counted before the await: writes made meanwhile see the room this one takes.
    this.writes.push(queued)
    this.bytes += bytes
    try {
      await this.store.put(this.keyOf(queued.seq), queued as unknown as Json)
    } catch (error) {
      this.drop(queued)
      throw error
    }
    return queued
  }

  /** Removes an answered write, durably. */
  async remove (write: QueuedWrite): Promise<void> {
    await this.store.delete(this.keyOf(write.seq))
    this.drop(write)
  }

  private drop (write: QueuedWrite): void {
    const index = this.writes.indexOf(write)
    if (index < 0) return
    this.writes.splice(index, 1)
    this.bytes -= sizeOf(write)
  }

  // Zero-padded, so the store's key order is the order the writes were made in.
  private keyOf (seq: number): string {
    return this.prefix + String(seq).padStart(12, '0')
  }
}
