// Content writes with group commit: operations arriving in the same turn of the event loop
// are applied one after another inside ONE immediate transaction, and acknowledged only
// after it commits. Each keeps its own atomicity (a failing operation leaves the document as
// the previous one left it) and its own version; the batch pays for one fsync and one
// serialization per touched document instead of one per operation. How the result is laid
// out in the file is content-log.ts's business. A project's schema (docs/design.md §12) is
// read inside the same transaction and checked on each operation's result (applyChecked).
import type Database from 'better-sqlite3'
import { ContentdError, isContentdError } from '../../../shared/errors.js'
import type { JsonObject } from '../../../shared/json.js'
import { applyOperation, growthBound, type Operation } from '../../../shared/operations.js'
import { prepareUndo } from '../../../shared/undo.js'
import type { ContentSchema } from '../../schema/content-schema.js'
import type { CommitEmitter } from '../commit-emitter.js'
import type { CachedDocument } from '../document-cache.js'
import type { ApplyOptions, ProjectRecord } from '../types.js'
import { versionMatches } from '../version-condition.js'
import type { ChangedDocument, ContentLog } from './content-log.js'
import type { LookupCache } from './lookup-cache.js'

interface PendingWrite {
  project: ProjectRecord
  operation: Operation
  options: ApplyOptions
  resolve: (result: { version: number }) => void
  reject: (error: unknown) => void
}

/** A document while a batch changes it. */
interface WorkingDocument extends ChangedDocument {
  dirty: boolean
  /** The project's schema, read in the batch's transaction; null when it has none. */
  schema: ContentSchema | null
}

type Outcome = { ok: true, version: number, at: string, operation: Operation } | { ok: false, error: unknown }

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
}

export class ContentWriter {
  private pending: PendingWrite[] = []
  private flushScheduled = false

  constructor (private readonly parts: ContentWriterParts) {}

  apply (project: ProjectRecord, operation: Operation, options: ApplyOptions): Promise<{ version: number }> {
    return new Promise((resolve, reject) => {
      this.pending.push({ project, operation, options, resolve, reject })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  /** Commits what is queued now (the store calls this before closing the file). */
  flush (): void {
    const batch = this.pending
    this.pending = []
    this.flushScheduled = false
    if (batch.length === 0) return
    const { db, log, lookups, commitListeners } = this.parts
    const working = new Map<string, WorkingDocument | null>()
    const outcomes: Outcome[] = []
    const written = new Map<string, CachedDocument>()
    try {
      db.transaction(() => {
        const at = new Date().toISOString()
        for (const write of batch) outcomes.push(this.applyInTransaction(write, working, at))
        for (const [projectId, state] of working) {
          if (!state || !state.dirty) continue
          written.set(projectId, log.write(projectId, state))
        }
      }).immediate()
    } catch (error) {
      // Nothing committed. Documents in `working` may have been mutated: forget them.
      for (const projectId of working.keys()) log.forget(projectId)
      const failure = isContentdError(error) ? error : storeFailure(error)
      for (const write of batch) write.reject(failure)
      return
    }
    for (const [projectId, entry] of written) {
      log.remember(projectId, entry)
      lookups.contentCommitted(projectId, entry.version)
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i] as Outcome
      if (!outcome.ok) { write.reject(outcome.error); return }
      commitListeners.emit({ project: write.project, version: outcome.version, operation: outcome.operation, at: outcome.at })
      write.resolve({ version: outcome.version })
    })
  }

  private applyInTransaction (write: PendingWrite, working: Map<string, WorkingDocument | null>, at: string): Outcome {
    const projectId = write.project.id
    let state = working.get(projectId)
    if (state === undefined) {
      const current = this.parts.log.editable(projectId)
      state = current
        ? { doc: current.doc, version: current.version, bytes: current.bytes, dirty: false, logCount: current.logCount, logBytes: current.logBytes, batchLog: [], replaced: false, schema: this.parts.schemaFor(projectId) }
        : null
      working.set(projectId, state)
    }
    if (!state) return { ok: false, error: new ContentdError('PROJECT_NOT_FOUND') }
    const { operation, options } = write
    try {
      if (options.ifMatch !== undefined && !versionMatches(options.ifMatch, state.version)) {
        throw new ContentdError('PRECONDITION_FAILED')
      }
      const serializedValue = 'value' in operation ? JSON.stringify(operation.value) ?? '' : ''
      this.applyChecked(state, operation, Buffer.byteLength(serializedValue))
      state.version += 1
      state.dirty = true
      if (operation.op === 'update') state.replaced = true
      // Serialized now, not at write time: a later operation of this batch may mutate a value
      // this one inserted (set a {b:[1]}, then push a.b), and the log must replay what ran.
      else state.batchLog.push({ version: state.version, json: JSON.stringify(operation) })
      return { ok: true, version: state.version, at, operation: withOwnValue(operation, serializedValue) }
    } catch (error) {
      // Only expected failures stay per-operation; anything else aborts the whole batch.
      if (isContentdError(error)) return { ok: false, error }
      throw error
    }
  }

  /**
   * applyWithinLimit, then the project's schema on the result. A refusal (SCHEMA_VIOLATION)
   * leaves the working document exactly as it was: the operation mutated it in place, so it
   * is undone (prepareUndo records only what the operation replaces), not copied beforehand.
   */
  private applyChecked (state: WorkingDocument, operation: Operation, valueBytes: number): void {
    if (!state.schema) { this.applyWithinLimit(state, operation, valueBytes); return }
    const { doc, bytes } = state
    const check = state.schema.enforce(doc, operation)
    const undo = prepareUndo(doc, operation)
    this.applyWithinLimit(state, operation, valueBytes)
    try {
      check(state.doc)
    } catch (error) {
      // Changed in place unless update (a new document) or the near-limit copy replaced it.
      if (state.doc === doc) undo()
      state.doc = doc
      state.bytes = bytes
      throw error
    }
  }

  /** Applies the operation unless the document would outgrow the content limit. */
  private applyWithinLimit (state: WorkingDocument, operation: Operation, valueBytes: number): void {
    const limit = this.parts.contentLimitBytes
    if (operation.op === 'update') {
      if (valueBytes > limit) throw new ContentdError('CONTENT_TOO_LARGE')
      state.doc = applyOperation(state.doc, operation)
      state.bytes = valueBytes
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
 * The operation as commit listeners get it: with a value of its own. The written value now
 * lives inside the document, and later operations may change it in place; a listener that
 * keeps the change must still see what was applied. `serializedValue` is the value as JSON,
 * exact because the operation validated it.
 */
function withOwnValue (operation: Operation, serializedValue: string): Operation {
  if (!('value' in operation) || typeof operation.value !== 'object' || operation.value === null) return operation
  return { ...operation, value: JSON.parse(serializedValue) as JsonObject } as Operation
}

function storeFailure (error: unknown): ContentdError | unknown {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : ''
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') ? new ContentdError('STORE_UNAVAILABLE') : error
}
