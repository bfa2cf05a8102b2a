// Content writes with group commit: operations arriving in the same turn of the event loop
// are applied one after another inside ONE immediate transaction, and acknowledged only
// after it is durable. Each keeps its own atomicity (a failing operation leaves the document
// as the previous one left it), its own version and its own change log entry
// (docs/design.md §9), written in that same transaction; the batch pays for one fsync, and
// one serialization per touched document at most, instead of one per operation. How the
// result is laid out in the file is content-log.ts's business. A project's schema
// (docs/design.md §12) is read inside the same transaction and checked on each operation's
// result (applyChecked) before its log entry is written, so a refused write leaves neither
// content nor log changed.
//
// The fsync does not run on the event loop (issue 18): the batch commits with
// synchronous=NORMAL (no fsync in COMMIT), then `sync` makes the WAL durable on the thread
// pool (wal-sync.ts), and only then are the batch's writes acknowledged and their changes
// told to listeners. Writes arriving meanwhile wait and form the next batch, committed when
// the sync returns: one ordered commit stream, one sync in flight, batches as large as when
// the loop itself waited. A committed batch is visible to reads before its sync returns (as
// MongoDB's "local" read concern); no write is acknowledged before it is durable.
import type Database from 'better-sqlite3'
import { ContentdError, isContentdError } from '../../../shared/errors.js'
import type { ChangeEntry } from '../../../shared/events.js'
import type { Json, JsonObject } from '../../../shared/json.js'
import { applyContentOperation, isCompound, type ContentOperation } from '../../../shared/compound.js'
import { ContentBudget } from '../../../shared/content-budget.js'
import { applyOperation, growthBound } from '../../../shared/operations.js'
import { prepareUndo } from '../../../shared/undo.js'
import type { ContentSchema } from '../../schema/content-schema.js'
import { changePartsOf, entryOf, projectRefOf, serializeEntry, type ChangeParts } from '../change-entry.js'
import type { CommitEmitter } from '../commit-emitter.js'
import type { CachedDocument } from '../document-cache.js'
import type { ApplyOptions, ProjectRecord, StoreOperation } from '../types.js'
import { versionMatches } from '../version-condition.js'
import type { ChangedDocument, ContentLog } from './content-log.js'
import type { LookupCache } from './lookup-cache.js'

interface PendingWrite {
  project: ProjectRecord
  operation: StoreOperation
  options: ApplyOptions
  resolve: (result: { version: number }) => void
  reject: (error: unknown) => void
}

/** A document while a group commit changes it. */
interface WorkingDocument extends ChangedDocument {
  /** The project's schema, read in the group's transaction; null when it has none. */
  schema: ContentSchema | null
}

type Outcome = { ok: true, version: number, entry: ChangeEntry } | { ok: false, error: unknown }

/** What a store operation does to the document: the Operation to apply and its value as JSON. */
interface Resolved {
  applied: ContentOperation
  /** The value serialized once (absent for delete): measured for the limit, stored in the entry. */
  valueJson: string | undefined
  parts: ChangeParts
}

export interface ContentWriterParts {
  db: Database.Database
  log: ContentLog
  /** Told of every committed version, so remembered projects show it. */
  lookups: LookupCache
  /** Hears each committed change, after the commit, in version order. */
  commitListeners: CommitEmitter
  contentLimitBytes: number
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

