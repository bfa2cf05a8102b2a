// Puts one project's live changes back in version order for one consumer: the SSE stream
// (http/change-stream.ts), a path follower (services/path-follower.ts) and a Socket.IO room
// (realtime/room-joins.ts) all order what they hear with this, and nothing else.
//
// Why it is needed: with several nodes a change committed here is heard at once while an
// earlier one committed elsewhere is still on its way through Redis, and a change may be heard
// twice (live and from the log). So a change is held, keyed by its version, until the one
// right before it has been dealt with; anything at or below what has been dealt with is a
// repeat and is dropped.
//
// What a consumer does when the missing version does not come is its own choice, since the
// consumers truly differ there, and it is the only place they differ:
// - read it from the durable log (`pump` with `readMissing`): a change is committed, hence in
//   the log, before anyone hears of it, so the log has what the consumer lacks;
// - or skip past it after a while (`skipGap`, for a room whose clients see the gap and
//   re-subscribe, docs/design.md §7).
// Memory is bounded by `maxHeld` (docs/design.md §13b): past it, everything held is let go and
// the order notes that it is behind, so the log is read instead. No timers and no I/O here:
// what waits, and for how long, is the consumer's.

export interface Versioned { readonly version: number }

/**
 * Live changes a consumer that can read the log holds while it catches up; past it they are
 * let go and read from the log later.
 */
export const MAX_HELD = 1000

/** What `pump` does with the changes it puts in order, and how it fills a gap. */
export interface PumpSteps<T> {
  /**
   * Deals with the next change in order. A returned promise is awaited before the next; a
   * change dealt with synchronously is dealt with in the caller's turn (no await), so what a
   * caller sees right after `offer` + `pump` is already written.
   */
  deliver (change: T): void | Promise<void>
  /**
   * Reads what is missing after `since` from the log and deals with it, moving the order on
   * with `advanceTo` (and `markBehind` when the log has more). Answers false to stop pumping.
   */
  readMissing (since: number): Promise<boolean>
  /** The consumer has ended: nothing more is dealt with. */
  stopped (): boolean
}

export class VersionOrder<T extends Versioned> {
  /** Every change up to this version has been dealt with; null: not known yet (hold everything). */
  private last: number | null
  private readonly held = new Map<number, T>()
  /** The log may hold versions after `last` that are not held (let go past the bound, or a resume). */
  private behind: boolean
  private pumping = false

  /**
   * `from`: the version dealt with already (null until a snapshot says); `behind`: the log may
   * hold later ones not heard live. `maxHeld`: the bound; Infinity for a consumer whose
   * timeout bounds what it holds instead.
   */
  constructor (private readonly maxHeld: number, from: number | null = null, behind = false) {
    this.last = from
    this.behind = behind
  }

  /** The version up to which every change has been dealt with, or null before any start. */
  get version (): number | null { return this.last }

  get heldCount (): number { return this.held.size }

  /**
   * A live change, in any order, possibly a repeat. True when the consumer should try to move
   * on (something new was heard, even if it was let go past the bound).
   */
  offer (change: T): boolean {
    if (this.last !== null && change.version <= this.last) return false
    if (this.held.size >= this.maxHeld) {
      this.held.clear()
      this.behind = true
    } else {
      this.held.set(change.version, change)
    }
    return true
  }

  /**
   * Starts (again) from `version`, a snapshot's or what the client has: what is held at or
   * below it is dropped. A change let go past the bound before now may come after `version`,
   * so being behind is kept, not forgotten.
   */
  startAt (version: number, behind = false): void {
    this.last = version
    this.behind = behind || this.behind
    this.dropDealtWith()
  }

  /** Takes out the change right after `version` if it is held; the caller then `advanceTo`s it. */
  takeNext (): T | undefined {
    if (this.last === null) return undefined
    const next = this.held.get(this.last + 1)
    if (next) this.held.delete(next.version)
    return next
  }

  /** Everything up to `version` has been dealt with (never moves back). */
  advanceTo (version: number): void {
    if (this.last === null || version > this.last) this.last = version
  }

  /** Deals with every held change that follows on, synchronously, in version order. */
  release (deliver: (change: T) => void): void {
    for (let next = this.takeNext(); next; next = this.takeNext()) {
      deliver(next)
      this.advanceTo(next.version)
    }
  }

  /** The log has more after what was just read from it. */
  markBehind (): void {
    this.behind = true
  }

  /**
   * Whether something is missing here that the log has (being behind, or a held change whose
   * predecessors have not come); true claims it: the caller reads the log now.
   */
  claimCatchUp (): boolean {
    this.dropDealtWith()
    if (!this.behind && this.held.size === 0) return false
    this.behind = false
    return true
  }

  highestHeld (): number {
    let highest = -1
    for (const version of this.held.keys()) if (version > highest) highest = version
    return highest
  }

  /**
   * Gives up on the missing versions: moves on to right before the lowest held change, so it
   * is the next. False when nothing is held.
   */
  skipGap (): boolean {
    if (this.held.size === 0) return false
    this.last = Math.min(...this.held.keys()) - 1
    return true
  }

  /** Lets go of everything held (the consumer ended, or a gap the log cannot bridge). */
  clearHeld (): void {
    this.held.clear()
  }

  /**
   * Deals with held changes in order and reads whatever is missing from the log, until nothing
   * is missing or the consumer stops. One pump at a time: a call while one runs returns at
   * once, and the running one sees what was offered meanwhile. Errors (of `deliver` or
   * `readMissing`) reach the caller, whose way of ending differs.
   */
  async pump (steps: PumpSteps<T>): Promise<void> {
    if (this.pumping || steps.stopped()) return
    this.pumping = true
    try {
      for (;;) {
        for (let next = this.takeNext(); next; next = this.takeNext()) {
          const delivering = steps.deliver(next)
          // Awaited only when there is something to wait for: a synchronous delivery stays in
          // this turn, as the consumers' callers expect.
          if (delivering) await delivering
          if (steps.stopped()) return
          this.advanceTo(next.version)
        }
        if (steps.stopped() || this.last === null || !this.claimCatchUp()) return
        if (!await steps.readMissing(this.last) || steps.stopped()) return
      }
    } finally {
      this.pumping = false
    }
  }

  private dropDealtWith (): void {
    if (this.last === null) return
    for (const version of this.held.keys()) if (version <= this.last) this.held.delete(version)
  }
}
