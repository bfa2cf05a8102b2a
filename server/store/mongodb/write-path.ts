// Content writes on MongoDB (docs/design.md §20). Each write:
//   1. reads the project document: its version V, content, size and schema;
//   2. runs the engine's prepare step on it (server/engine/write-step.ts: If-Match, the shared
//      core through shared/content-limit.ts, the schema on the result, the entry: the very
//      code the embedded store runs), so every check, error and limit is the embedded store's,
//      with translate.ts building the native update of a path operation on the way;
//   3. sends ONE transaction (the store's ContentBackend): the native update of translate.ts
//      filtered on `{_id, version: V}` (and the schema revision checked), with
//      `version: V+1`, plus the change log entry. The filter makes the checked document the
//      written one; when it matches nothing another node won, and the write starts again at 1.
// Writes to one project queue on this node (project-queue.ts), so a node never races itself:
// only writes from other nodes can make a filter miss.
//
// The backend is an interface so the whole path runs in tests against an independent
// implementation of MongoDB's query and update operators (mingo), with no server.
import type { Document } from 'mongodb'
import { jsonBytes } from '../../../shared/content-limit.js'
import { ContentdError } from '../../../shared/errors.js'
import type { Actor } from '../../../shared/events.js'
import type { Json, JsonObject } from '../../../shared/json.js'
import type { ContentCommitter, ContentWrite } from '../../engine/content-engine.js'
import { applyResolved, type CommitContext, type CurrentContent, type PreparedChange } from '../../engine/write-step.js'
import type { ContentSchema } from '../../schema/content-schema.js'
import { projectRefOf, type ChangeParts } from '../change-entry.js'
import type { CommitEmitter } from '../commit-emitter.js'
import type { ApplyOptions, LoggedIdempotencyKey, ProjectRecord } from '../types.js'
import { preconditionsHold } from '../version-condition.js'
import { isCompound, type ContentOperation } from '../../../shared/compound.js'
import { valueJsonOf } from '../../../shared/validate-operation.js'
import { withTailBookkeeping } from './history.js'
import { ProjectQueue } from './project-queue.js'
import { schemaCondition } from './schema-condition.js'
import { contentUpdate, pathUpdate } from './translate.js'

/** The project document's field holding an upper bound of the content's JSON bytes (shared/content-limit.ts). */
export const CONTENT_BYTES_FIELD = 'contentBytes'

/** What a write reads of the project document. */
export interface StoredContent {
  version: number
  content: JsonObject
  /** Absent on documents written before it existed: then measured. */
  contentBytes?: number
  /** The schema as stored (JSON text) with its revision. */
  schema?: { revision: string, json: string }
}

/** One write, ready to send: the filter, the update, and the change log entry's parts. */
export interface ContentCommit {
  projectId: string
  filter: Document
  update: Document
  /** The version this write creates (V+1). */
  version: number
  /** The change replaces the whole content (update, revert): its entry is a checkpoint. */
  replaced: boolean
  parts: ChangeParts
  value: Json | undefined
  at: string
  actor: Actor
  /** The request's Idempotency-Key, kept beside the entry (docs/design.md §19). */
  idempotency?: LoggedIdempotencyKey
}

export interface CommittedWrite {
  version: number
  /** A checkpoint was written with it: the store may prune (history-policy.ts). */
  checkpointed: boolean
}

export interface ContentBackend {
  read (projectId: string): Promise<StoredContent | null>
  /** ONE transaction: the update and the entry. null when the filter matched nothing (nothing written). */
  commit (write: ContentCommit): Promise<CommittedWrite | null>
  /**
   * The content at a past version as JSON, for a revert: read before the write's step (a past
   * version never changes), its errors (VERSION_NOT_FOUND, HISTORY_EXPIRED) thrown by the step
   * when it asks, so If-Match still comes first. Absent: this backend keeps no history.
   */
  contentAt? (projectId: string, version: number): Promise<string>
}

/** A write already resolved (a revert's content read): what to apply, and how its entry reads. */
export interface ResolvedWrite {
  applied: ContentOperation
  parts: ChangeParts
  /** The entry's value (the operation's, or a revert's resulting content). */
  value: Json | undefined
}

export interface WritePathParts {
  backend: ContentBackend
  /** The compiled schema of a stored one (compiled once per revision). */
  schemaOf: (stored: { revision: string, json: string }) => ContentSchema
  /** Rounds lost to other nodes before answering 503 STORE_UNAVAILABLE. */
  maxAttempts?: number
  /** For apply() only (writes resolved without the engine): CONTENT_LIMIT, and who hears of commits. */
  contentLimitBytes: number
  commitListeners?: CommitEmitter
}

/** Roughly the bytes of an entry besides its value and path: version, op, time, actor. */
const ENTRY_OVERHEAD_BYTES = 128
export const DEFAULT_WRITE_ATTEMPTS = 16

export class MongoWritePath implements ContentCommitter {
  private readonly queue = new ProjectQueue()

  constructor (private readonly parts: WritePathParts) {}

  /** The store's commit primitive (server/engine/content-engine.ts), queued behind this node's other writes to the project. */
  commit (write: ContentWrite): Promise<PreparedChange> {
    return this.queue.run(write.project.id, () => this.write(write))
  }

