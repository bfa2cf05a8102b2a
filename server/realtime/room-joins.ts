// One project's Socket.IO room on this node: the changes the change feed (server/feed/) hands
// it, delivered to the room's subscribers in version order with no gap and no repeat,
// whatever order they arrive in, and each subscriber joined at exactly its snapshot's version.
//
// Why this is needed: with several nodes, a change committed here is seen at once while an
// earlier one committed elsewhere is still on its way through Redis; and a subscriber's
// snapshot may be newer or older than the last change the room has seen. So:
// - changes are held until the one before them has been delivered (the order is
//   server/feed/version-order.ts, as for the SSE streams and path followers); a room does not
//   read the log: a short timeout skips a change lost in transit instead (clients see the gap
//   and re-subscribe, docs/design.md §7), and that timeout, not a count, bounds what it holds;
// - a subscriber joins the room exactly when the room reaches its snapshot's version:
//   at once when equal, after catching up from recent history when the snapshot is older,
//   or later, right before the first change after its snapshot, when the snapshot is newer.
import type { ChangeEvent } from '../../shared/events.js'
import { VersionOrder } from '../feed/version-order.js'

export interface RoomMember {
  /** Puts the member in the room: from then on it receives every change delivered. */
  join (): void
  /** Sends one change to this member only (catching up from history). */
  send (change: ChangeEvent): void
}

export interface RoomJoinOptions {
  /** Sends a change to everyone in the room (encoded once). */
  broadcast (change: ChangeEvent): void
  /** How long a missing version may hold later ones back. */
  gapTimeoutMs: number
  /** How many delivered changes are kept for subscribers whose snapshot is a little old. */
  historySize: number
}

export type ActivateResult = 'joined' | 'waiting' | 'stale'

export class RoomJoins {
  /**
   * Its version: the highest delivered to the room; null until the first snapshot tells it.
   * No count bound (Infinity), as before: the gap timeout bounds how long changes are held.
   */
  private readonly order = new VersionOrder<ChangeEvent>(Infinity)
  private readonly history: ChangeEvent[] = []
  /** Members whose snapshot is newer than the room: they join when the room catches up. */
  private readonly waiting = new Map<RoomMember, number>()
  private gapTimer: NodeJS.Timeout | null = null

  constructor (private readonly options: RoomJoinOptions) {}

  /** A committed change, from this node or another, in any order, possibly twice. */
  receive (change: ChangeEvent): void {
    if (this.order.offer(change)) this.drain()
  }

  /**
   * Call synchronously once the member's snapshot (at `snapshotVersion`) is read: sends it
   * with `sendSnapshot`, then whatever changes follow it. 'stale': the snapshot is older
   * than the room and history cannot bridge it; nothing was sent, read again.
   */
  activate (member: RoomMember, snapshotVersion: number, sendSnapshot: () => void): ActivateResult {
    if (this.order.version === null) this.order.startAt(snapshotVersion)
    const version = this.order.version ?? snapshotVersion
    let result: ActivateResult
    if (snapshotVersion === version) {
      sendSnapshot()
      member.join()
      result = 'joined'
    } else if (snapshotVersion < version) {
      const missing = this.history.filter(c => c.version > snapshotVersion)
      if (missing.length !== version - snapshotVersion) return 'stale'
      sendSnapshot()
      for (const change of missing) member.send(change)
      member.join()
      result = 'joined'
    } else {
      sendSnapshot()
      this.waiting.set(member, snapshotVersion)
      result = 'waiting'
    }
    this.drain()
    return result
  }

  /** The member leaves (the caller also takes it out of the room). */
  remove (member: RoomMember): void {
    this.waiting.delete(member)
  }

  close (): void {
    if (this.gapTimer) clearTimeout(this.gapTimer)
    this.gapTimer = null
    this.order.clearHeld()
    this.waiting.clear()
  }

  private drain (): void {
    if (this.order.version === null) return
    this.order.release(change => this.deliver(change))
    if (this.order.heldCount === 0) {
      if (this.gapTimer) clearTimeout(this.gapTimer)
      this.gapTimer = null
    } else if (!this.gapTimer) {
      this.gapTimer = setTimeout(() => this.skipGap(), this.options.gapTimeoutMs)
      this.gapTimer.unref()
    }
  }

  /** The missing version never came (lost while Redis was away): move on past it. */
  private skipGap (): void {
    this.gapTimer = null
    if (this.order.skipGap()) this.drain()
  }

  private deliver (change: ChangeEvent): void {
    for (const [member, snapshotVersion] of this.waiting) {
      if (snapshotVersion < change.version) {
        this.waiting.delete(member)
        member.join()
      }
    }
    this.options.broadcast(change)
    this.history.push(change)
    if (this.history.length > this.options.historySize) this.history.shift()
  }
}
