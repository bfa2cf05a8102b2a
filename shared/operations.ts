// The content operations as pure functions on a JSON document (docs/design.md §2-§3). No HTTP, no
// storage: the server applies them inside a store transaction, clients apply broadcast
// changes with the very same code.
//
// Contract: applyOperation either succeeds, mutating the document in place (or, for
// `update`, returning the replacement), or throws a ContentdError having touched nothing.
// Every check happens before the first write, which is what makes that promise cheap.
import { ContentdError } from './errors.js'
import { isContainer, typeName, type Json, type JsonContainer, type JsonObject } from './json.js'
import { assertPathSegments, formatPath, isCanonicalIndex } from './path.js'
import { validateOperation } from './validate-operation.js'

export type Operation =
  | { op: 'increment' | 'decrement', path: string[], value: number }
  | { op: 'set' | 'push', path: string[], value: Json }
  | { op: 'delete', path: string[] }
  | { op: 'insert', path: string[], value: Json, index: number }
  | { op: 'update', value: JsonObject }

/** The operations on a path: every operation but update. */
export type PathOperation = Exclude<Operation, { op: 'update' }>

export type OperationName = Operation['op']
export const OPERATION_NAMES: readonly OperationName[] = ['increment', 'decrement', 'set', 'delete', 'push', 'insert', 'update']

const hasOwn = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key)

/** Where a path leads: the container holding the target and the target's key in it. */
type Location =
  | { found: true, parent: JsonContainer, key: string | number, value: Json }
  // The path stops existing at `parent[key]`; segments after `depth` would have to be created.
  | { found: false, parent: JsonContainer, key: string | number, depth: number }
  // Only when reading or deleting: the path runs through a scalar or past an array's end.
  | { found: false, parent: null }

// What a walk does when the path runs past an array's end or through a scalar: writing
// operations refuse (400); delete treats past-the-end as missing but still refuses to walk
// through a scalar (a conflict for every writing operation, docs/design.md §2); reads see missing.
const WALK_MODES = {
  write: { pastEnd: 'throw', throughScalar: 'throw' },
  delete: { pastEnd: 'missing', throughScalar: 'throw' },
  read: { pastEnd: 'missing', throughScalar: 'missing' }
} as const
type WalkMode = keyof typeof WALK_MODES

function walk (doc: JsonObject, path: readonly string[], mode: WalkMode): Location {
  // The callers have checked the segments (validateOperation, getAt): assigning "__proto__"
  // would swap a prototype, and create() writes the segments past the walk as keys.
  const { pastEnd, throughScalar } = WALK_MODES[mode]
  let current: JsonContainer = doc
  for (let depth = 0; depth < path.length; depth++) {
    const segment = path[depth] as string
    const last = depth === path.length - 1
    let next: Json | undefined
    let key: string | number
    if (Array.isArray(current)) {
      if (!isCanonicalIndex(segment)) {
        throw new ContentdError('INVALID_ARRAY_INDEX', `"${segment}" at "${formatPath(path.slice(0, depth + 1))}"`)
      }
      const index = Number(segment)
      if (index > current.length) {
        if (pastEnd === 'missing') return { found: false, parent: null }
        throw new ContentdError('INDEX_OUT_OF_RANGE', `"${formatPath(path.slice(0, depth + 1))}": the array has ${current.length} elements`)
      }
      key = index
      next = index < current.length ? current[index] : undefined
    } else {
      key = segment
      next = hasOwn(current, segment) ? current[segment] : undefined
    }
    if (next === undefined) return { found: false, parent: current, key, depth }
    if (last) return { found: true, parent: current, key, value: next }
    if (!isContainer(next)) {
      if (throughScalar === 'missing') return { found: false, parent: null }
      throw new ContentdError('PATH_CONFLICT', `"${formatPath(path.slice(0, depth + 1))}" is ${typeName(next)}`)
    }
    current = next
  }
  // Unreachable for a non-empty path; parsePath guarantees one segment at least.
  throw new ContentdError('INVALID_PATH', 'path is empty')
}

/** Writes `value` where a missing path stops, creating the remaining segments as objects. */
function create (location: Extract<Location, { found: false, parent: JsonContainer }>, path: readonly string[], value: Json): void {
  let nested = value
  for (let i = path.length - 1; i > location.depth; i--) nested = { [path[i] as string]: nested }
  put(location.parent, location.key, nested)
}

function put (parent: JsonContainer, key: string | number, value: Json): void {
  if (Array.isArray(parent)) {
    // walk() admits index === length only as "missing", so this appends or replaces.
    parent[key as number] = value
  } else {
    parent[key as string] = value
  }
}