  apply (project: ProjectRecord, operation: StoreOperation, options: ApplyOptions): Promise<{ version: number }> {
    return new Promise((resolve, reject) => {
      if (this.broken) { reject(this.broken); return }
      this.pending.push({ project, operation, options, resolve, reject })
      if (!this.flushScheduled && !this.syncing) {
        this.flushScheduled = true
        setImmediate(() => this.flush())
      }
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
      const committed = this.commit(batch)
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
        this.parts.commitListeners.emit({ project: write.project, entry: outcome.entry })
        write.resolve({ version: outcome.version })
      })
    }
    this.flush()
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
  private commit (batch: PendingWrite[]): CommittedBatch | undefined {
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
      const failure = isContentdError(error) ? error : storeFailure(error)
      for (const write of batch) write.reject(failure)
      return undefined
    }
    // The cache and look-ups follow the file at once: the next batch builds on this one.
    for (const [projectId, entry] of written) {
      log.remember(projectId, entry)
      lookups.contentCommitted(projectId, entry.version)
    }
    return { batch, outcomes }
  }

  private applyInTransaction (write: PendingWrite, working: Map<string, WorkingDocument | null>, at: string): Outcome {
    const { log } = this.parts
    const projectId = write.project.id
    let state = working.get(projectId)
    if (state === undefined) {
      const current = log.editable(projectId)
      state = current ? { ...current, schema: this.parts.schemaFor(projectId) } : null
      working.set(projectId, state)
    }
    if (!state) return { ok: false, error: new ContentdError('PROJECT_NOT_FOUND') }
    const { operation, options } = write
    try {
      // If-Match first (docs/design.md §4 step 6), then the operation's own errors.
      if (options.ifMatch !== undefined && !versionMatches(options.ifMatch, state.version)) {
        throw new ContentdError('PRECONDITION_FAILED')
      }
      const { applied, valueJson, parts } = this.resolve(projectId, operation, state)
      this.applyChecked(state, applied, valueJson === undefined ? 0 : Buffer.byteLength(valueJson))
      state.version += 1
      state.dirty = true
      const replaced = applied.op === 'update'
      // The document's JSON is known exactly after a replacement, and stale after anything else.
      state.json = replaced ? valueJson : undefined
      // The entry is serialized now, in the same transaction: a later operation of this batch
      // may mutate a value this one inserted (set a {b:[1]}, then push a.b), and the log must
      // keep what ran.
      log.append(projectId, state, serializeEntry(state.version, parts, valueJson, at, JSON.stringify(options.actor)), replaced)
      const entry = entryOf(projectRefOf(write.project), state.version, parts, ownValue(applied, valueJson), at, options.actor)
      return { ok: true, version: state.version, entry }
    } catch (error) {
      // Only expected failures stay per-operation; anything else aborts the whole batch.
      if (isContentdError(error)) return { ok: false, error }
      throw error
    }
  }

  /**
   * applyWithinLimit, then the project's schema on the result. A refusal (SCHEMA_VIOLATION)
   * leaves the working document exactly as it was: a path operation mutated it in place, so
   * it is undone (prepareUndo records only what the operation replaces), not copied
   * beforehand; update, revert, batch and patch build a new document and leave it untouched.
   */
  private applyChecked (state: WorkingDocument, operation: ContentOperation, valueBytes: number): void {
    if (!state.schema) { this.applyWithinLimit(state, operation, valueBytes); return }
    const { doc, bytes } = state
    const check = state.schema.enforce(doc, operation)
    const undo = isCompound(operation) ? undefined : prepareUndo(doc, operation)
    this.applyWithinLimit(state, operation, valueBytes)
    try {
      check(state.doc)
    } catch (error) {
      // Changed in place unless a new document replaced it (update, batch, patch, near-limit copy).
      if (state.doc === doc) undo?.()
      state.doc = doc
      state.bytes = bytes
      throw error
    }
  }

  /**
   * A revert becomes the replacement of the content by the content at its version, read
   * from the log inside this transaction (so it sees the changes earlier in the batch).
   */
  private resolve (projectId: string, operation: StoreOperation, state: ChangedDocument): Resolved {
    const parts = changePartsOf(operation)
    if (operation.op === 'revert') {
      const json = this.parts.log.contentAt(projectId, operation.version, state)
      return { applied: { op: 'update', value: JSON.parse(json) as JsonObject }, valueJson: json, parts }
    }
    // JSON.stringify of a validated value is never undefined.
    const valueJson = 'value' in operation ? JSON.stringify(operation.value) : undefined
    return { applied: operation, valueJson, parts }
  }

  /** Applies the operation unless the document would outgrow the content limit. */
  private applyWithinLimit (state: ChangedDocument, operation: ContentOperation, valueBytes: number): void {
    const limit = this.parts.contentLimitBytes
    if (operation.op === 'update') {
      if (valueBytes > limit) throw new ContentdError('CONTENT_TOO_LARGE')
      state.doc = applyOperation(state.doc, operation)
      state.bytes = valueBytes
      return
    }
    if (isCompound(operation)) {
      // A batch or patch works on a copy of what it touches (shared/working-copy.ts): the
      // document itself is untouched until the result replaces it. The budget refuses the
      // first operation that would pass the limit, before it runs (docs/design.md §13b);
      // state.bytes is an upper bound of the document's size, which it starts from.
      const budget = new ContentBudget(limit, state.bytes)
      state.doc = applyContentOperation(state.doc, operation, budget)
      state.bytes = budget.bytes
      return
    }
    const bound = growthBound(operation, valueBytes)
    if (state.bytes + bound <= limit) {
      applyOperation(state.doc, operation)
      state.bytes += bound
      return
    }
    // Close to the limit: measure exactly, on a copy, so a refusal changes nothing.
    const candidate = applyOperation(structuredClone(state.doc), operation)
    const exact = Buffer.byteLength(JSON.stringify(candidate))
    if (exact > limit) throw new ContentdError('CONTENT_TOO_LARGE', `the content would be ${exact} bytes; the limit is ${limit}`)
    state.doc = candidate
    state.bytes = exact
  }
}

/**
 * The entry's value as commit listeners get it: a value of its own. The written value now
 * lives inside the document (an update's value IS the document), and later operations may
 * change it in place; a listener that keeps the change must still see what was applied.
 * `valueJson` is the value as JSON, exact because the operation validated it.
 */
function ownValue (operation: ContentOperation, valueJson: string | undefined): Json | undefined {
  if (!('value' in operation) || valueJson === undefined) return undefined
  const value = operation.value
  if (typeof value !== 'object' || value === null) return value
  return JSON.parse(valueJson) as Json
}

function storeFailure (error: unknown): ContentdError | unknown {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : ''
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') ? new ContentdError('STORE_UNAVAILABLE') : error
}