  /** A write resolved by the caller, checked and committed by the same step; told to `commitListeners`. */
  apply (project: ProjectRecord, resolved: ResolvedWrite, options: ApplyOptions): Promise<CommittedWrite> {
    const { contentLimitBytes, commitListeners } = this.parts
    return this.commit({
      project,
      prepare: (current, context) => {
        if (!preconditionsHold(options, current.version)) throw new ContentdError('PRECONDITION_FAILED')
        return applyResolved(projectRefOf(project), current, changeOf(resolved), options.actor, context, contentLimitBytes, options.rules)
      },
      committed: change => commitListeners?.emit({ project, entry: change.entry })
    }).then(change => ({ version: change.version, checkpointed: false }))
  }

  private async write (write: ContentWrite): Promise<PreparedChange> {
    const { backend } = this.parts
    const projectId = write.project.id
    const attempts = this.parts.maxAttempts ?? DEFAULT_WRITE_ATTEMPTS
    for (let attempt = 0; attempt < attempts; attempt++) {
      const stored = await backend.read(projectId)
      if (!stored) throw new ContentdError('PROJECT_NOT_FOUND')
      const contentAt = write.readsVersion === undefined ? noHistory : await this.pastContent(projectId, write.readsVersion)
      const schema = stored.schema ? this.parts.schemaOf(stored.schema) : null
      const change = write.prepare(currentOf(stored, schema), { at: new Date().toISOString(), contentAt, translate: pathUpdate })
      const committed = await backend.commit(commitOf(projectId, stored, change))
      if (!committed) continue
      write.committed(change)
      return change
    }
    throw new ContentdError('STORE_UNAVAILABLE', 'the project is changing too fast to apply this change; retry')
  }

  /** The content at `version` read now, or the error reading it gave, for the step to meet when it asks. */
  private async pastContent (projectId: string, version: number): Promise<CommitContext['contentAt']> {
    const read = this.parts.backend.contentAt
    if (!read) return noHistory
    const past = await read.call(this.parts.backend, projectId, version).then(json => ({ json }), (error: unknown) => ({ error }))
    return asked => {
      if (asked !== version) throw new Error(`content at ${asked} asked for; ${version} was read`)
      if ('error' in past) throw past.error
      return past.json
    }
  }
}

function noHistory (): never {
  throw new Error('this write path reads no history')
}

function currentOf (stored: StoredContent, schema: ContentSchema | null): CurrentContent {
  return { version: stored.version, doc: stored.content, bytes: stored.contentBytes ?? jsonBytes(stored.content, Buffer.byteLength), schema }
}

function changeOf (resolved: ResolvedWrite) {
  return { applied: resolved.applied, parts: resolved.parts, valueJson: resolved.value === undefined ? undefined : valueJsonOfResolved(resolved) }
}

/** The entry's value as JSON: the text the route's validation made for that very value (as the SQLite store's write-step.ts takes it), or made now. */
function valueJsonOfResolved ({ applied, value }: ResolvedWrite): string {
  return !isCompound(applied) && 'value' in applied && applied.value === value ? valueJsonOf(applied) : JSON.stringify(value)
}

/**
 * Steps 2 and 3 without I/O, for a write already resolved: the engine's step applied to
 * `stored` (throws its catalogued errors, having sent nothing), then the filter on V and the
 * native update. `stored.content` is the write's own copy and may be changed in place.
 */
export function prepareCommit (projectId: string, stored: StoredContent, write: ResolvedWrite, actor: Actor, limit: number, schema: ContentSchema | null): ContentCommit {
  // The listener's entry is not sent anywhere here: the project id stands in for its reference.
  const change = applyResolved(projectId, currentOf(stored, schema), changeOf(write), actor, { at: new Date().toISOString(), contentAt: noHistory, translate: pathUpdate }, limit)
  return commitOf(projectId, stored, change)
}

/** The filter on V (and the schema revision checked) and the native update that persist `change`. */
function commitOf (projectId: string, stored: StoredContent, change: PreparedChange): ContentCommit {
  const content = (change.native as Document | undefined) ?? contentUpdate(change.doc)
  const update = withTailBookkeeping({
    ...content,
    $set: { ...(content.$set as Document | undefined), version: change.version, [CONTENT_BYTES_FIELD]: change.bytes }
  }, change.replaced, entryBytesOf(change)) as Document
  const filter: Document = { _id: projectId, version: stored.version, ...schemaCondition(stored.schema?.revision ?? null) }
  const value = 'value' in change.applied ? change.applied.value : undefined
  const commit: ContentCommit = { projectId, filter, update, version: change.version, replaced: change.replaced, parts: change.parts, value, at: change.at, actor: change.actor }
  if (change.idempotency) commit.idempotency = change.idempotency
  return commit
}

/** Roughly what the entry weighs, for the checkpoint rule (history-policy.ts): it need not be exact. */
function entryBytesOf (change: PreparedChange): number {
  const value = change.valueJson === undefined ? 0 : Buffer.byteLength(change.valueJson)
  const operations = change.parts.operations === undefined ? 0 : Buffer.byteLength(JSON.stringify(change.parts.operations))
  return value + operations + (change.parts.path?.length ?? 0) + ENTRY_OVERHEAD_BYTES
}
