// From one content operation, ALREADY CHECKED by the shared core against the document at
// version V, to the native MongoDB update of the project document (docs/design.md §20). The
// filter pins that version (write-path.ts), so the document MongoDB changes is the one that
// was checked: no guard expressions, and MongoDB's operators only ever see cases where they
// do what docs/design.md §3 says. Pure: every translation is checked without a server against
// an independent implementation of MongoDB's operators (test/mongodb/mingo-translation.test.ts).
//
// | operation | update |
// | increment, decrement | `$inc` by the amount as a double (negated for decrement) |
// | set | `$set` of the value |
// | push | `$push` with `$each: [value]` (a pushed array stays one element) |
// | insert | `$push` with `$each: [value]` and `$position: index` |
// | delete | `$unset` in an object; in an array, `$set` of the array without the element (MongoDB's `$unset` would leave null; §3 shifts the rest); a missing target: nothing |
// | update, revert, batch, patch | `$set` of the whole resulting content |
//
// What makes this safe (each checked by the core first, on the same version): an index is at
// most the array's length (MongoDB would pad with nulls past it); no path runs through a
// scalar (MongoDB errors or no-ops); `$inc` meets a number or nothing, and its sum is finite;
// segments are never empty, never start with `$` and never hold `.`, so a dotted field path
// names exactly the segments.
import { Double, type Document } from 'mongodb'
import { isContentdError } from '../../../shared/errors.js'
import { isPlainObject, type Json, type JsonObject } from '../../../shared/json.js'
import { getAt, type PathOperation } from '../../../shared/operations.js'
import { isCanonicalIndex } from '../../../shared/path.js'

/** The content field of a project document. */
export const CONTENT_FIELD = 'content'

/** "content.a.0.b": MongoDB's dot notation; numeric segments index arrays, name keys in objects. */
export function fieldPath (path: readonly string[]): string {
  return [CONTENT_FIELD, ...path].join('.')
}

/** increment adds, decrement adds the negated amount; always as a double, like JSON numbers. */
export function amountOf (operation: Extract<PathOperation, { op: 'increment' | 'decrement' }>): Double {
  return new Double(operation.op === 'increment' ? operation.value : -operation.value)
}

/**
 * The native update of a path operation the shared core accepted on `before` (the content at
 * the version the write's filter names). Only the content part: write-path.ts adds the
 * version, the size and the change log's bookkeeping.
 */
export function pathUpdate (operation: PathOperation, before: JsonObject): Document {
  const field = fieldPath(operation.path)
  switch (operation.op) {
    case 'increment':
    case 'decrement':
      return { $inc: { [field]: amountOf(operation) } }
    case 'set':
      return { $set: { [field]: operation.value } }
    case 'push':
      return { $push: { [field]: { $each: [operation.value] } } }
    case 'insert':
      return { $push: { [field]: { $each: [operation.value], $position: operation.index } } }
    case 'delete':
      return deleteUpdate(operation.path, before)
  }
}

/** The update that replaces the whole content (update, revert, batch, patch). */
export function contentUpdate (content: JsonObject): Document {
  return { $set: { [CONTENT_FIELD]: content } }
}

function deleteUpdate (path: readonly string[], before: JsonObject): Document {
  const parentPath = path.slice(0, -1)
  const last = path[path.length - 1] as string
  const parent = parentPath.length === 0 ? before : valueAt(before, parentPath)
  if (Array.isArray(parent)) {
    const index = Number(last)
    // Past the end: nothing to delete (the core accepted the path, so `last` is canonical).
    if (!isCanonicalIndex(last) || index >= parent.length) return {}
    const shifted = parent.slice()
    shifted.splice(index, 1)
    return { $set: { [fieldPath(parentPath)]: shifted } }
  }
  if (isPlainObject(parent) && Object.prototype.hasOwnProperty.call(parent, last)) return { $unset: { [fieldPath(path)]: '' } }
  // Nothing there: the change is a new version that changes no content.
  return {}
}

/**
 * The value at `path`, or undefined. Never throws a catalogued error: the store translates
 * before it applies, and the shared core, run next, names the error of a path it refuses.
 */
function valueAt (doc: JsonObject, path: readonly string[]): Json | undefined {
  try {
    return getAt(doc, path)
  } catch (error) {
    if (isContentdError(error)) return undefined
    throw error
  }
}
