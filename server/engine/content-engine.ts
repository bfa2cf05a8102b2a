// The content engine: every content write of every store goes through here (docs/design.md
// §9, §10, §12). It hands the store's commit primitive (ContentCommitter) one write whose
// rules are write-step.ts's, and tells the commit listeners of each change the store made
// durable: synchronously, in version order per project, before the writer is answered. A
// listener's failure is swallowed (commit-emitter.ts): the change is committed.
import type { ApplyOptions, CommitListener, ProjectRecord, StoreOperation } from '../store/types.js'
import { CommitEmitter } from '../store/commit-emitter.js'
import { prepareChange, type CommitContext, type CurrentContent, type PreparedChange } from './write-step.js'

/** One write, as the engine hands it to a store's commit primitive. */
export interface ContentWrite {
  project: ProjectRecord
  /**
   * A revert reads the content at this version through CommitContext.contentAt. A store that
   * cannot read history inside its atomic step (MongoDB) reads it before, and hands it over.
   */
  readsVersion?: number
  /**
   * The write against the document at the current version, inside the store's atomic step
   * (write-step.ts prepareChange). Throws a catalogued error having changed nothing.
   */
  prepare (current: CurrentContent, context: CommitContext): PreparedChange
  /** Call synchronously once the change is durable, in version order per project, before resolving. */
  committed (change: PreparedChange): void
  /**
   * Present when the caller handed the operation's value over (ApplyOptions.valueHandedOver): a
   * store calls it once the write is committed and `prepare` will not run again (the embedded
   * store's group commit; not a store that may prepare a write again after a conflict).
   */
  release?: () => void
}

/**
 * A store's one content-write primitive: run `write.prepare` on the project's document at its
 * current version V (with its schema, read in the same atomic step), persist the result as
 * V+1 together with its change-log entry (and a checkpoint and retention when due), call
 * `write.committed`, and resolve with the change. PROJECT_NOT_FOUND when the project is gone;
 * whatever `prepare` throws, having persisted nothing.
 */
export interface ContentCommitter {
  commit (write: ContentWrite): Promise<PreparedChange>
}

export interface ContentEngineOptions {
  /** CONTENT_LIMIT in JSON bytes (docs/design.md §3, §13). */
  contentLimitBytes: number
}

export class ContentEngine {
  private readonly listeners = new CommitEmitter()

  /** `committer` is looked up at each write: a store may build its parts after the engine. */
  constructor (private readonly committer: () => ContentCommitter, private readonly options: ContentEngineOptions) {}

  onCommit (listener: CommitListener): void {
    this.listeners.on(listener)
  }

  /** Applies one write; resolves with the new version (docs/design.md §3 "Every successful change adds 1"). */
  async apply (project: ProjectRecord, operation: StoreOperation, options: ApplyOptions): Promise<{ version: number }> {
    const limit = this.options.contentLimitBytes
    const change = await this.committer().commit({
      project,
      ...(operation.op === 'revert' ? { readsVersion: operation.version } : {}),
      prepare: (current, context) => prepareChange(project, current, operation, options, context, limit),
      committed: change => { this.listeners.emit({ project, entry: change.entry, wire: change.wire }) },
      ...(options.valueHandedOver === true ? { release: () => { releaseValue(operation) } } : {})
    })
    return { version: change.version }
  }
}

/**
 * Drops a committed operation's reference to its value. Set, push and insert put that very
 * value in the document, and update's value IS the document, so what was written lives on
 * there, or, replaced by a later write, is garbage at once. The operation lives as long as
 * its request, until the answer after the commit's sync, and so did every value it held: for
 * a 100 KB `set` under load that is ~170 KB of parsed objects kept through two young-generation
 * collections, copied twice and promoted, then marked, for each of the ~14 writes of a group
 * commit of which only the last stays in the document (BENCHMARKS.md, issue 35). The entry
 * keeps the value as text (write-step.ts), never through the operation.
 */
function releaseValue (operation: StoreOperation): void {
  if (operation.op === 'set' || operation.op === 'push' || operation.op === 'insert' || operation.op === 'update') {
    (operation as { value?: unknown }).value = undefined
  }
}
