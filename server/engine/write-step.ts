// The write rules of docs/design.md §3, §4, §9, §10 and §12, once for every store: one content
// write computed against the project's document at its current version V, without I/O. A
// store's commit primitive (server/store/types.ts ContentStorage) runs this inside its atomic
// step (SQLite: the group's transaction; MongoDB: between the read of V and the update filtered
// on V) and persists what it returns as version V+1 with its change-log entry. So If-Match, a
// revert's retention checks, the content limit, the schema with its undo, and the entry are
// decided here, and a store only keeps what was decided.
//
// Where the features being built plug in (issue 27):
// - app rules (§17): ApplyOptions.rules (the rules as the request read them, the caller's
//   claims, its evaluation budget), checked below beside the schema, before the apply;
// - the path index (§15): a `touches` member of PreparedChange, computed here from the
//   applied operation, which each store writes beside the entry;
// - remembered Idempotency-Keys (§19): an `idempotency` member of ApplyOptions copied into
//   PreparedChange, which each store writes beside the entry.
import { isCompound, type ContentOperation } from '../../shared/compound.js'
import { applyWithinLimit, type SizedContent } from '../../shared/content-limit.js'
import { ContentdError } from '../../shared/errors.js'
import type { Actor, ChangeEntry } from '../../shared/events.js'
import type { Json, JsonObject } from '../../shared/json.js'
import type { PathOperation } from '../../shared/operations.js'
import { prepareUndo } from '../../shared/undo.js'
import { valueJsonOf } from '../../shared/validate-operation.js'
import { requireWriteAllowed, type RulesCheck } from '../rules/check.js'
import type { ContentSchema } from '../schema/content-schema.js'
import { changePartsOf, entryAround, entryOf, LazyValue, projectRefOf, serializeEntry, type ChangeParts } from '../store/change-entry.js'
import type { ApplyOptions, LoggedIdempotencyKey, ProjectRecord, StoreOperation } from '../store/types.js'
import { preconditionsHold } from '../store/version-condition.js'

/** The project's content at its current version, as the store read it inside its atomic step. */
export interface CurrentContent extends SizedContent {
  version: number
  /** The project's schema, read in the same atomic step as the content; null without one. */
  schema: ContentSchema | null
}

/** What the store lends a write while it runs inside the store's atomic step. */
export interface CommitContext {
  /** The entry's time (a group commit gives its writes one). */
  at: string
  /**
   * The content at a past version as JSON (a revert), checking retention: VERSION_NOT_FOUND
   * above the current version, HISTORY_EXPIRED below the oldest kept one.
   */
  contentAt (version: number): string
  /**
   * A store that persists a path operation as a native update (MongoDB, translate.ts) builds
   * it here, from the document as it was before the operation: the result goes in `native`.
   */
  translate?: (operation: PathOperation, before: JsonObject) => unknown
}

/** A write the engine resolved: what to apply, and how its entry reads. */
export interface ResolvedChange {
  applied: ContentOperation
  parts: ChangeParts
  /** The value as JSON, serialized once (absent for delete): measured, and stored in the entry. */
  valueJson: string | undefined
}

/** One change, computed: what the store persists as version `version`, atomically with its entry. */
export interface PreparedChange extends ResolvedChange {
  version: number
  /** The content after the change; for a path operation usually the current document, changed in place. */
  doc: JsonObject
  /** An upper bound of the content's JSON bytes (shared/content-limit.ts). */
  bytes: number
  /** The change replaces the whole content (update, revert): its entry holds the content (a checkpoint). */
  replaced: boolean
  /** The native update CommitContext.translate built; absent for whole-content changes. */
  native?: unknown
  at: string
  actor: Actor
  /**
   * The entry as a store keeps it (storedEntryJson), made once as one flat text; `valueJson`
   * is a slice of it.
   */
  entryJson: string
  /** entryJson's UTF-8 size, measured once: the log keeps it with the entry (pages are sized by it). */
  entryBytes: number
  /** The entry as listeners get it (`project` first), built now: later writes of a group cannot alter it. */
  entry: ChangeEntry
  /** Makes the entry's one wire form (server/feed/wire.ts), handed to the feed with the commit. */
  wire: () => string
  /** The request's Idempotency-Key, which the store writes beside the entry, never in it (docs/design.md §19). */
  idempotency?: LoggedIdempotencyKey
}

/** A revert becomes the replacement of the content by the content at its version. */
export function resolveChange (operation: StoreOperation, context: Pick<CommitContext, 'contentAt'>): ResolvedChange {
  const parts = changePartsOf(operation)
  if (operation.op === 'revert') {
    const json = context.contentAt(operation.version)
    return { applied: { op: 'update', value: JSON.parse(json) as JsonObject }, valueJson: json, parts }
  }
  // The text the route's validation made, if it did (valueJsonOf); JSON.stringify of a
  // validated value is never undefined.
  return { applied: operation, valueJson: 'value' in operation ? valueJsonOf(operation) : undefined, parts }
}

/**
 * One write against `current`: If-Match and If-None-Match first (docs/design.md §4 step 6),
 * then the operation's own errors, the content limit and the schema. Throws a catalogued
 * error leaving `current` exactly as it was; otherwise `current.doc` may have been changed in
 * place (the result's `doc`): the store must then persist the result or forget the document.
 */
