// One Server-Sent Events stream of a project's changes (docs/design.md §9): from a starting
// version (a snapshot's, or the client's Last-Event-ID / ?since=) every later change exactly
// once, in version order, then live.
//
// No gap and no duplicate, whatever the order changes arrive in: the stream listens for live
// changes BEFORE it reads the log, so a change committed during the read is heard live even if
// the read missed it; the order (server/feed/version-order.ts) sends only the change right
// after the last one sent and drops repeats; whatever is missing (a gap, or live changes let
// go because too many were held) is read from the durable log here.
//
// Memory per stream is bounded: at most MAX_HELD live changes wait while the stream catches
// up (beyond that they are dropped and read from the log later); the backlog is written a
// page at a time, the next once the client has taken the last; and a client that does not
// read live changes is disconnected once its response buffers pass `bufferBytes`
// (SOCKET_SEND_BUFFER), or when the user's or the process's streams together hold too much
// (`onWritten` reports to the budget, services/unsent-budget.ts, which may `drop` it); it
// resumes with Last-Event-ID. A live change is framed once for every stream (liveFrameOf).
// Writing, the bound and ending are the SSE scaffold's (sse-response.ts SseWriter).
import type { ChangeEntry } from '../../shared/events.js'
import { MAX_HELD, VersionOrder } from '../feed/version-order.js'
import { wireOf } from '../feed/wire.js'
import { changeEvents } from '../store/change-pages.js'
import type { ProjectRecord, Store } from '../store/types.js'
import { SharedFrame, SseWriter, sseFrame, type SseWriterOptions } from './sse-response.js'

/**
 * Log entries read, and written as one chunk (a replay burst), at once while catching up
 * (the changes API's largest page); the store also ends a page at CHANGES_PAGE_BYTES
 * (docs/design.md §13b), so a burst holds at most that many bytes of entries, however large
 * they are. The next page is read only once the client has taken this one.
 */
const CATCH_UP_PAGE = 1000

/**
 * One change as an event: its version as id, the entry as data (JSON has no raw newline),
 * the change's one wire form (server/feed/wire.ts), which the other transports send too.
 */
function frameOf (change: ChangeEntry): string {
  return sseFrame(change.version, 'change', wireOf(change))
}

/**
 * The live feed hands a change to every stream of the project in one loop, as the same entry
 * object, so it is framed once, into one Buffer that every stream's socket writes from (and
 * holds by reference while its client does not read: a shared Buffer is not copied per
 * stream, a string is). docs/design.md §13b: each change is serialized once for all streams.
 * The frame is also framed once as an HTTP chunk, which each stream writes straight to its
 * socket (sse-chunk.ts SharedFrame). One frame is kept, until the end of the turn: not a map
 * of them, which would keep a serialized copy of every entry something else still holds
 * (the Socket.IO feed's history).
 */
let lastLive: { change: ChangeEntry, frame: SharedFrame } | null = null
let forgetting = false

export function liveFrameOf (change: ChangeEntry): SharedFrame {
  if (lastLive?.change !== change) {
    lastLive = { change, frame: new SharedFrame(Buffer.from(frameOf(change))) }
    if (!forgetting) {
      forgetting = true
      setImmediate(() => { forgetting = false; lastLive = null })
    }
  }
  return lastLive.frame
}

export interface ChangeStreamOptions extends SseWriterOptions {
  store: Store
  project: ProjectRecord
}

export class ChangeStream {
  /** The response, written through the SSE scaffold (its bound, revoke, drop, close). */
  readonly out: SseWriter
  /** Up to its `version` every change has been sent; held live changes wait there. */
  private readonly order: VersionOrder<ChangeEntry>
  private started = false

  /** `from`: the version the client has; `behind`: whether the log may have later ones. */
  constructor (private readonly options: ChangeStreamOptions, from: number, behind: boolean) {
    this.order = new VersionOrder(MAX_HELD, from, behind)
    this.out = new SseWriter({ ...options, onEnd: () => { this.order.clearHeld(); options.onEnd() } })
  }

  private get ended (): boolean { return this.out.isEnded }

  /** A live change (from this node or another), in any order, possibly already sent. */
  receive (change: ChangeEntry): void {
    if (this.ended || !this.order.offer(change)) return
    if (this.started) void this.pump()
  }

  /**
   * Starts sending: what the log has after the starting version, then what comes live.
   * `snapshotVersion`: the stream began with a snapshot at that version instead.
   */
  start (snapshotVersion?: number): void {
    if (snapshotVersion !== undefined) this.order.startAt(snapshotVersion)
    this.started = true
    void this.pump()
  }

  /** Ends the response (a failure the client recovers from by reconnecting). */
  private close (): void {
    this.out.close()
  }

  private async pump (): Promise<void> {
    try {
      await this.order.pump({
        deliver: change => { this.out.write(liveFrameOf(change)) },
        readMissing: since => this.readMissing(since),
        stopped: () => this.ended
      })
    } catch {
      // The log no longer has what the client needs (retention moved past it while it lagged)
      // or the store failed: end the stream; the client reconnects with Last-Event-ID and
      // gets the plain HTTP answer (410 HISTORY_EXPIRED: take a snapshot).
      this.close()
    }
  }

  /** Writes the log's next page after `since` (a held change waits for what comes before it). */
  private async readMissing (since: number): Promise<boolean> {
    const heardBeforeRead = this.order.highestHeld()
    // The entries' JSON as stored, framed as it is (changeEvents): a 7 MB entry costs a
    // copy, not a parse and a serialization (docs/design.md §13b).
    const page = await this.options.store.readChangesJson(this.options.project, since, CATCH_UP_PAGE)
    // Only the pump sends, so the page starts right after `since`; checked all the same.
    const skip = page.entries.findIndex(entry => entry.version > since)
    const fresh = skip < 0 ? [] : page.entries.slice(skip)
    if (fresh.length > 0 && fresh[0]?.version === since + 1) {
      this.order.advanceTo(fresh[fresh.length - 1]?.version ?? since)
      // The backlog goes at the client's pace (a page at a time), so it is not held to
      // the slow-consumer cap that live changes are.
      this.out.writePaced(changeEvents({ ...page, entries: fresh }))
    }
    await this.drained()
    if (this.ended) return false
    if (page.more) this.order.markBehind()
    // The log had nothing after `since` although a later change had already been heard
    // when the read began: the gap cannot be bridged (never expected). Drop what is held
    // rather than spin; the next live change starts a new read.
    if (this.order.version === since && !page.more && heardBeforeRead > since && this.order.highestHeld() <= heardBeforeRead) {
      this.order.clearHeld()
      return false
    }
    return true
  }

  /** While catching up, goes at the client's pace instead of buffering the whole backlog. */
  private async drained (): Promise<void> {
    await this.out.drained()
  }
}
