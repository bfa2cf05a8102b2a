// RFC 6902 JSON Patch for `PATCH …/content` (docs/design.md §10), applied by the batch engine
// (working-copy.ts): each patch operation becomes the path operations of operations.ts on the
// working copy, with RFC 6902's own preconditions checked first (`add` needs the parent to
// exist, `remove` and `replace` the target, `move` may not go into its own child). JSON
// Pointers (RFC 6901) become the internal path form, segment by segment, so docs/design.md §2's
// key rules apply to them. Shared by the server and clients (replaying `patch` change entries).
import type { ContentBudget } from './content-budget.js'
import { ContentdError, isContentdError, OperationError } from './errors.js'
import { isContainer, typeName, type Json, type JsonObject } from './json.js'
import { jsonByteLength } from './json-size.js'
import { assertTest } from './batch.js'
import { assertPathSegments, isCanonicalIndex } from './path.js'
import { applyAtomically, applyInCopy, type ValueSizing, type WorkingCopy } from './working-copy.js'

export type PatchOperation =
  | { op: 'add' | 'replace' | 'test', path: string, value: Json }
  | { op: 'remove', path: string }
  | { op: 'move' | 'copy', from: string, path: string }

export const PATCH_MEDIA_TYPE = 'application/json-patch+json'
export const PATCH_MESSAGE = 'Patch applied successfully'
const PATCH_OPERATION_NAMES = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const

/**
 * A JSON Pointer as path segments: `/a/b~1c` is ["a", "b/c"]. The root pointer "" and
 * anything but "/…" are INVALID_PATCH (the whole content is replaced by update, not a patch);
 * a segment breaking docs/design.md §2 is INVALID_PATH.
 */
export function pointerSegments (pointer: string): string[] {
  if (pointer === '') throw new ContentdError('INVALID_PATCH', 'the root pointer "" is not allowed; replace the whole content with an update')
  if (!pointer.startsWith('/')) throw new ContentdError('INVALID_PATCH', `${JSON.stringify(pointer)} is not a JSON Pointer (it must start with "/")`)
  const segments = pointer.slice(1).split('/').map(token => {
    if (/~[^01]|~$/.test(token)) throw new ContentdError('INVALID_PATCH', `${JSON.stringify(pointer)}: "~" must be followed by 0 or 1`)
    return token.replaceAll('~1', '/').replaceAll('~0', '~')
  })
  assertPathSegments(segments)
  return segments
}

/**
 * A patch request's operations: an array of 1 to `limit` operations, each with a known `op`,
 * a valid `path` (and `from`) and a `value` where RFC 6902 needs one. Other members are
 * ignored, as RFC 6902 says, and left out of the result (the operations as applied).
 */
export function parsePatch (body: unknown, limit: number): PatchOperation[] {
  if (!Array.isArray(body)) throw new ContentdError('INVALID_PATCH', 'a JSON Patch is an array of operations')
  if (body.length === 0 || body.length > limit) throw new ContentdError('INVALID_PATCH', `a patch has 1 to ${limit} operations, not ${body.length}`)
  return body.map((item: unknown, i) => {
    try {
      return patchOperationFrom(item)
    } catch (error) {
      throw isContentdError(error) ? new OperationError(error, i) : error
    }
  })
}

function patchOperationFrom (item: unknown): PatchOperation {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new ContentdError('INVALID_PATCH', 'an operation must be a JSON object')
  const { op, path, from, value } = item as Record<string, unknown>
  if (typeof op !== 'string' || !(PATCH_OPERATION_NAMES as readonly string[]).includes(op)) {
    throw new ContentdError('INVALID_PATCH', `op must be one of ${PATCH_OPERATION_NAMES.join(', ')}`)
  }
  if (typeof path !== 'string') throw new ContentdError('INVALID_PATCH', 'path is required and must be a string')
  pointerSegments(path)
  switch (op) {
    case 'remove':
      return { op, path }
    case 'move':
    case 'copy':
      if (typeof from !== 'string') throw new ContentdError('INVALID_PATCH', `${op} needs "from", a string`)
      pointerSegments(from)
      return { op, from, path }
    default:
      if (value === undefined) throw new ContentdError('INVALID_PATCH', `${op} needs "value"`)
      return { op: op as 'add' | 'replace' | 'test', path, value: value as Json }
  }
}

