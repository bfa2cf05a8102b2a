// Refusals are held back (docs/operations.md#rate-limits): a client over its budget gets its
// 429 (HTTP), refused handshake or RATE_LIMITED ack only after RATE_LIMIT_DELAY, or the
// `retryAfter` it is told if that is shorter. A flooder that loops on its answers (the usual
// script: send, await, send again) then waits instead of looping: four clients kept ~1,450
// refusals a second coming, ~80% of a core of the server (issue 12); held, each gets about
// one a second. The same idea as nginx's `limit_req … delay` and express-slow-down, except
// that the held request is still refused, so nothing it asks for happens.
//
// Holding costs a timer and the request's memory, so it is bounded: at most
// RATE_LIMIT_DELAY_HELD refusals per user or IP at once, MAX_HELD on the node; past either,
// the refusal is sent at once, as with RATE_LIMIT_DELAY=0.
import { setTimeout as sleep } from 'node:timers/promises'

/** Refusals held at once on one node, all subjects together. */
export const MAX_HELD = 10_000

export class Tarpit {
  private readonly heldBy = new Map<string, number>()
  private total = 0

  /** `onHeld`: told the number held after every change (the /metrics gauge). */
  constructor (private readonly delayMs: number, private readonly perSubject: number, private readonly onHeld?: (held: number) => void) {}

  /**
   * Resolves when a refusal of `subject` that tells it to wait `retryAfterSeconds` may be
   * sent: after the delay when there is room to hold it, at once when not.
   */
  async hold (subject: string, retryAfterSeconds: number): Promise<void> {
    const ms = Math.min(this.delayMs, retryAfterSeconds * 1000)
    const mine = this.heldBy.get(subject) ?? 0
    if (ms <= 0 || mine >= this.perSubject || this.total >= MAX_HELD) return
    this.heldBy.set(subject, mine + 1)
    this.count(1)
    try {
      // Not keeping the process alive: the held request's connection does that while it is open.
      await sleep(ms, undefined, { ref: false })
    } finally {
      const left = (this.heldBy.get(subject) ?? 1) - 1
      if (left === 0) this.heldBy.delete(subject)
      else this.heldBy.set(subject, left)
      this.count(-1)
    }
  }

  private count (change: number): void {
    this.total += change
    this.onHeld?.(this.total)
  }
}
