// The change log's rules that every store follows (docs/design.md §9): which versions are
// answerable under retention, and when a checkpoint is due. One place, so the stores answer
// alike and the contract suite can hold them to it.
import type { HistoryOptions } from './types.js'

/**
 * A checkpoint (the whole content) is written once this many entries follow the latest one,
 * so reading any version replays at most about this many.
 */
export const CHECKPOINT_ENTRIES = 1000

/**
 * ...or once the entries after it weigh as much as the content did at that checkpoint (and
 * at least this much, so a small document is not copied every few changes): a replay then
 * reads at most about twice the document, or 16 KiB of entries for a smaller one, and
 * checkpoints take at most about the space the entries take. At 4 KiB, a 1 KiB document
 * under 16 increments per group commit was copied every second commit, 3.3% of the server's
 * CPU per increment (BENCHMARKS.md, "What the benchmark changed"); a replay of 16 KiB of
 * entries is well under a millisecond.
 */
export const CHECKPOINT_MIN_BYTES = 16 * 1024

/** `checkpointBytes`: the size of the content at the latest checkpoint (MongoDB: the current content's). */
export function checkpointDue (tailCount: number, tailBytes: number, checkpointBytes: number): boolean {
  return tailCount >= CHECKPOINT_ENTRIES || tailBytes >= Math.max(checkpointBytes, CHECKPOINT_MIN_BYTES)
}

/**
 * The oldest answerable version of a project now at `version`: `since` and `?version=` at or
 * above it are answered, below it HISTORY_EXPIRED. `storedFloor` is the project's own floor:
 * what it never recorded (history before the change log existed) or what was pruned under
 * another HISTORY_LIMIT. With limit L > 0, exactly the newest L entries stay answerable.
 */
export function answerableFrom (version: number, storedFloor: number, history: HistoryOptions): number {
  if (!history.enabled) return version
  return history.limit === 0 ? storedFloor : Math.max(storedFloor, version - history.limit)
}

/** Projects whose last prune a PruneSchedule remembers; past this many it starts again. */
const PRUNES_REMEMBERED = 100_000

/**
 * Retention deletes in bulk (docs/change-log.md "Retention"): once the oldest answerable
 * version has moved this far since the last prune, a tenth of the limit and at most
 * CHECKPOINT_ENTRIES. Pruning at every checkpoint deleted a few entries each time, and each
 * such delete rewrote the first pages of the log, its size index and the checkpoints: a
 * quarter of the WAL pages of a 1 KiB increment's group commit (BENCHMARKS.md, "What the
 * benchmark changed"). Answers do not change (answerableFrom does not read the rows); the
 * store holds at most this many entries more.
 */
export function pruneStep (limit: number): number {
  return Math.max(1, Math.min(CHECKPOINT_ENTRIES, Math.floor(limit / 10)))
}

/**
 * When a store prunes a project, reckoned per process (another process, or a restart,
 * reckons on its own; a prune that rolls back only leaves rows for the next one): due at a
 * checkpoint once `version − limit` is pruneStep past where it stood at this process's last
 * prune of the project, or at the project's first checkpoint since the process started.
 */
export class PruneSchedule {
  private readonly prunedAt = new Map<string, number>()

  constructor (private readonly history: HistoryOptions) {}

  /** Whether to prune `projectId`, now at `version`, after a checkpoint; if so, counted as done. */
  due (projectId: string, version: number): boolean {
    const { limit } = this.history
    if (limit <= 0) return false
    const bound = version - limit
    const last = this.prunedAt.get(projectId)
    if (last !== undefined && bound - last < pruneStep(limit)) return false
    if (last === undefined && this.prunedAt.size >= PRUNES_REMEMBERED) this.prunedAt.clear()
    this.prunedAt.set(projectId, bound)
    return true
  }

  /** A deleted project (an id may come back with a new log). */
  forget (projectId: string): void {
    this.prunedAt.delete(projectId)
  }
}
