// Re-subscribing cannot amplify traffic: within SOCKET_RESUBSCRIBE_WINDOW of the snapshot
// that opened a window, one connection receives more snapshots of the same project only
// while the bytes it received in that window are under SOCKET_RESUBSCRIBE_BYTES. The first
// snapshot of a window is always sent, so a client that lost track (a version gap) gets its
// fresh snapshot at once; a small document can be re-subscribed freely; a large one about
// once a window, whatever the client does (20 re-subscribes to a 7 MiB document send one).

interface Window { start: number, bytes: number }

// Windows of projects the connection no longer subscribes to are forgotten lazily.
const PRUNE_AT = 64

export class ResubscribeBudget {
  private readonly windows = new Map<string, Window>()

  constructor (private readonly windowMs: number, private readonly bytes: number, private readonly now: () => number = Date.now) {}

  /** Seconds to wait before another snapshot of `project` may be sent; null when it may be sent now. */
  waitBefore (project: string): number | null {
    const window = this.current(project)
    if (!window || window.bytes < this.bytes) return null
    return Math.max(1, Math.ceil((window.start + this.windowMs - this.now()) / 1000))
  }

  /** A snapshot of `size` bytes of `project` was sent. */
  record (project: string, size: number): void {
    const window = this.current(project)
    if (window) { window.bytes += size; return }
    if (this.windows.size >= PRUNE_AT) for (const key of [...this.windows.keys()]) this.current(key)
    this.windows.set(project, { start: this.now(), bytes: size })
  }

  private current (project: string): Window | undefined {
    const window = this.windows.get(project)
    if (window && this.now() - window.start >= this.windowMs) {
      this.windows.delete(project)
      return undefined
    }
    return window
  }
}
