// From one content operation to ONE MongoDB findOneAndUpdate on the project document:
// a filter (the project, the If-Match versions, and an `$expr` guard stating docs/design.md §2-§3
// where MongoDB's own behaviour differs), an update that changes the content and adds 1 to
// the version, and options returning the new version. Pure: no driver calls, so every
// translation is unit-tested (test/mongodb/translate.test.ts).
//
// Where native MongoDB differs from the design, and how the guard closes the gap:
// - `$set`/`$inc`/`$push` past an array's end pad with nulls → guard: index <= length.
// - a non-canonical index ("07", "x") into an array → guard: false.
// - a path through a scalar → MongoDB errors (PathNotViable) or silently no-ops ($unset) →
//   guard: false.
// - `$inc` on a non-number or null → guard: the target is a number or missing; the sum
//   must stay finite (MongoDB would store Infinity).
// - `$unset` on an array element leaves null → a pipeline update rebuilding the array.
// - `$position` past the end appends → guard: index <= length (index 0 when missing).
// - content size: `$bsonSize` of the content plus an upper bound of the growth stays
//   within the limit (MongoDB itself stops at 16 MiB).
// When the guard fails the store reads the document once, only to name the error.
import { BSON, Double, type Document, type FindOneAndUpdateOptions } from 'mongodb'
import type { Json } from '../../../shared/json.js'
import type { Operation } from '../../../shared/operations.js'
import { isCanonicalIndex, utf8ByteLength } from '../../../shared/path.js'
import type { VersionCondition } from '../types.js'
import { contentWithout, pathGuard, type Expression, type TargetRule } from './expressions.js'

/** The content field of a project document. */
export const CONTENT_FIELD = 'content'

/** MongoDB refuses documents over 16 MiB; keep room for the project's other fields. */
export const MAX_CONTENT_BSON_BYTES = 16 * 1024 * 1024 - 64 * 1024

export const RETURN_NEW_VERSION: FindOneAndUpdateOptions = { returnDocument: 'after', projection: { _id: 0, version: 1 } }

export interface MongoWrite {
  filter: Document
  /** An update document, or an aggregation pipeline (delete of a possible array element). */
  update: Document | Document[]
  options: FindOneAndUpdateOptions
}

export interface TranslateOptions {
  /** The content limit in BSON bytes (already capped by effectiveContentLimit). */
  contentLimitBytes: number
  ifMatch?: VersionCondition
  ifNoneMatch?: VersionCondition
  /**
   * Compare-and-set: match only this version. Used after the store has read that version
   * and checked the operation and its exact size on it, so the size guard is left out.
   */
  expectVersion?: number
}

export function effectiveContentLimit (configured: number): number {
  return Math.min(configured, MAX_CONTENT_BSON_BYTES)
}

/** The BSON size of a value as an element of a document (what it adds when stored). */
export function valueBsonBytes (value: Json): number {
  return BSON.calculateObjectSize({ v: value }) - 5
}

/** The BSON size of a whole content object. */
export function contentBsonBytes (content: Document): number {
  return BSON.calculateObjectSize(content)
}

/**
 * An upper bound of how many BSON bytes an operation adds to the content. Every created
 * level costs type byte + key + NUL + an empty document's 5 bytes; a number at most 8 bytes
 * (+4 when an int32 becomes a double); array keys are decimal positions (at most 10 bytes).
 */
export function bsonGrowthBound (operation: Operation): number {
  if (operation.op === 'delete') return 0
  if (operation.op === 'update') return valueBsonBytes(operation.value)
  let levels = 0
  for (const segment of operation.path) levels += utf8ByteLength(segment) + 8
  const written = operation.op === 'increment' || operation.op === 'decrement' ? 8 : valueBsonBytes(operation.value)
  return levels + written + 32
}

/** "content.a.0.b": MongoDB's dot notation; numeric segments index arrays, name keys in objects. */
export function fieldPath (path: readonly string[]): string {
  return [CONTENT_FIELD, ...path].join('.')
}

/** increment adds, decrement adds the negated amount; always as a double, like JSON numbers. */
export function amountOf (operation: Extract<Operation, { op: 'increment' | 'decrement' }>): Double {
  return new Double(operation.op === 'increment' ? operation.value : -operation.value)
}

