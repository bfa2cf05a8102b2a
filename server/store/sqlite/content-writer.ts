// Content writes with group commit: operations arriving in the same turn of the event loop
// are applied one after another inside ONE immediate transaction, and acknowledged only
// after it is durable. Each keeps its own atomicity (a failing operation leaves the document
// as the previous one left it), its own version and its own change log entry
// (docs/design.md §9), written in that same transaction; the batch pays for one fsync, and
// one serialization per touched document at most, instead of one per operation. This is the
// embedded store's commit primitive (server/engine/content-engine.ts ContentCommitter): what
// a write does (preconditions, limit, schema, entry) is decided by the engine's prepare step,
// run inside the transaction against the working document and the project's schema read in
// that same transaction; this file only persists it, so a refused write leaves neither
// content nor log changed. How the result is laid out in the file is content-log.ts's business.
//
// The fsync does not run on the event loop (issue 18): the batch commits with
// synchronous=NORMAL (no fsync in COMMIT), then `sync` makes the WAL durable on the thread
// pool (wal-sync.ts), and only then are the batch's writes acknowledged and their changes
// told to listeners. Writes arriving meanwhile wait and form the next batch, committed when
// the sync returns: one ordered commit stream, one sync in flight, batches as large as when
// the loop itself waited. A committed batch is visible to reads before its sync returns (as
// MongoDB's "local" read concern); no write is acknowledged before it is durable.
//
// The next batch commits in the turn after a sync returns, not in the sync's own callback
// (issue 30): the change feed queues its fan-out for that turn when told of the synced
// changes (server/feed/change-feed.ts), so their `change` and `query` events go out first,
// and are not held back by the next batch's transaction — a checkpoint of a whole document
// (history-policy.ts), SQLite's WAL checkpoint at a commit, a large write. The next batch
// loses no durability and no order: it only starts one check phase later (and gathers the
// writes that arrived meanwhile).
import type Database from 'better-sqlite3'
import { ContentdError, isContentdError } from '../../../shared/errors.js'
import type { ContentWrite } from '../../engine/content-engine.js'
import { storedEntryJson, type PreparedChange } from '../../engine/write-step.js'
import type { ContentSchema } from '../../schema/content-schema.js'
import type { CachedDocument } from '../document-cache.js'
import type { ChangedDocument, ContentLog } from './content-log.js'
import type { LookupCache } from './lookup-cache.js'
import { indexPathsOf } from '../../../shared/live-path.js'

interface PendingWrite {
  write: ContentWrite
  resolve: (change: PreparedChange) => void
  reject: (error: unknown) => void
}

/** A document while a group commit changes it. */
interface WorkingDocument extends ChangedDocument {
  /** The project's schema, read in the group's transaction; null when it has none. */
  schema: ContentSchema | null
}

type Outcome = { ok: true, change: PreparedChange } | { ok: false, error: unknown }

export interface ContentWriterParts {
  db: Database.Database
  log: ContentLog
  /** Told of every committed version, so remembered projects show it. */
  lookups: LookupCache
  /** The project's schema as stored now (read inside the batch's transaction), or null. */
  schemaFor: (projectId: string) => ContentSchema | null
  /** Makes the batch just committed durable (off the event loop), then calls `done`. */
  sync: (done: (error: Error | null) => void) => void
}

/** A committed batch waiting for its sync: what to tell listeners and callers after it. */
interface CommittedBatch {
  batch: PendingWrite[]
  outcomes: Outcome[]
}

export class ContentWriter {
  private pending: PendingWrite[] = []
  private flushScheduled = false
  /** A committed batch's sync is in flight: the next batch waits for it. */
  private syncing = false
  /** Set when a sync failed: nothing after it can be promised durable (see failSync). */
  private broken: ContentdError | undefined
  private readonly idleWaiters: Array<() => void> = []

  constructor (private readonly parts: ContentWriterParts) {}

  commit (write: ContentWrite): Promise<PreparedChange> {
    return new Promise((resolve, reject) => {
      if (this.broken) { reject(this.broken); return }
      this.pending.push({ write, resolve, reject })
      if (!this.syncing) this.scheduleFlush()
    })
  }
  /** STORE_UNAVAILABLE once a sync has failed (health checks report it: a restart is due). */
  get failure (): ContentdError | undefined {
    return this.broken
  }

  /** Resolves once every write accepted so far is committed, synced and answered (before closing the file). */
  drained (): Promise<void> {
    if (!this.syncing && this.pending.length === 0) return Promise.resolve()
    return new Promise(resolve => {
      this.idleWaiters.push(resolve)
      if (!this.syncing) this.flush()
    })
  }

  /** Commits what is queued now, unless a sync is in flight (its end commits what waits). */
  private flush (): void {
    this.flushScheduled = false
    if (this.syncing) return
    const batch = this.pending
    this.pending = []
    if (batch.length > 0) {
      const committed = this.commitBatch(batch)
      if (committed) {
        this.syncing = true
        this.parts.sync(error => { this.synced(committed, error) })
        return
      }
    }
    this.notifyIdle()
  }

