// Re-subscribing cannot amplify traffic: within SOCKET_RESUBSCRIBE_WINDOW of the snapshot
// that opened a window, one user receives more snapshots of the same project only while the
// bytes they received in that window are under SOCKET_RESUBSCRIBE_BYTES. The allowance is
// the user's, across all their connections (on this node): per connection, more connections
// meant more snapshots, and four sockets re-subscribing to a 1 MiB document took another
// user's increment p99 from ~50 ms to ~900 ms (issue 12). The first snapshot of a window is
// always sent, so a client that lost track (a version gap) gets its fresh snapshot at once;
// a small document can be re-subscribed freely; a large one about once a window, whatever
// the user's clients do (20 re-subscribes to a 7 MiB document send one).
//
// A subscribe is charged when it is admitted, before its snapshot is read, by the size of
// the last snapshot of that project the user received, and settled with the real size
// once sent: otherwise subscribes arriving together on several connections would all pass
// the check before the first of them was counted.

interface Window { start: number, bytes: number, lastSize: number }

/** What an admitted subscribe was charged; settle() it with the snapshot's real size. */
export interface Charge { key: string, bytes: number }

export class ResubscribeBudget {
  // In order of their start (a window that ends is deleted, a new one appended), so the
  // expired ones are always at the front: forgetting them costs nothing per subscribe.
  private readonly windows = new Map<string, Window>()

  constructor (private readonly windowMs: number, private readonly bytes: number, private readonly now: () => number = Date.now) {}

  /** Admits one snapshot of `project` for `userId`: its charge, or seconds to wait. */
  admit (userId: string, project: string): Charge | { wait: number } {
    const key = keyOf(userId, project)
    const { window, lastSize } = this.current(key)
    if (window && window.bytes >= this.bytes) {
      return { wait: Math.max(1, Math.ceil((window.start + this.windowMs - this.now()) / 1000)) }
    }
    const open = window ?? this.open(key, lastSize)
    open.bytes += open.lastSize
    return { key, bytes: open.lastSize }
  }

  /** The admitted snapshot was sent and had `size` bytes. */
  settle (charge: Charge, size: number): void {
    const { window, lastSize } = this.current(charge.key)
    // Its window may have ended meanwhile: then it counts in a new one, in full.
    const counted = window ?? this.open(charge.key, lastSize)
    counted.bytes = Math.max(0, counted.bytes + size - (window ? charge.bytes : 0))
    counted.lastSize = size
  }

  private open (key: string, lastSize: number): Window {
    this.forgetExpired()
    const window = { start: this.now(), bytes: 0, lastSize }
    this.windows.set(key, window)
    return window
  }

  /** The key's window if it has not ended, and the last snapshot size it knew either way. */
  private current (key: string): { window: Window | undefined, lastSize: number } {
    const window = this.windows.get(key)
    if (window && this.expired(window)) {
      this.windows.delete(key)
      return { window: undefined, lastSize: window.lastSize }
    }
    return { window, lastSize: window?.lastSize ?? 0 }
  }

  private forgetExpired (): void {
    for (const [key, window] of this.windows) {
      if (!this.expired(window)) return
      this.windows.delete(key)
    }
  }

  private expired (window: Window): boolean {
    return this.now() - window.start >= this.windowMs
  }
}

const keyOf = (userId: string, project: string) => `${userId}\0${project}`
