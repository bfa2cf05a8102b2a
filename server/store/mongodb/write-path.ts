// Content writes on MongoDB (docs/design.md §20). Each write:
//   1. reads the project document: its version V, content, size and schema;
//   2. applies the operation with the shared core (shared/content-limit.ts → operations.ts,
//      batch.ts, json-patch.ts: the very code the embedded store runs), so every check, error
//      and limit is the embedded store's; then the schema on the result;
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
import type { ContentOperation } from '../../../shared/compound.js'
import { applyWithinLimit, jsonBytes } from '../../../shared/content-limit.js'
import { ContentdError } from '../../../shared/errors.js'
import type { Actor } from '../../../shared/events.js'
import type { Json, JsonObject } from '../../../shared/json.js'
import type { ContentSchema } from '../../schema/content-schema.js'
import { entryOf, projectRefOf, type ChangeParts } from '../change-entry.js'
import type { CommitEmitter } from '../commit-emitter.js'
import type { ApplyOptions, ProjectRecord } from '../types.js'
import { preconditionsHold } from '../version-condition.js'
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
}

/** A write as the store resolved it: what to apply, and how its entry reads. */
export interface ResolvedWrite {
  applied: ContentOperation
  parts: ChangeParts
  /** The entry's value (the operation's, or a revert's resulting content). */
  value: Json | undefined
}

export interface WritePathParts {
  backend: ContentBackend
  contentLimitBytes: number
  commitListeners: CommitEmitter
  /** The compiled schema of a stored one (compiled once per revision). */
  schemaOf: (stored: { revision: string, json: string }) => ContentSchema
  /** Rounds lost to other nodes before answering 503 STORE_UNAVAILABLE. */
  maxAttempts?: number
}

/** Roughly the bytes of an entry besides its value and path: version, op, time, actor. */
const ENTRY_OVERHEAD_BYTES = 128
export const DEFAULT_WRITE_ATTEMPTS = 16

export class MongoWritePath {
  private readonly queue = new ProjectQueue()

  constructor (private readonly parts: WritePathParts) {}

  /** Queued behind this node's other writes to the project. */
  apply (project: ProjectRecord, write: ResolvedWrite, options: ApplyOptions): Promise<CommittedWrite> {
    return this.queue.run(project.id, () => this.write(project, write, options))
  }

  private async write (project: ProjectRecord, write: ResolvedWrite, options: ApplyOptions): Promise<CommittedWrite> {
    const attempts = this.parts.maxAttempts ?? DEFAULT_WRITE_ATTEMPTS
    for (let attempt = 0; attempt < attempts; attempt++) {
      const stored = await this.parts.backend.read(project.id)
      if (!stored) throw new ContentdError('PROJECT_NOT_FOUND')
      // If-Match first (docs/design.md §4 step 6), then the operation's own errors.
      if (!preconditionsHold(options, stored.version)) throw new ContentdError('PRECONDITION_FAILED')
      const schema = stored.schema ? this.parts.schemaOf(stored.schema) : null
      const commit = prepareCommit(project.id, stored, write, options.actor, this.parts.contentLimitBytes, schema)
      const committed = await this.parts.backend.commit(commit)
      if (!committed) continue
      this.parts.commitListeners.emit({ project, entry: entryOf(projectRefOf(project), committed.version, write.parts, write.value, commit.at, options.actor) })
      return committed
    }
    throw new ContentdError('STORE_UNAVAILABLE', 'the project is changing too fast to apply this change; retry')
  }
}

/**
 * Steps 2 and 3 without I/O: the shared core applied to `stored` (throws its catalogued
 * errors, having sent nothing), then the filter on V and the native update. `stored.content`
 * is the write's own copy and may be changed in place.
 */
export function prepareCommit (projectId: string, stored: StoredContent, write: ResolvedWrite, actor: Actor, limit: number, schema: ContentSchema | null): ContentCommit {
  const { applied } = write
  const before = stored.content
  const bytes = stored.contentBytes ?? jsonBytes(before, Buffer.byteLength)
  const valueBytes = 'value' in applied ? Buffer.byteLength(JSON.stringify(applied.value)) : 0
  // Before the apply: a path operation changes `before` in place, and the schema and delete's
  // translation need it as it was.
  const check = schema ? schema.enforce(before, applied) : null
  const native = applied.op === 'update' || applied.op === 'batch' || applied.op === 'patch' ? null : pathUpdate(applied, before)
  const after = applyWithinLimit({ doc: before, bytes }, applied, limit, valueBytes, Buffer.byteLength)
  check?.(after.doc)
  const version = stored.version + 1
  const replaced = applied.op === 'update'
  const content = native ?? contentUpdate(after.doc)
  const update = withTailBookkeeping({
    ...content,
    $set: { ...(content.$set as Document | undefined), version, [CONTENT_BYTES_FIELD]: after.bytes }
  }, replaced, entryBytesOf(write)) as Document
  const filter: Document = { _id: projectId, version: stored.version, ...schemaCondition(stored.schema?.revision ?? null) }
  return { projectId, filter, update, version, replaced, parts: write.parts, value: write.value, at: new Date().toISOString(), actor }
}

/** Roughly what the entry weighs, for the checkpoint rule (history-policy.ts): it need not be exact. */
function entryBytesOf (write: ResolvedWrite): number {
  const value = write.value === undefined ? 0 : Buffer.byteLength(JSON.stringify(write.value))
  const operations = write.parts.operations === undefined ? 0 : Buffer.byteLength(JSON.stringify(write.parts.operations))
  return value + operations + (write.parts.path?.length ?? 0) + ENTRY_OVERHEAD_BYTES
}