const FINITE = Number.MAX_VALUE

/** What each path operation requires of its target (see TargetRule). */
export function targetRule (operation: Exclude<Operation, { op: 'update' }>): TargetRule {
  switch (operation.op) {
    case 'increment':
    case 'decrement': {
      const amount = amountOf(operation)
      return {
        whenMissing: true,
        // A number (not null, not a string), and the sum is finite: the same double addition $inc does.
        check: t => ({ $cond: [{ $isNumber: t }, { $lte: [{ $abs: { $add: [t, amount] } }, FINITE] }, false] })
      }
    }
    case 'set':
    case 'delete':
      return { whenMissing: true, check: true }
    case 'push':
      return { whenMissing: true, check: t => ({ $isArray: t }) }
    case 'insert':
      return {
        whenMissing: operation.index === 0,
        check: t => ({ $cond: [{ $isArray: t }, { $lte: [operation.index, { $size: t }] }, false] })
      }
  }
}

/** The update that performs the operation (the guard has already made it safe). */
export function updateFor (operation: Operation): Document | Document[] {
  const bump = { version: 1 }
  switch (operation.op) {
    case 'increment':
    case 'decrement':
      return { $inc: { [fieldPath(operation.path)]: amountOf(operation), ...bump } }
    case 'set':
      return { $set: { [fieldPath(operation.path)]: operation.value }, $inc: bump }
    case 'push':
      // Without $each a pushed array stays one element, as docs/design.md §3 wants.
      return { $push: { [fieldPath(operation.path)]: operation.value }, $inc: bump }
    case 'insert':
      return {
        $push: { [fieldPath(operation.path)]: { $each: [operation.value], $position: Math.min(operation.index, 2_147_483_647) } },
        $inc: bump
      }
    case 'update':
      return { $set: { [CONTENT_FIELD]: operation.value }, $inc: bump }
    case 'delete': {
      const last = operation.path[operation.path.length - 1] as string
      // A key that cannot be an array position: a plain $unset removes it (or does nothing).
      if (!isCanonicalIndex(last)) return { $unset: { [fieldPath(operation.path)]: '' }, $inc: bump }
      // Possibly an array element: remove it and shift the rest, in one pipeline update.
      return [{ $set: { [CONTENT_FIELD]: contentWithout(operation.path), version: { $add: ['$version', 1] } } }]
    }
  }
}

/** The filter: this project, the versions If-Match and If-None-Match allow, and the guard. */
export function filterFor (projectId: string, operation: Operation, options: TranslateOptions): Document {
  const filter: Document = { _id: projectId }
  if (options.expectVersion !== undefined) filter.version = options.expectVersion
  else {
    const version: Document = {}
    if (options.ifMatch !== undefined && options.ifMatch !== '*') version.$in = options.ifMatch
    // If-None-Match: * matches every existing document, so nothing may match the filter.
    if (options.ifNoneMatch === '*') version.$in = []
    else if (options.ifNoneMatch !== undefined) version.$nin = options.ifNoneMatch
    if (Object.keys(version).length > 0) filter.version = version
  }
  const conditions: Expression[] = []
  if (operation.op !== 'update') conditions.push(pathGuard(operation.path, operation.op === 'delete' ? 'delete' : 'write', targetRule(operation)))
  // update is measured exactly before sending; delete never grows; a compare-and-set was measured exactly.
  if (operation.op !== 'update' && operation.op !== 'delete' && options.expectVersion === undefined) {
    conditions.push({ $lte: [{ $bsonSize: `$${CONTENT_FIELD}` }, options.contentLimitBytes - bsonGrowthBound(operation)] })
  }
  if (conditions.length === 1) filter.$expr = conditions[0]
  else if (conditions.length > 1) filter.$expr = { $and: conditions }
  return filter
}

export function translateOperation (projectId: string, operation: Operation, options: TranslateOptions): MongoWrite {
  return { filter: filterFor(projectId, operation, options), update: updateFor(operation), options: RETURN_NEW_VERSION }
}
