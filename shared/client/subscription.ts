// One live copy of a project's content. It starts from a subscribe snapshot and applies
// `change` events strictly in version order with the server's own applyOperation, so the
// copy equals the stored content after every event. After a reconnect it asks only for the
// changes it missed (subscribe with `since`, docs/design.md §9), and takes a new snapshot when
// the server no longer has them (HISTORY_EXPIRED). A missing version (a gap) or an event
// that does not apply throws the copy away and asks for a new snapshot. A
// snapshot refused as RATE_LIMITED is asked for again after the `retryAfter` the server
// gave; changes keep being held back meanwhile.
//
// Several copies of one project may get the very same acknowledgement and change events
// (realtime.ts shares one subscription between them), and applyOperation changes a document
// in place: so each copy keeps its own document, cloning what it takes in (snapshots and
// written values), and never shares objects with another copy.
// Socket handling lives in realtime.ts; this class only sees acks and events.
//
// A copy made with `keepsContent` false holds the server subscription without a document
// (presence needs the subscription, not the content): it ignores changes, and its listener
// hears only that a snapshot arrived.
import type { ChangeEvent, EventFailure, SubscribeAck } from '../events.js'
import { operationOfChange } from '../events.js'
import type { JsonObject } from '../json.js'
import { applyContentOperation } from '../compound.js'
import type { ContentdClientError } from './errors.js'
import { ResumableLive } from './resumable-live.js'

export { statusOf } from './resumable-live.js'

/** Called with the whole content after the snapshot and after every change. Treat it as read-only. */
export type ContentListener = (content: JsonObject, version: number) => void

export interface SubscribeOptions {
  /** Every change applied to the local copy, in version order (not called for snapshots). */
  onChange?: (change: ChangeEvent) => void
  /**
   * The subscription failed or ended: refused (404, 403), access revoked, or the
   * connection was refused. It is not retried after this.
   */
  onError?: (error: ContentdClientError) => void
  /**
   * Start from a copy kept earlier (the offline store's, docs/design.md §19): the copy begins
   * with this content and version and asks only for the changes after it (a snapshot when
   * the server no longer has them).
   */
  from?: { content: JsonObject, version: number }
}

export interface Subscription {
  /** "@alice/demo" */
  readonly project: string
  /** Resolves after the first snapshot arrived; rejects when the subscription was refused. */
  readonly ready: Promise<void>
  /** The local copy (undefined before the first snapshot). Treat it as read-only. */
  readonly content: JsonObject | undefined
  /** The version of the local copy (undefined before the first snapshot). */
  readonly version: number | undefined
  /** Number of snapshots taken: 1 + re-subscriptions after gaps, and reconnects that could not resume. */
  readonly snapshots: number
  /** Number of reconnects caught up from the change log (only the missed changes, no snapshot). */
  readonly resumes: number
  close (): void
}

/**
 * Asks the server for a fresh snapshot, or with `since` for the changes after that version
 * (docs/design.md §9); resolves with its acknowledgement.
 */
export type SnapshotRequester = (since?: number) => Promise<SubscribeAck>

export class LiveCopy extends ResumableLive<Exclude<SubscribeAck, EventFailure>, ChangeEvent> implements Subscription {
  private doc: JsonObject | undefined

  constructor (
    readonly project: string,
    private readonly onContent: ContentListener,
    private readonly options: SubscribeOptions,
    requestSnapshot: SnapshotRequester,
    private readonly onClose: (copy: LiveCopy) => void,
    private readonly keepsContent = true
  ) {
    super(requestSnapshot, options.onError)
    if (options.from && keepsContent) {
      this.doc = structuredClone(options.from.content)
      this.currentVersion = options.from.version
      this.waiting = false
    }
  }

  get content (): JsonObject | undefined { return this.doc }
  get isOpen (): boolean { return !this.closed }

  protected answered (ack: Exclude<SubscribeAck, EventFailure>): void {
    if ('content' in ack) this.start(ack.content, ack.version)
    else this.catchUp(ack.changes, ack.version, ack.more === true)
  }

  /**
   * A resume's answer: the changes after the copy's version, up to `version`. Applied like
   * live changes; if they do not continue the copy exactly (another copy's request with an
   * older or newer `since` answered), a snapshot is taken instead. `more`: the answer was
   * one page of the log (docs/design.md §13b) and no subscription yet: ask for the rest.
   */
  private catchUp (changes: ChangeEvent[], version: number, more: boolean): void {
    if (this.doc === undefined) { this.resync(); return }
    const held = this.applyMissed(changes)
    if (held === undefined) return // a gap: receive() asked for a snapshot
    if (this.currentVersion !== version) { this.resync(); return }
    if (more) { this.request(version); return }
    this.resumed += 1
    // A copy that started from a kept one (options.from) is ready once it caught up.
    this.settleReady()
    this.replay(held)
  }

  /**
   * Starts from another live copy of the same project (same connection, same stream of
   * changes) instead of asking the server for a snapshot.
   */
  startFrom (sibling: LiveCopy): void {
    if (this.closed || sibling.waiting || sibling.doc === undefined) { this.resync(); return }
    this.generation++
    this.start(sibling.doc, sibling.currentVersion as number)
  }

  /** Whether the copy is up to date with the stream of changes (not waiting for a snapshot). */
  get isLive (): boolean {
    return !this.closed && !this.waiting && this.doc !== undefined
  }

  receive (change: ChangeEvent): void {
    if (this.closed || !this.keepsContent) return
    if (this.waiting) { this.buffered.push(change); return }
    const version = this.currentVersion as number
    if (change.version <= version) return // already in the snapshot, or a duplicate
    if (change.version !== version + 1) { this.resync(); return }
    let next: JsonObject
    try {
      next = applyContentOperation(this.doc as JsonObject, operationOfChange({ ...change, value: ownCopy(change.value), operations: ownCopy(change.operations) }))
    } catch {
      // Cannot happen when both sides agree; if it does, the server's copy wins.
      this.resync()
      return
    }
    this.doc = next
    this.currentVersion = change.version
    this.options.onChange?.(change)
    this.onContent(next, change.version)
  }

  private start (content: JsonObject, version: number): void {
    this.doc = this.keepsContent ? structuredClone(content) : undefined
    this.currentVersion = version
    this.waiting = false
    this.taken += 1
    this.onContent(this.doc ?? content, this.currentVersion)
    this.settleReady()
    this.replayHeld()
  }

  protected ended (): void {
    this.onClose(this)
  }
}

/** A value to put into this copy's document: objects and arrays cloned, so no two copies share them. */
function ownCopy<T> (value: T): T {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value
}

