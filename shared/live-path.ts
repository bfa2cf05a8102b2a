// Live paths (docs/design.md §15): which changes concern one path, and what a subscription to
// that path is sent for each. Pure, shared by the server (subscriptions, SSE, the path index
// of the change log) and clients (the SDK's `ref`, which rebuilds the value at its path from
// what it is sent), so both sides agree by construction.
//
// A change *touches* path P when it writes at P, above P or below P, decided by paths alone:
// two paths are related when one is a prefix of the other (the root, "", is above every
// path). An operation that shifts array elements (delete of an element, insert) also touches
// every path through the elements it moves; an `update` or `revert` touches everything.
import { applyContentOperation } from './compound.js'
import type { ChangeEntry } from './events.js'
import { operationOfChange } from './events.js'
import type { Json, JsonObject } from './json.js'
import { dotSegments, formatPath, isCanonicalIndex, parsePath } from './path.js'

/**
 * One place a change writes. `path`: the written path (its ancestors and descendants are
 * touched too). `shiftFrom`: the array at `path` had its elements from this index on moved
 * (only that range below `path` is touched, besides `path`'s ancestors).
 */
export interface Touch {
  path: readonly string[]
  shiftFrom?: number
}

/** The parts of an entry that decide what it touches. */
export type TouchingParts = Pick<ChangeEntry, 'op' | 'path' | 'index' | 'operations'>

/** A change sent on a path subscription when the change itself cannot be: the new value at the path. */
export interface ProjectedChange {
  project: string
  version: number
  op: 'set' | 'delete'
  path: string
  value?: Json
  projected: true
  at: string
  actor: ChangeEntry['actor']
}

/** What a path subscription is sent: the change as it is, or projected onto the path. */
export type PathChange = ChangeEntry | ProjectedChange

/**
 * A Socket.IO `change` on a path subscription: what the path is sent, with `subscription`
 * (the path) and `prev` (the version of what was sent before on that subscription).
 */
export type PathChangeEvent = PathChange & { subscription: string, prev: number }

/** The value at a path: `exists: false` when nothing is there. */
export interface PathValue {
  exists: boolean
  value?: Json
}

/** A patch operation as the change log keeps it (RFC 6902, JSON Pointers). */
interface LoggedPatchOperation { op: string, path: string, from?: string }
/** A batch operation as the change log keeps it (dot paths). */
interface LoggedBatchOperation { op: string, path: string, index?: number }

const ROOT: readonly string[] = []

/**
 * A JSON Pointer read as a dot path: its segments up to the first one a dot path cannot name
 * (a key holding "."). Cut there, the path is an ancestor of what the pointer names, so what
 * it touches is a superset: nothing that concerns a path is missed.
 */
function pointerPath (pointer: string): { path: string[], cut: boolean } {
  const tokens = pointer === '' ? [] : pointer.slice(1).split('/').map(token => token.replaceAll('~1', '/').replaceAll('~0', '~'))
  const cutAt = tokens.findIndex(token => token.includes('.'))
  return cutAt === -1 ? { path: tokens, cut: false } : { path: tokens.slice(0, cutAt), cut: true }
}

/** A removal at `path` (delete, patch remove, move's `from`): the element's siblings after it move. */
function removalTouches (path: readonly string[]): Touch[] {
  const last = path.at(-1)
  if (path.length > 0 && last !== undefined && isCanonicalIndex(last)) return [{ path }, { path: path.slice(0, -1), shiftFrom: Number(last) }]
  return [{ path }]
}

/** An addition at a pointer (patch add, move's and copy's `path`): into an array, it inserts. */
function additionTouches (pointer: string): Touch[] {
  const { path, cut } = pointerPath(pointer)
  if (cut) return [{ path }]
  const last = path.at(-1)
  // "/list/-" appends: like push at the list, it writes at the list.
  if (last === '-') return [{ path: path.slice(0, -1) }]
  if (path.length > 0 && last !== undefined && isCanonicalIndex(last)) return [{ path }, { path: path.slice(0, -1), shiftFrom: Number(last) }]
  return [{ path }]
}

function patchTouches (operation: LoggedPatchOperation): Touch[] {
  switch (operation.op) {
    case 'test': return []
    case 'add': return additionTouches(operation.path)
    case 'remove': return pointerRemoval(operation.path)
    case 'replace': return [{ path: pointerPath(operation.path).path }]
    case 'move': return [...pointerRemoval(operation.from ?? ''), ...additionTouches(operation.path)]
    case 'copy': return additionTouches(operation.path)
    default: return [{ path: ROOT }]
  }
}

