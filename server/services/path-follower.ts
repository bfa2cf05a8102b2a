// One follower of one path of a project (docs/design.md §15): from a starting version, every
// later change that touches the path exactly once, in version order, each as a path
// subscription is sent it (shared/live-path.ts), whatever order live changes arrive in.
// Shared by the Socket.IO path subscriptions (realtime/path-subscriptions.ts) and the SSE
// path stream (http/path-change-stream.ts).
//
// The same order as the whole-project SSE stream (http/change-stream.ts), from the same
// primitive (feed/version-order.ts): listen before reading, deal only with the version right
// after the last one dealt with, and read what is missing from the durable log — here through
// the path index (store/path-changes.ts), so a gap costs the path's changes, not the
// project's. A change above the path whose value at the path the entry does not say (a push
// above it, a shift, a batch) reads the content at its version (readContentAt, bounded by
// checkpoints). At most MAX_HELD live changes wait.
import type { ChangeSource } from '../feed/change-feed.js'
import { MAX_HELD, VersionOrder } from '../feed/version-order.js'
import type { ChangeEntry } from '../../shared/events.js'
import { changeTouches, pathChangeOf, projectedChange, valueAtPath, type PathChange } from '../../shared/live-path.js'
import { dotSegments } from '../../shared/path.js'
import { CONTENT_READS_PER_PAGE, readPathChanges } from '../store/path-changes.js'
import type { ContentStorage, ProjectRecord } from '../store/types.js'

/** Entries of the path's history read at once while catching up. */
const CATCH_UP_PAGE = 1000

export interface PathFollowerOptions {
  feed: ChangeSource
  store: Pick<ContentStorage, 'readPathEntries' | 'readContentAt'>
  project: ProjectRecord
  /** A valid dot path. */
  path: string
  /** CHANGES_PAGE_BYTES: one catch-up read holds at most this much. */
  pageBytes: number
  /** Each change that touches the path, in version order, once. */
  send (change: PathChange): void
  /** The follower stopped on an error (HISTORY_EXPIRED while it lagged, the store failing). */
  fail (error: unknown): void
}

export class PathFollower {
  /**
   * Every change up to its version has been dealt with (sent, or found not to touch the
   * path); no version until start(), so everything heard before it is held.
   */
  private readonly order = new VersionOrder<ChangeEntry>(MAX_HELD)
  private stopped = false
  private readonly segments: string[]
  private readonly stopListening: () => void

  /** Listens at once: changes committed from now on are held until start(). */
  constructor (private readonly options: PathFollowerOptions) {
    this.segments = dotSegments(options.path)
    // The one place live paths hear committed changes (docs/design.md §15).
    this.stopListening = options.feed.subscribe(options.project.id, change => this.receive(change))
  }

  /** The version up to which everything has been dealt with. */
  get version (): number { return this.order.version ?? 0 }

  /**
   * Starts from `from` (what the client has: a snapshot's or an ack's version). `behind`:
   * the log may hold changes after `from` not heard live (a resume from an older version).
   */
  start (from: number, behind = false): void {
    if (this.stopped) return
    // Live changes dropped while held before the start (past MAX_HELD) are read from the log.
    this.order.startAt(from, behind)
    void this.pump()
  }

  stop (): void {
    if (this.stopped) return
    this.stopped = true
    this.order.clearHeld()
    this.stopListening()
  }

  private receive (change: ChangeEntry): void {
    if (this.stopped || !this.order.offer(change)) return
    if (this.order.version !== null) void this.pump()
  }

  private async pump (): Promise<void> {
    try {
      await this.order.pump({
        deliver: change => this.deliver(change),
        readMissing: since => this.readMissing(since),
        stopped: () => this.stopped
      })
    } catch (error) {
      if (!this.stopped) {
        this.stop()
        this.options.fail(error)
      }
    }
  }

  /** A live change in order: sent if it touches the path (a promise only if the content must be read). */
  private deliver (change: ChangeEntry): void | Promise<void> {
    if (!changeTouches(change, this.segments)) return
    const sent = pathChangeOf(change, this.options.path)
    if (sent) {
      this.options.send(sent)
      return
    }
    return this.sendFromContent(change)
  }

  private async sendFromContent (change: ChangeEntry): Promise<void> {
    const sent = await this.projectFromContent(change)
    if (!this.stopped) this.options.send(sent)
  }

  /** Sends the path's changes after `since` from its history, a page at a time. */
  private async readMissing (since: number): Promise<boolean> {
    const page = await readPathChanges(this.options.store, this.options.project, { path: this.options.path, since, limit: CATCH_UP_PAGE, pageBytes: this.options.pageBytes, contentReads: CONTENT_READS_PER_PAGE })
    if (this.stopped) return false
    for (const change of page.changes) {
      if (change.version <= (this.order.version ?? since)) continue
      this.options.send(change)
      this.order.advanceTo(change.version)
    }
    // Not more: the page read the path's history up to the project's version then, so every
    // change up to it has been dealt with, touching the path or not.
    if (page.more) this.order.markBehind()
    else this.order.advanceTo(page.version)
    return true
  }

  private async projectFromContent (change: ChangeEntry): Promise<PathChange> {
    const snapshot = await this.options.store.readContentAt(this.options.project.id, change.version)
    // A copy: the snapshot may be the store's live document, which later writes change in place.
    const after = valueAtPath(snapshot.content, this.segments)
    return projectedChange(change, this.options.path, after.exists ? { exists: true, value: structuredClone(after.value) } : after)
  }
}
