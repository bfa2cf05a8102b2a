// One follower of one path of a project (docs/design.md §15): from a starting version, every
// later change that touches the path exactly once, in version order, each as a path
// subscription is sent it (shared/live-path.ts), whatever order live changes arrive in.
// Shared by the Socket.IO path subscriptions (realtime/path-subscriptions.ts) and the SSE
// path stream (http/path-change-stream.ts).
//
// The same rules as the whole-project SSE stream (http/change-stream.ts): listen before
// reading, process only the version right after the last one processed, and read what is
// missing from the durable log — here through the path index (store/path-changes.ts), so a
// gap costs the path's changes, not the project's. A change above the path whose value at the
// path the entry does not say (a push above it, a shift, a batch) reads the content at its
// version (readContentAt, bounded by checkpoints). At most MAX_HELD live changes wait.
import type { ChangeSource } from '../feed/change-feed.js'
import type { ChangeEntry } from '../../shared/events.js'
import { changeTouches, pathChangeOf, projectedChange, valueAtPath, type PathChange } from '../../shared/live-path.js'
import { dotSegments } from '../../shared/path.js'
import { CONTENT_READS_PER_PAGE, readPathChanges } from '../store/path-changes.js'
import type { ContentStorage, ProjectRecord } from '../store/types.js'

const MAX_HELD = 1000
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
  /** Every change up to this version has been dealt with (sent, or found not to touch the path). */
  private last = 0
  private readonly held = new Map<number, ChangeEntry>()
  private behind = false
  private pumping = false
  private started = false
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
  get version (): number { return this.last }

  /**
   * Starts from `from` (what the client has: a snapshot's or an ack's version). `behind`:
   * the log may hold changes after `from` not heard live (a resume from an older version).
   */
  start (from: number, behind = false): void {
    if (this.stopped) return
    this.last = from
    // Live changes dropped while held before the start (past MAX_HELD) are read from the log.
    this.behind = behind || this.behind
    this.started = true
    void this.pump()
  }

  stop (): void {
    if (this.stopped) return
    this.stopped = true
    this.held.clear()
    this.stopListening()
  }

  private receive (change: ChangeEntry): void {
    if (this.stopped || (this.started && change.version <= this.last)) return
    if (this.held.size >= MAX_HELD) {
      this.held.clear()
      this.behind = true
    } else {
      this.held.set(change.version, change)
    }
    if (this.started) void this.pump()
  }

  private async pump (): Promise<void> {
    if (this.pumping || this.stopped) return
    this.pumping = true
    try {
      for (;;) {
        for (let next = this.held.get(this.last + 1); next && !this.stopped; next = this.held.get(this.last + 1)) {
          this.held.delete(next.version)
          if (changeTouches(next, this.segments)) {
            const sent = pathChangeOf(next, this.options.path) ?? await this.projectFromContent(next)
            if (this.stopped) return
            this.options.send(sent)
          }
          this.last = next.version
        }
        for (const version of this.held.keys()) if (version <= this.last) this.held.delete(version)
        if (this.stopped || (!this.behind && this.held.size === 0)) return
        // A held change that cannot be dealt with yet: the versions before it are missing
        // here, but committed, so the log has them.
        this.behind = false
        const page = await readPathChanges(this.options.store, this.options.project, { path: this.options.path, since: this.last, limit: CATCH_UP_PAGE, pageBytes: this.options.pageBytes, contentReads: CONTENT_READS_PER_PAGE })
        if (this.stopped) return
        for (const change of page.changes) {
          if (change.version <= this.last) continue
          this.options.send(change)
          this.last = change.version
        }
        if (page.more) this.behind = true
        else this.last = Math.max(this.last, page.version)
      }
    } catch (error) {
      if (!this.stopped) {
        this.stop()
        this.options.fail(error)
      }
    } finally {
      this.pumping = false
    }
  }

  private async projectFromContent (change: ChangeEntry): Promise<PathChange> {
    const snapshot = await this.options.store.readContentAt(this.options.project.id, change.version)
    // A copy: the snapshot may be the store's live document, which later writes change in place.
    const after = valueAtPath(snapshot.content, this.segments)
    return projectedChange(change, this.options.path, after.exists ? { exists: true, value: structuredClone(after.value) } : after)
  }
}