function pointerRemoval (pointer: string): Touch[] {
  const { path, cut } = pointerPath(pointer)
  return cut ? [{ path }] : removalTouches(path)
}

function singleTouches (op: string, path: string | undefined): Touch[] {
  if (op === 'test') return []
  if (path === undefined) return [{ path: ROOT }]
  const segments = dotSegments(path)
  return op === 'delete' ? removalTouches(segments) : [{ path: segments }]
}

/** Every place the change writes (update and revert: the root, which is above every path). */
export function touchesOf (change: TouchingParts): Touch[] {
  switch (change.op) {
    case 'update':
    case 'revert': return [{ path: ROOT }]
    case 'batch': return (change.operations as unknown as LoggedBatchOperation[]).flatMap(operation => singleTouches(operation.op, operation.path))
    case 'patch': return (change.operations as unknown as LoggedPatchOperation[]).flatMap(patchTouches)
    default: return singleTouches(change.op, change.path)
  }
}

function isPrefix (prefix: readonly string[], path: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => path[i] === segment)
}

/** Whether one written place touches `path` (segments). */
export function touchTouches (touch: Touch, path: readonly string[]): boolean {
  if (touch.shiftFrom === undefined) return isPrefix(touch.path, path) || isPrefix(path, touch.path)
  // Above the array: its ancestors. Below it: only through the elements that moved.
  if (isPrefix(path, touch.path)) return true
  if (!isPrefix(touch.path, path)) return false
  const element = path[touch.path.length] as string
  return isCanonicalIndex(element) && Number(element) >= touch.shiftFrom
}

/** Whether a change touches `path` (segments): docs/design.md §15. */
export function changeTouches (change: TouchingParts, path: readonly string[]): boolean {
  return touchesOf(change).some(touch => touchTouches(touch, path))
}

/**
 * The paths a change log's path index records for a change: each written path (a shift
 * records its array). A change touches P only if one of them is P, an ancestor of P or a
 * descendant of P (pathLookup), so the index finds a superset of the changes that touch P;
 * changeTouches then decides exactly.
 */
export function indexPathsOf (change: TouchingParts): string[] {
  return [...new Set(touchesOf(change).map(touch => formatPath(touch.path)))]
}

/**
 * How a store finds the indexed changes that may touch `path` (dot path): those recording
 * one of `exact` (the root "", every ancestor and the path itself) or a path starting with
 * `below` (the path and a dot). `below` sorts just before `belowEnd` ("." + 1 is "/"), so a
 * range on an ordered index finds the descendants.
 */
export function pathLookup (path: string): { exact: string[], below: string, belowEnd: string } {
  const segments = dotSegments(path)
  const exact = segments.map((_, i) => formatPath(segments.slice(0, i + 1)))
  return { exact: ['', ...exact], below: path + '.', belowEnd: path + '/' }
}

/** The value at `path` inside `value`, own members only (never a prototype's). */
export function valueAtPath (value: Json | undefined, path: readonly string[]): PathValue {
  let current: Json | undefined = value
  for (const segment of path) {
    if (Array.isArray(current)) {
      if (!isCanonicalIndex(segment) || Number(segment) >= current.length) return { exists: false }
      current = current[Number(segment)]
    } else if (current !== null && typeof current === 'object') {
      if (!Object.prototype.hasOwnProperty.call(current, segment)) return { exists: false }
      current = (current as JsonObject)[segment]
    } else {
      return { exists: false }
    }
  }
  return current === undefined ? { exists: false } : { exists: true, value: current }
}

/**
 * A removal exactly at `path` of an array element (its last segment an index): the next
 * element moves into the path, so the change cannot be applied at the path as it is (it
 * would leave nothing there) and is projected.
 */
function shiftsInto (removed: readonly string[], path: readonly string[]): boolean {
  const last = removed.at(-1)
  return removed.length === path.length && last !== undefined && isCanonicalIndex(last) && isPrefix(path, removed)
}

/**
 * An operation of a batch or patch lies at or below `path` when every path it names does
 * (and it does not move an element into the path: shiftsInto).
 */
function operationAtOrBelow (change: ChangeEntry, operation: Json, path: readonly string[]): boolean {
  if (change.op === 'batch') {
    const batch = operation as unknown as LoggedBatchOperation
    const written = dotSegments(batch.path)
    return isPrefix(path, written) && !(batch.op === 'delete' && shiftsInto(written, path))
  }
  const patch = operation as unknown as LoggedPatchOperation
  const pointers = patch.from === undefined ? [patch.path] : [patch.path, patch.from]
  const removed = patch.op === 'remove' ? patch.path : patch.op === 'move' ? patch.from : undefined
  if (removed !== undefined) {
    const read = pointerPath(removed)
    if (!read.cut && shiftsInto(read.path, path)) return false
  }
  return pointers.every(pointer => {
    const read = pointerPath(pointer)
    return !read.cut && isPrefix(path, read.path)
  })
}

