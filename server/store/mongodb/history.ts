// The change log on MongoDB (docs/design.md §9, docs/mongodb.md), the parts that are pure and
// unit-tested without a server (test/mongodb/history.test.ts):
// - the bookkeeping every content update carries: the project document counts the entries
//   (and their size) after its latest checkpoint, so the write knows when one is due;
// - the projection that answers, with the new version, whether a checkpoint is due;
// - the documents of the `changes` and `checkpoints` collections, and back to entries;
// - whether a deployment can run the transactions each change is written in.
import type { Document } from 'mongodb'
import type { Actor, ChangeEntry } from '../../../shared/events.js'
import type { Json, JsonObject } from '../../../shared/json.js'
import { entryOf, type ChangeParts } from '../change-entry.js'
import { PageBudget, projectMemberOf } from '../change-pages.js'
import { CHECKPOINT_ENTRIES, CHECKPOINT_MIN_BYTES } from '../history-policy.js'
import type { EntryJson, IdempotencyId, LoggedIdempotencyKey, LoggedIdempotentChange } from '../types.js'
import { CONTENT_FIELD } from './translate.js'

/**
 * One entry of the `changes` collection: the §9 entry without `project`, keyed by (projectId,
 * version). `idempotency`: the request's Idempotency-Key (docs/design.md §19), never part of
 * the entry that readers get (entryOfChangeDoc leaves it out).
 */
export type ChangeDoc = Omit<ChangeEntry, 'project'> & { projectId: string, idempotency?: LoggedIdempotencyKey }

/** One checkpoint: the content at `version`; null when that version's change (update, revert) holds it. */
export interface CheckpointDoc {
  projectId: string
  version: number
  content: JsonObject | null
}

export function changeDocOf (projectId: string, version: number, parts: ChangeParts, value: Json | undefined, at: string, actor: Actor): ChangeDoc {
  const doc: ChangeDoc = { projectId, version, op: parts.op, at, actor }
  if (parts.path !== undefined) doc.path = parts.path
  if (value !== undefined) doc.value = value
  if (parts.index !== undefined) doc.index = parts.index
  if (parts.operations !== undefined) doc.operations = parts.operations
  if (parts.revertedTo !== undefined) doc.revertedTo = parts.revertedTo
  return doc
}

export function entryOfChangeDoc (project: string, doc: ChangeDoc): ChangeEntry {
  const parts: ChangeParts = { op: doc.op }
  if (doc.path !== undefined && doc.path !== null) parts.path = doc.path
  if (doc.index !== undefined && doc.index !== null) parts.index = doc.index
  if (Array.isArray(doc.operations)) parts.operations = doc.operations
  if (doc.revertedTo !== undefined && doc.revertedTo !== null) parts.revertedTo = doc.revertedTo
  return entryOf(project, doc.version, parts, doc.value, doc.at, doc.actor)
}

/**
 * The update with the tail bookkeeping added: +1 entry and its size, or back to 0 when the
 * change replaces the whole content (its version becomes a checkpoint). Works on both forms
 * translate.ts produces: an update document, or an aggregation pipeline.
 */
export function withTailBookkeeping (update: Document | Document[], replaced: boolean, entryBytes: number): Document | Document[] {
  if (Array.isArray(update)) {
    const counters = replaced
      ? { tailCount: 0, tailBytes: 0 }
      : { tailCount: { $add: [{ $ifNull: ['$tailCount', 0] }, 1] }, tailBytes: { $add: [{ $ifNull: ['$tailBytes', 0] }, entryBytes] } }
    return [...update, { $set: counters }]
  }
  if (replaced) return { ...update, $set: { ...(update.$set as Document | undefined), tailCount: 0, tailBytes: 0 } }
  return { ...update, $inc: { ...(update.$inc as Document | undefined), tailCount: 1, tailBytes: entryBytes } }
}

/**
 * What a content update returns: the new version, and whether a checkpoint is due (the same
 * rule as history-policy.ts's checkpointDue). `$and` stops at its first false, so the content
 * is measured only once enough bytes of entries have piled up.
 */
export const WRITE_RESULT_PROJECTION: Document = {
  _id: 0,
  version: 1,
  checkpointDue: {
    $or: [
      { $gte: [{ $ifNull: ['$tailCount', 0] }, CHECKPOINT_ENTRIES] },
      { $and: [{ $gte: [{ $ifNull: ['$tailBytes', 0] }, CHECKPOINT_MIN_BYTES] }, { $gte: ['$tailBytes', { $bsonSize: `$${CONTENT_FIELD}` }] }] }
    ]
  }
}

/**
 * Transactions need a replica set (or a sharded cluster); a standalone `mongod` has none.
 * `hello` is the answer to the `hello` command.
 */
export function supportsTransactions (hello: Document): boolean {
  return typeof hello.setName === 'string' || hello.msg === 'isdbgrid'
}

/** Change documents fetched per round trip while reading a page (readChangesPage). */
export const CHANGES_BATCH = 64

/**
 * One page of changes after `since` from a cursor over the `changes` documents in version
 * order: at most `limit` entries and at most `maxBytes` of them as sent (the first always;
 * docs/design.md §13b), each as its JSON text (serialized once, to be measured and sent). It
 * stops reading where the page ends, so a log of huge entries is never loaded to be cut (give
 * the cursor a small batchSize), and closes the cursor. `complete` is false when a version is
 * missing: retention pruned it while the page was read.
 */
export async function readChangesPage (cursor: AsyncIterable<ChangeDoc> & { close (): Promise<void> }, project: string, since: number, limit: number, maxBytes: number): Promise<{ entries: EntryJson[], more: boolean, complete: boolean }> {
  const entries: EntryJson[] = []
  const budget = new PageBudget(maxBytes)
  const memberBytes = Buffer.byteLength(projectMemberOf(project))
  try {
    for await (const doc of cursor) {
      if (doc.version !== since + 1 + entries.length) return { entries, more: false, complete: false }
      if (entries.length === limit) return { entries, more: true, complete: true }
      const json = JSON.stringify(entryOfChangeDoc(project, doc))
      const stored = Buffer.from(json)
      const bytes = stored.length
      if (!budget.admit(bytes)) return { entries, more: true, complete: true }
      // As stored: without the `project` member that change-pages.ts puts back in front.
      stored[memberBytes] = 0x7b // "{"
      entries.push({ version: doc.version, stored: stored.subarray(memberBytes), bytes })
    }
    return { entries, more: false, complete: true }
  } finally {
    await cursor.close()
  }
}

/**
 * The look-up of a remembered Idempotency-Key (docs/design.md §19): the newest change the
 * caller made under the key. The partial index's own condition ($exists) is repeated so the
 * planner may use that index. `loggedChangeOf` reads the answer.
 */
export function loggedIdempotencyQuery (id: IdempotencyId): { filter: Document, sort: Document, projection: Document } {
  return {
    filter: { projectId: id.projectId, 'idempotency.caller': id.caller, 'idempotency.key': id.key, idempotency: { $exists: true } },
    sort: { version: -1 },
    projection: { _id: 0, version: 1, op: 1, revertedTo: 1, idempotency: 1 }
  }
}

export function loggedChangeOf (doc: Pick<ChangeDoc, 'version' | 'op' | 'revertedTo' | 'idempotency'> | null): LoggedIdempotentChange | null {
  if (!doc?.idempotency) return null
  return { version: doc.version, fingerprint: doc.idempotency.fingerprint, op: doc.op, ...(typeof doc.revertedTo === 'number' ? { revertedTo: doc.revertedTo } : {}) }
}