export function prepareChange (project: ProjectRecord, current: CurrentContent, operation: StoreOperation, options: ApplyOptions, context: CommitContext, contentLimitBytes: number): PreparedChange {
  if (!preconditionsHold(options, current.version)) throw new ContentdError('PRECONDITION_FAILED')
  const change = applyResolved(projectRefOf(project), current, resolveChange(operation, context), options.actor, context, contentLimitBytes, options.rules)
  if (options.idempotency) change.idempotency = options.idempotency
  return change
}

/** prepareChange after the preconditions, for a change already resolved; `projectRef` ("@alice/demo") goes in the entry. */
export function applyResolved (projectRef: string, current: CurrentContent, resolved: ResolvedChange, actor: Actor, context: CommitContext, contentLimitBytes: number, rules?: RulesCheck): PreparedChange {
  const { applied, parts } = resolved
  const before = current.doc
  // [rules, issue 31] An app user's rules (docs/design.md §17), in the same atomic step as the
  // schema: each operation dry-run on a working copy of `before` (server/rules/check.ts), so
  // a refusal leaves `before` untouched. Update and revert (applied as update) need the root's .write.
  if (rules) requireWriteAllowed(rules, before, applied)
  // Before the apply: a path operation changes `before` in place, and the schema's check and
  // the native translation need it as it was.
  const check = current.schema ? current.schema.enforce(before, applied) : null
  const undo = check && !isCompound(applied) ? prepareUndo(before, applied) : undefined
  const native = context.translate && !isWhole(applied) ? context.translate(applied, before) : undefined
  const version = current.version + 1
  const at = context.at
  const { entryJson, entryBytes, valueJson, valueBytes } = storedForm(version, parts, resolved.valueJson, at, actor)
  const after = applyWithinLimit(current, applied, contentLimitBytes, valueBytes, Buffer.byteLength)
  if (check) {
    try {
      check(after.doc)
    } catch (error) {
      // Changed in place unless a new document replaced it (update, batch, patch, near-limit copy).
      if (after.doc === before) undo?.()
      throw error
    }
  }
  const entry = entryOf(projectRef, version, parts, ownValue(applied, valueJson), at, actor)
  // The one wire form every consumer sends (server/feed/wire.ts), made from the stored entry
  // already at hand, and only if a consumer asks for it: the change feed registers the maker
  // only for a change someone is there to send. The maker holds only the entry's text, not
  // the change: the document must not live as long as the entry does.
  const wire = () => wireEntryJson(projectRef, { version, parts, valueJson, at, actor, entryJson })
  return { applied, parts, valueJson, version, doc: after.doc, bytes: after.bytes, replaced: applied.op === 'update', native, at, actor, entry, wire, entryJson, entryBytes }
}

/**
 * The entry as a store keeps it, as one flat text, with the value's JSON found inside it and
 * its UTF-8 size (the content limit's). Measuring the joined text flattens it: the one copy of
 * the value's characters the write makes (JSON.stringify returns a text made of parts, which
 * the route's check no longer flattens on its own), which the log then binds as it is; the
 * value's JSON is a slice of it, which V8 makes without copying (BENCHMARKS.md, issue 35: the
 * value's copy and the entry's were two 100 KB young-generation allocations per write).
 */
function storedForm (version: number, parts: ChangeParts, valueJson: string | undefined, at: string, actor: Actor): { entryJson: string, entryBytes: number, valueJson: string | undefined, valueBytes: number } {
  const { before, after } = entryAround(version, parts, valueJson !== undefined, at, JSON.stringify(actor))
  if (valueJson === undefined) {
    const entryJson = before + after
    return { entryJson, entryBytes: Buffer.byteLength(entryJson), valueJson, valueBytes: 0 }
  }
  const entryJson = before + valueJson + after
  const entryBytes = Buffer.byteLength(entryJson)
  return {
    entryJson,
    entryBytes,
    valueJson: entryJson.slice(before.length, entryJson.length - after.length),
    valueBytes: entryBytes - Buffer.byteLength(before) - Buffer.byteLength(after)
  }
}

/** What an entry's JSON is made from: its parts, or the stored text already made (applyResolved). */
type EntryText = Pick<PreparedChange, 'version' | 'parts' | 'valueJson' | 'at' | 'actor'> & { entryJson?: string }

/** The entry as listeners get it, as JSON: the stored form with `project` put first. */
export function wireEntryJson (projectRef: string, change: EntryText): string {
  return '{"project":' + JSON.stringify(projectRef) + ',' + storedEntryJson(change).slice(1)
}

/** The entry as a store keeps it (without `project`), as JSON: the value's JSON reused, not made again. */
export function storedEntryJson (change: EntryText): string {
  return change.entryJson ?? serializeEntry(change.version, change.parts, change.valueJson, change.at, JSON.stringify(change.actor))
}

function isWhole (operation: ContentOperation): operation is Exclude<ContentOperation, PathOperation> {
  return operation.op === 'update' || isCompound(operation)
}

/**
 * The entry's value as listeners get it: a value of its own. The written value now lives
 * inside the document (an update's value IS the document), and later operations may change
 * it in place; a listener that keeps the change must still see what was applied.
 */
function ownValue (operation: ContentOperation, valueJson: string | undefined): Json | LazyValue | undefined {
  if (!('value' in operation) || valueJson === undefined) return undefined
  const value = operation.value
  if (typeof value !== 'object' || value === null) return value
  // Parsed from the JSON made at the write only if a listener reads it (change-entry.ts).
  return new LazyValue(valueJson)
}
