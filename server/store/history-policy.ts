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
 * at least this much, so a tiny document is not copied on every change): a replay then reads
 * at most about twice the document, and checkpoints take about the space the entries take.
 */
export const CHECKPOINT_MIN_BYTES = 4096

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
