// The content limit counted while operations are applied (docs/design.md §13b, "Batches and
// patches"): each operation is charged the JSON bytes it adds BEFORE it runs, and one that
// would take the content past the limit is refused with CONTENT_TOO_LARGE without being
// applied. So a patch whose copies double a value stops at the copy that crosses the limit,
// having built nothing larger, instead of building the whole result and measuring it after.
//
// The running total starts as the document's size or an upper bound of it, and grows by what
// each operation adds (the written value, the keys and punctuation around it), ignoring what
// it replaces or removes: cheap, and an upper bound. Only when that bound would pass the limit
// is the document measured exactly, once; from then on every operation also subtracts what it
// replaces or removes (measured: it is part of a document within the limit), so the total is
// the exact size and agrees with Buffer.byteLength(JSON.stringify(result)) at the boundary.
import { ContentdError } from './errors.js'
import { isContainer, type Json, type JsonContainer, type JsonObject } from './json.js'
import { jsonByteLength, numberJsonBytes, stringJsonBytes } from './json-size.js'
import type { PathOperation } from './operations.js'
import { isCanonicalIndex } from './path.js'

/** What one operation does to the size of the content's JSON. */
export interface SizeChange {
  /** Bytes it adds: the written value and the keys, brackets and commas around it. */
  added: number
  /** Bytes it removes around a value that goes away or is replaced (key, colon, comma). */
  removedFixed: number
  /** The value it replaces or removes: measured only once the total must be exact. */
  removed?: Json
  /** A value already taken out of the content (the `move` being finished), not in `added`. */
  detached?: Json
}

export class ContentBudget {
  private total: number
  private exact: boolean
  /** Bytes copied so far (a patch's `copy`): they may not exceed the limit either. */
  private copied = 0

  /**
   * `bytes`: the JSON size of the document the operations start from, or an upper bound of it
   * (`exact` false; measured exactly if the bound ever comes near `limit`).
   */
  constructor (readonly limit: number, bytes: number, exact = false) {
    this.total = bytes
    this.exact = exact
  }

  /** A budget for `doc`, measured now. */
  static measuring (doc: JsonObject, limit: number): ContentBudget {
    return new ContentBudget(limit, jsonByteLength(doc), true)
  }

  /** The content's JSON size after the operations charged so far, or an upper bound of it. */
  get bytes (): number {
    return this.total
  }

  /**
   * Charges a change about to be made to `root` (the document as it is now). Throws
   * CONTENT_TOO_LARGE, charging nothing, when the content would then be larger than the limit.
   */
  charge (root: JsonObject, change: SizeChange): void {
    let added = change.added
    let next = this.total + added - change.removedFixed
    if (!this.exact) {
      if (next <= this.limit) { this.total = next; return }
      // The bound is no longer enough: measure, then count exactly from here on.
      this.total = jsonByteLength(root)
      this.exact = true
      if (change.detached !== undefined) added += jsonByteLength(change.detached)
      next = this.total + added - change.removedFixed
    }
    if (change.removed !== undefined) next -= jsonByteLength(change.removed)
    if (next > this.limit) throw tooLarge(next, this.limit)
    this.total = next
  }

  /**
   * What a `copy` may still copy: the copies of one batch together may copy at most `limit`
   * bytes, whatever they replace. Without this, copies that each replace the last (net
   * growth 0) would cost a clone of up to the whole content per operation, so a patch of
   * BATCH_LIMIT of them BATCH_LIMIT times the limit in work (docs/design.md §13b).
   */
  get copyRoom (): number {
    return this.limit - this.copied
  }

  /** Charges a copy of `bytes` against copyRoom (before the copy is charged as content with charge()). */
  chargeCopy (bytes: number): void {
    if (bytes > this.copyRoom) {
      throw new ContentdError('CONTENT_TOO_LARGE', `the copies of one patch may copy at most ${this.limit} bytes in all`)
    }
    this.copied += bytes
  }

  /** Charges replacing the whole content by a value of `bytes` (an update). */
  replaceAll (bytes: number): void {
    if (bytes > this.limit) throw tooLarge(bytes, this.limit)
    this.total = bytes
    this.exact = true
  }

  /** Measures `root` again (after an operation the plan could not foresee). */
  remeasure (root: JsonObject): void {
    this.total = jsonByteLength(root, this.limit)
    this.exact = true
    if (this.total > this.limit) throw tooLarge(this.total, this.limit)
  }
}