/** The value at `segments`, or undefined where RFC 6901 finds nothing. */
function find (doc: JsonObject, segments: readonly string[]): Json | undefined {
  let current: Json = doc
  for (const segment of segments) {
    let next: Json | undefined
    if (Array.isArray(current)) next = isCanonicalIndex(segment) ? current[Number(segment)] : undefined
    else if (isContainer(current)) next = Object.prototype.hasOwnProperty.call(current, segment) ? current[segment] : undefined
    if (next === undefined) return undefined
    current = next
  }
  return current
}

function existing (doc: JsonObject, segments: readonly string[], pointer: string): Json {
  const value = find(doc, segments)
  if (value === undefined) throw new ContentdError('INVALID_PATCH', `nothing is at ${JSON.stringify(pointer)}`)
  return value
}

/** RFC 6902 add: member added or replaced in an object, element inserted (or appended at "-") in an array. */
function add (copy: WorkingCopy, segments: string[], pointer: string, value: Json, sizing?: ValueSizing): void {
  const parentPath = segments.slice(0, -1)
  const last = segments[segments.length - 1] as string
  const parent = parentPath.length === 0 ? copy.root : find(copy.root, parentPath)
  if (parent === undefined) throw new ContentdError('INVALID_PATCH', `the parent of ${JSON.stringify(pointer)} does not exist`)
  if (Array.isArray(parent)) {
    if (last === '-') { applyInCopy(copy, { op: 'push', path: parentPath, value }, sizing); return }
    if (!isCanonicalIndex(last)) throw new ContentdError('INVALID_ARRAY_INDEX', `"${last}" in ${JSON.stringify(pointer)}`)
    applyInCopy(copy, { op: 'insert', path: parentPath, value, index: Number(last) }, sizing)
    return
  }
  if (!isContainer(parent)) throw new ContentdError('PATH_CONFLICT', `the parent of ${JSON.stringify(pointer)} is ${typeName(parent)}`)
  applyInCopy(copy, { op: 'set', path: segments, value }, sizing)
}

function applyPatchOperation (copy: WorkingCopy, operation: PatchOperation): void {
  const segments = pointerSegments(operation.path)
  switch (operation.op) {
    case 'add':
      add(copy, segments, operation.path, operation.value)
      return
    case 'remove':
      existing(copy.root, segments, operation.path)
      applyInCopy(copy, { op: 'delete', path: segments })
      return
    case 'replace':
      existing(copy.root, segments, operation.path)
      applyInCopy(copy, { op: 'set', path: segments, value: operation.value })
      return
    case 'test':
      assertTest(copy.root, segments, operation.value)
      return
    case 'copy': {
      const value = existing(copy.root, pointerSegments(operation.from), operation.from)
      if (!copy.budget) { add(copy, segments, operation.path, structuredClone(value)); return }
      // Measured (no further than what the patch may still copy) before anything is cloned;
      // add() clones it only once the budget has allowed it (docs/design.md §13b).
      const valueBytes = jsonByteLength(value, copy.budget.copyRoom)
      add(copy, segments, operation.path, value, { valueBytes, clone: true })
      return
    }
    case 'move': {
      const from = pointerSegments(operation.from)
      const value = existing(copy.root, from, operation.from)
      if (operation.from === operation.path) return
      if (segments.length > from.length && from.every((segment, i) => segments[i] === segment)) {
        throw new ContentdError('INVALID_PATCH', `cannot move ${JSON.stringify(operation.from)} into its own child ${JSON.stringify(operation.path)}`)
      }
      // The value leaves one place for another: only the keys and commas around it change.
      applyInCopy(copy, { op: 'delete', path: from }, { moved: value })
      add(copy, segments, operation.path, value, { moved: value })
    }
  }
}

/**
 * The content after the patch; `doc` itself is never changed. Throws OperationError. With a
 * budget, refuses (CONTENT_TOO_LARGE, naming the operation) the first operation that would
 * take the content past its limit, before building it; the budget then holds the result's size.
 */
export function applyPatch (doc: JsonObject, operations: readonly PatchOperation[], budget?: ContentBudget): JsonObject {
  return applyAtomically(doc, operations, applyPatchOperation, budget)
}