function operationTouches (change: ChangeEntry, operation: Json, path: readonly string[]): boolean {
  return changeTouches({ op: change.op, operations: [operation] }, path)
}

/**
 * The change as a subscription to `path` may receive it unchanged (docs/design.md §15, rule 1),
 * or null when it must be projected. A single operation at or below the path comes as it is;
 * a batch or patch whose every operation that touches the path lies at or below it comes with
 * only its operations at or below the path (`test`s dropped).
 */
export function asIsChange (change: ChangeEntry, path: readonly string[]): ChangeEntry | null {
  if (change.op === 'update' || change.op === 'revert') return null
  if (change.op === 'batch' || change.op === 'patch') {
    const operations = change.operations ?? []
    const kept: Json[] = []
    for (const operation of operations) {
      const op = (operation as { op: string }).op
      if (op === 'test') continue
      if (operationAtOrBelow(change, operation, path)) kept.push(operation)
      else if (operationTouches(change, operation, path)) return null
    }
    return { ...change, operations: kept }
  }
  if (change.path === undefined) return null
  const written = dotSegments(change.path)
  if (!isPrefix(path, written) || (change.op === 'delete' && shiftsInto(written, path))) return null
  return change
}

/**
 * The value at `path` after the change, from the change alone, when it says: an update or
 * revert (its value is the content), a single `set` above the path (the path inside its
 * value), a `delete`, `increment` or `decrement` above it (nothing is there after). Null when
 * it takes the content (pushes and inserts above the path, shifts, batches, patches).
 */
export function valueFromChange (change: ChangeEntry, path: readonly string[]): PathValue | null {
  if (change.op === 'update' || change.op === 'revert') return valueAtPath(change.value, path)
  if (change.op === 'batch' || change.op === 'patch' || change.path === undefined) return null
  const written = dotSegments(change.path)
  if (!isPrefix(written, path) || written.length === path.length) return null
  switch (change.op) {
    case 'set': return valueAtPath(change.value, path.slice(written.length))
    // Deleting an array element moves the next one in: that takes the content.
    case 'delete': return isCanonicalIndex(written.at(-1) as string) ? null : { exists: false }
    case 'increment':
    case 'decrement': return { exists: false }
    default: return null
  }
}

/** The projected change (§15, rule 2): the path's new value, with the change's project, version, time and actor. */
export function projectedChange (change: ChangeEntry, path: string, after: PathValue): ProjectedChange {
  const projected = { project: change.project, version: change.version, op: after.exists ? 'set' : 'delete', path } as ProjectedChange
  if (after.exists) projected.value = after.value
  projected.projected = true
  projected.at = change.at
  projected.actor = change.actor
  return projected
}

/**
 * What a subscription to `path` is sent for a change that touches it, or null when the value
 * after it must be read from the content (then: projectedChange with that value).
 */
export function pathChangeOf (change: ChangeEntry, path: string): PathChange | null {
  const segments = dotSegments(path)
  const asIs = asIsChange(change, segments)
  if (asIs) return asIs
  const after = valueFromChange(change, segments)
  return after ? projectedChange(change, path, after) : null
}

/**
 * A client's value at `path` after what it was sent: a projected change sets or clears it;
 * any other is applied to the value, placed at its path inside an otherwise empty document,
 * with the server's own operations. Returns a new PathValue; `state` may have been changed,
 * `change` never is.
 */
export function applyPathChange (state: PathValue, path: string, change: PathChange): PathValue {
  // The values of `change` are copied in: later changes alter the state in place, and must
  // not alter the change (a caller may keep it, or apply it again).
  if ('projected' in change && change.projected) return change.op === 'set' ? { exists: true, value: structuredClone(change.value) } : { exists: false }
  const segments = parsePath(path)
  let doc: JsonObject = {}
  // Intermediates are objects keyed by the path's segments, there whether or not the value
  // is (a patch's `add` needs the parent): operations at or below the path walk them as the
  // server walks the real document.
  let node: JsonObject = doc
  segments.slice(0, -1).forEach(segment => { const next: JsonObject = {}; node[segment] = next; node = next })
  if (state.exists) node[segments.at(-1) as string] = state.value as Json
  doc = applyContentOperation(doc, operationOfChange(structuredClone(change) as ChangeEntry))
  return valueAtPath(doc, segments)
}