function tooLarge (bytes: number, limit: number): ContentdError {
  return new ContentdError('CONTENT_TOO_LARGE', `the content would be more than ${limit} bytes (at least ${bytes})`)
}

/** Where a path leads in the content: the container holding it, and the value if present. */
interface Spot {
  parent: JsonContainer
  key: string | number
  /** The segment where the path stops existing (the target's own when it exists). */
  depth: number
  value: Json | undefined
}

const hasOwn = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key)

/**
 * operations.ts's walk, read-only: where `path` leads, or null where the operation will fail
 * there (through a scalar, past an array's end, a bad index) or, for delete, finds nothing.
 */
function locate (root: JsonObject, path: readonly string[]): Spot | null {
  let current: JsonContainer = root
  for (let depth = 0; depth < path.length; depth++) {
    const segment = path[depth] as string
    let key: string | number
    let next: Json | undefined
    if (Array.isArray(current)) {
      if (!isCanonicalIndex(segment)) return null
      key = Number(segment)
      if (key > current.length) return null
      next = current[key]
    } else {
      key = segment
      next = hasOwn(current, segment) ? current[segment] : undefined
    }
    if (next === undefined || depth === path.length - 1) return { parent: current, key, depth, value: next }
    if (!isContainer(next)) return null
    current = next
  }
  return null
}

/** Members of an object, counted up to `atMost` (objects can be wide; this needs few). */
function membersUpTo (obj: JsonObject, atMost: number): number {
  let n = 0
  for (const key in obj) {
    if (hasOwn(obj, key) && ++n >= atMost) break
  }
  return n
}

function isEmpty (container: JsonContainer): boolean {
  return Array.isArray(container) ? container.length === 0 : membersUpTo(container, 1) === 0
}

/** Bytes of a new member or element holding `leafBytes` where `spot` stops, with the objects created for the rest of `path`. */
function creationBytes (spot: Spot, path: readonly string[], leafBytes: number): number {
  let bytes = leafBytes + (isEmpty(spot.parent) ? 0 : 1)
  if (!Array.isArray(spot.parent)) bytes += stringJsonBytes(spot.key as string) + 1
  for (let i = spot.depth + 1; i < path.length; i++) bytes += stringJsonBytes(path[i] as string) + 3
  return bytes
}

/** Bytes around an existing member or element besides its value: its key and colon, and a comma. */
function entryBytes (spot: Spot): number {
  if (Array.isArray(spot.parent)) return spot.parent.length > 1 ? 1 : 0
  return stringJsonBytes(spot.key as string) + 1 + (membersUpTo(spot.parent, 2) > 1 ? 1 : 0)
}

/**
 * What `operation` will do to the size of `root`'s JSON, given the written value's size
 * (`valueBytes`; unused by delete, increment and decrement); null when it will fail
 * (applyOperation then throws its own error).
 */
export function sizeChangeOf (root: JsonObject, operation: PathOperation, valueBytes: number): SizeChange | null {
  const spot = locate(root, operation.path)
  if (operation.op === 'delete') {
    if (!spot || spot.value === undefined) return { added: 0, removedFixed: 0 }
    return { added: 0, removedFixed: entryBytes(spot), removed: spot.value }
  }
  if (!spot) return null
  const { value } = spot
  switch (operation.op) {
    case 'increment':
    case 'decrement': {
      const amount = operation.op === 'increment' ? operation.value : -operation.value
      if (value === undefined) return { added: creationBytes(spot, operation.path, numberJsonBytes(amount + 0)), removedFixed: 0 }
      if (typeof value !== 'number' || !Number.isFinite(value + amount)) return null
      return { added: numberJsonBytes(value + amount), removedFixed: numberJsonBytes(value) }
    }
    case 'set':
      if (value === undefined) return { added: creationBytes(spot, operation.path, valueBytes), removedFixed: 0 }
      return { added: valueBytes, removedFixed: 0, removed: value }
    case 'push':
    case 'insert': {
      const index = operation.op === 'insert' ? operation.index : 0
      if (value === undefined) return index === 0 ? { added: creationBytes(spot, operation.path, valueBytes + 2), removedFixed: 0 } : null
      if (!Array.isArray(value) || index > value.length) return null
      return { added: valueBytes + (value.length > 0 ? 1 : 0), removedFixed: 0 }
    }
  }
}