  private synced ({ batch, outcomes }: CommittedBatch, error: Error | null): void {
    this.syncing = false
    if (error) {
      this.failSync(batch, error)
    } else {
      batch.forEach((write, i) => {
        const outcome = outcomes[i] as Outcome
        if (!outcome.ok) { write.reject(outcome.error); return }
        write.write.committed(outcome.change)
        write.resolve(outcome.change)
      })
    }
    // After the fan-out the listeners just queued for this turn (see the top of this file).
    this.scheduleFlush()
  }

  private scheduleFlush (): void {
    if (this.flushScheduled) return
    this.flushScheduled = true
    setImmediate(() => this.flush())
  }

  /**
   * A failed fsync may have lost the batch's pages, and later commits build on them, so from
   * here on no write can be acknowledged as durable: the batch fails as an internal error
   * (its outcome is unknown), and every later write with STORE_UNAVAILABLE until a restart,
   * which recovers the file as far as it is durable (docs/operations.md).
   */
  private failSync (batch: PendingWrite[], error: Error): void {
    const broken = new ContentdError('STORE_UNAVAILABLE')
    broken.cause = error
    this.broken = broken
    for (const write of batch) write.reject(error)
    for (const write of this.pending) write.reject(broken)
    this.pending = []
  }

  private notifyIdle (): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve()
  }

  /** Runs the batch in one transaction; on failure rejects it all and returns undefined. */
  private commitBatch (batch: PendingWrite[]): CommittedBatch | undefined {
    const { db, log, lookups } = this.parts
    const working = new Map<string, WorkingDocument | null>()
    const outcomes: Outcome[] = []
    const written = new Map<string, CachedDocument>()
    try {
      // No fsync inside COMMIT: the batch is synced off the loop before anyone is answered.
      // exec, not a prepared statement: SQLite applies this pragma when it compiles it, so a
      // prepared one, run again, may not set it again.
      db.exec('PRAGMA synchronous = NORMAL')
      try {
        db.transaction(() => {
          const at = new Date().toISOString()
          for (const write of batch) outcomes.push(this.applyInTransaction(write, working, at))
          // The batch's entries and path rows, a statement for many (content-log.ts).
          log.flushAppends()
          for (const [projectId, state] of working) {
            if (!state || !state.dirty) continue
            written.set(projectId, log.finish(projectId, state))
          }
        }).immediate()
      } finally {
        // Every other write of this connection keeps synchronous=FULL.
        db.exec('PRAGMA synchronous = FULL')
      }
    } catch (error) {
      // Nothing committed, log entries included. Documents in `working` may have been
      // mutated: forget them.
      for (const projectId of working.keys()) log.forget(projectId)
      log.discardAppends()
      const failure = isContentdError(error) ? error : storeFailure(error)
      for (const write of batch) write.reject(failure)
      return undefined
    }
    // The cache and look-ups follow the file at once: the next batch builds on this one.
    for (const [projectId, entry] of written) {
      log.remember(projectId, entry)
      lookups.contentCommitted(projectId, entry.version)
    }
    // Committed, and never prepared again: the values handed over live on in the documents
    // (content-engine.ts releaseValue), not through the writes waiting for their sync.
    batch.forEach((write, i) => { if ((outcomes[i] as Outcome).ok) write.write.release?.() })
    return { batch, outcomes }
  }

  private applyInTransaction ({ write }: PendingWrite, working: Map<string, WorkingDocument | null>, at: string): Outcome {
    const { log } = this.parts
    const projectId = write.project.id
    let state = working.get(projectId)
    if (state === undefined) {
      const current = log.editable(projectId)
      state = current ? { ...current, schema: this.parts.schemaFor(projectId) } : null
      working.set(projectId, state)
    }
    if (!state) return { ok: false, error: new ContentdError('PROJECT_NOT_FOUND') }
    const changed = state
    try {
      // A revert reads the log inside this transaction, so it sees the changes earlier in the batch.
      const change = write.prepare(state, { at, contentAt: version => log.contentAt(projectId, version, changed) })
      state.doc = change.doc
      state.bytes = change.bytes
      state.version = change.version
      state.dirty = true
      // The document's JSON is known exactly after a replacement, and stale after anything else.
      state.json = change.replaced ? change.valueJson : undefined
      // The entry is serialized now, in the same transaction: a later operation of this batch
      // may mutate a value this one inserted (set a {b:[1]}, then push a.b), and the log must
      // keep what ran.
      log.append(projectId, state, storedEntryJson(change), change.entryBytes, change.replaced, change.idempotency, indexPathsOf(change.parts))
      return { ok: true, change }
    } catch (error) {
      // Only expected failures stay per-operation; anything else aborts the whole batch.
      if (isContentdError(error)) return { ok: false, error }
      throw error
    }
  }
}

function storeFailure (error: unknown): ContentdError | unknown {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : ''
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') ? new ContentdError('STORE_UNAVAILABLE') : error
}
