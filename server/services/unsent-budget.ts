// Clients that do not read (docs/design.md §13b): what the server holds unsent for SSE streams
// and Socket.IO connections together is bounded per user (SLOW_CLIENT_BYTES_PER_USER) and
// per process (SLOW_CLIENT_BYTES). Past either, the streams holding the most are closed
// until the total is back within it; their clients resume from their last version
// (Last-Event-ID or `since`).
//
// A per-stream cap alone (SOCKET_SEND_BUFFER) does not bound memory: one user's thousand
// streams that never read could each hold up to it.
//
// Streams report after each write that leaves data unsent, and after the next write once
// one did (a stream that had nothing unsent and has nothing now is not reported: on a
// fan-out to streams that read, that is nearly all of them); the budget counts them at the
// end of the turn (Node corks an HTTP response's socket until then after res.write, so right
// after it a stream would show all it was just given, however fast its client reads) and
// keeps the last count of each. A count may be stale-high (a stream that drained without
// writing again), never stale-low, so before closing anything the budget counts every
// stream concerned afresh: nothing is closed for bytes that were already sent.

/**
 * Whether a stream's write is worth reporting to the budget (the rule above, once for SSE
 * streams and Socket.IO connections): not when it had nothing unsent at its last report and
 * has nothing now; `mark` for a write that is reported whatever it left (a paced one).
 */
export class BacklogReports {
  /** Whether the budget may still count unsent data of the stream (its last report had some). */
  private counted = false

  /** Whether to report a write that left `backlog` bytes unsent; if so, counted as reported. */
  due (backlog: number): boolean {
    if (backlog === 0 && !this.counted) return false
    this.counted = backlog > 0
    return true
  }

  /** Reported with what it holds, whatever that is. */
  mark (): void {
    this.counted = true
  }
}

/** One SSE stream or Socket.IO connection, as the budget sees it. */
export interface UnsentHolder {
  readonly userId: string
  /** Bytes written for it that the client has not taken yet (in the process and the kernel's send queue as Node reports it). */
  unsent (): number
  /** Ends it at once (it resumes from its last version); told why, for its logs and metrics. */
  close (unsentBytes: number, scope: BudgetScope): void
}

export interface UnsentLimits {
  /** SLOW_CLIENT_BYTES_PER_USER */
  perUser: number
  /** SLOW_CLIENT_BYTES */
  perProcess: number
}

export type BudgetScope = 'user' | 'process'

export class UnsentBudget {
  private readonly counted = new Map<UnsentHolder, number>()
  private readonly byUser = new Map<string, Set<UnsentHolder>>()
  private readonly userTotals = new Map<string, number>()
  private total = 0
  /** Streams that wrote in this turn, counted at its end (settle). */
  private readonly dirty = new Set<UnsentHolder>()
  private settling = false

  constructor (private readonly limits: UnsentLimits) {}

  /** Counts the holder from now on; returns the function that stops counting it. */
  add (holder: UnsentHolder): () => void {
    if (this.counted.has(holder)) return () => this.remove(holder)
    this.counted.set(holder, 0)
    let mine = this.byUser.get(holder.userId)
    if (!mine) { mine = new Set(); this.byUser.set(holder.userId, mine) }
    mine.add(holder)
    return () => this.remove(holder)
  }

  /** The holder wrote (or drained): it is counted again at the end of this turn (settle). */
  noted (holder: UnsentHolder): void {
    if (!this.counted.has(holder)) return
    this.dirty.add(holder)
    if (this.settling) return
    this.settling = true
    setImmediate(() => this.settle())
  }

  /** Counts the holders that wrote since the last settle; past a budget, closes the largest. */
  settle (): void {
    this.settling = false
    const users = new Set<string>()
    for (const holder of this.dirty) {
      this.recount(holder)
      users.add(holder.userId)
    }
    this.dirty.clear()
    for (const user of users) {
      if ((this.userTotals.get(user) ?? 0) > this.limits.perUser) this.enforce(this.byUser.get(user) ?? [], this.limits.perUser, 'user')
    }
    if (this.total > this.limits.perProcess) this.enforce(this.counted.keys(), this.limits.perProcess, 'process')
  }

  /** Unsent bytes as last counted, all streams together (tests, diagnostics). */
  get unsentBytes (): number {
    return this.total
  }

  get streams (): number {
    return this.counted.size
  }

  private enforce (holders: Iterable<UnsentHolder>, limit: number, scope: BudgetScope): void {
    const concerned = [...holders]
    let sum = 0
    for (const holder of concerned) sum += this.recount(holder)
    if (sum <= limit) return
    concerned.sort((a, b) => (this.counted.get(b) ?? 0) - (this.counted.get(a) ?? 0))
    for (const holder of concerned) {
      if (sum <= limit) return
      const bytes = this.counted.get(holder) ?? 0
      if (bytes === 0) return
      sum -= bytes
      this.remove(holder)
      holder.close(bytes, scope)
    }
  }

  /** Counts one holder afresh; returns its count. */
  private recount (holder: UnsentHolder): number {
    const before = this.counted.get(holder)
    if (before === undefined) return 0
    const now = Math.max(0, holder.unsent())
    this.counted.set(holder, now)
    this.total += now - before
    this.userTotals.set(holder.userId, (this.userTotals.get(holder.userId) ?? 0) + now - before)
    return now
  }

  private remove (holder: UnsentHolder): void {
    const bytes = this.counted.get(holder)
    if (bytes === undefined) return
    this.counted.delete(holder)
    this.dirty.delete(holder)
    this.total -= bytes
    const left = (this.userTotals.get(holder.userId) ?? 0) - bytes
    const mine = this.byUser.get(holder.userId)
    mine?.delete(holder)
    if (!mine || mine.size === 0) {
      this.byUser.delete(holder.userId)
      this.userTotals.delete(holder.userId)
    } else {
      this.userTotals.set(holder.userId, left)
    }
  }
}