function requireFinite (result: number, path: readonly string[]): number {
  if (!Number.isFinite(result)) throw new ContentdError('NON_FINITE_RESULT', `"${formatPath(path)}"`)
  return result
}

function addTo (doc: JsonObject, path: readonly string[], amount: number): void {
  const location = walk(doc, path, 'write')
  if (location.found) {
    if (typeof location.value !== 'number') {
      throw new ContentdError('NOT_A_NUMBER', `"${formatPath(path)}" is ${typeName(location.value)}`)
    }
    put(location.parent, location.key, requireFinite(location.value + amount, path))
  } else if (location.parent) {
    create(location, path, requireFinite(amount + 0, path))
  }
}

function setAt (doc: JsonObject, path: readonly string[], value: Json): void {
  const location = walk(doc, path, 'write')
  if (location.found) put(location.parent, location.key, value)
  else if (location.parent) create(location, path, value)
}

function deleteAt (doc: JsonObject, path: readonly string[]): void {
  const location = walk(doc, path, 'delete')
  if (!location.found) return
  if (Array.isArray(location.parent)) location.parent.splice(location.key as number, 1)
  else delete location.parent[location.key as string]
}

function pushAt (doc: JsonObject, path: readonly string[], value: Json): void {
  const location = walk(doc, path, 'write')
  if (location.found) {
    if (!Array.isArray(location.value)) throw new ContentdError('NOT_AN_ARRAY', `"${formatPath(path)}" is ${typeName(location.value)}`)
    location.value.push(value)
  } else if (location.parent) {
    create(location, path, [value])
  }
}

function insertAt (doc: JsonObject, path: readonly string[], index: number, value: Json): void {
  const location = walk(doc, path, 'write')
  if (location.found) {
    const target = location.value
    if (!Array.isArray(target)) throw new ContentdError('NOT_AN_ARRAY', `"${formatPath(path)}" is ${typeName(target)}`)
    if (index > target.length) throw new ContentdError('INDEX_OUT_OF_RANGE', `index ${index} is past the end of an array of ${target.length}`)
    target.splice(index, 0, value)
  } else if (location.parent) {
    if (index !== 0) throw new ContentdError('INDEX_OUT_OF_RANGE', `"${formatPath(path)}" does not exist, so only index 0 can create it`)
    create(location, path, [value])
  }
}

/**
 * Applies one operation. Returns the document after it: the same object, mutated, for
 * every path operation; the new content for `update`. Throws without side effects: first
 * the checks that need no document (validateOperation), then those that do.
 */
export function applyOperation (doc: JsonObject, operation: Operation): JsonObject {
  validateOperation(operation)
  return applyValidOperation(doc, operation)
}

/**
 * applyOperation for an operation that has passed validateOperation (validateOnce says so):
 * the engine's write path, which checks each operation once (validate-operation.ts).
 */
export function applyValidOperation (doc: JsonObject, operation: Operation): JsonObject {
  switch (operation.op) {
    case 'increment': addTo(doc, operation.path, operation.value); return doc
    case 'decrement': addTo(doc, operation.path, -operation.value); return doc
    case 'set': setAt(doc, operation.path, operation.value); return doc
    case 'delete': deleteAt(doc, operation.path); return doc
    case 'push': pushAt(doc, operation.path, operation.value); return doc
    case 'insert': insertAt(doc, operation.path, operation.index, operation.value); return doc
    case 'update': return operation.value
  }
}

/** The value at a path, for `GET …/content?path=`. A missing path is PATH_NOT_FOUND. */
export function getAt (doc: JsonObject, path: readonly string[]): Json {
  assertPathSegments(path)
  const location = walk(doc, path, 'read')
  if (!location.found) throw new ContentdError('PATH_NOT_FOUND', `"${formatPath(path)}"`)
  return location.value
}

/**
 * An upper bound, in bytes, of how much an operation can grow the serialized document,
 * so the store can skip measuring the whole document when the bound keeps it under the
 * limit. `valueBytes` is the serialized size of the written value, if any.
 */
export function growthBound (operation: Operation, valueBytes: number): number {
  if (operation.op === 'update' || operation.op === 'delete') return operation.op === 'delete' ? 0 : valueBytes
  let pathBytes = 0
  // JSON escaping at most sextuples a UTF-16 unit (\uXXXX); each created level adds `"":{},`.
  for (const segment of operation.path) pathBytes += 6 * segment.length + 8
  const written = operation.op === 'increment' || operation.op === 'decrement' ? 32 : valueBytes + 8
  return pathBytes + written
}
