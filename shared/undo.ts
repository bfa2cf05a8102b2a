// Taking back one operation that shared/operations.ts applied in place. A store that checks
// the result of an operation after applying it (the project's schema, docs/design.md §12)
// must leave the document exactly as it was when the check refuses it: same containers, same
// key order, so later operations and snapshots see no trace. Copying the document first
// would cost its size on every write; recording the few values an operation replaces costs
// the length of its path (a delete of an object member also walks that object's keys, to put
// the member back where it was).
import { isContainer, type Json, type JsonContainer, type JsonObject } from './json.js'
import type { Operation } from './operations.js'
import { isCanonicalIndex } from './path.js'

export type Undo = () => void

const NOTHING: Undo = () => {}
const hasOwn = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key)

/**
 * Call BEFORE applying `operation` to `doc`. Once the operation has succeeded, the returned
 * function restores `doc` exactly. Where the operation will fail (applyOperation throws having
 * touched nothing) the function may do anything: do not call it then. `update` returns a new
 * document and leaves `doc` untouched, so there is nothing to undo.
 */
export function prepareUndo (doc: JsonObject, operation: Operation): Undo {
  if (operation.op === 'update') return NOTHING
  const { path } = operation
  let parent: JsonContainer = doc
  for (let depth = 0; depth < path.length; depth++) {
    const segment = path[depth] as string
    let key: string | number
    let next: Json | undefined
    if (Array.isArray(parent)) {
      if (!isCanonicalIndex(segment)) return NOTHING
      key = Number(segment)
      if (key > parent.length) return NOTHING
      next = key < parent.length ? parent[key] : undefined
    } else {
      key = segment
      next = hasOwn(parent, segment) ? parent[segment] : undefined
    }
    if (next === undefined) return undoCreation(operation, parent, key)
    if (depth === path.length - 1) return undoChange(operation, parent, key, next)
    if (!isContainer(next)) return NOTHING
    parent = next
  }
  return NOTHING
}

/** The operation writes where nothing is: it adds one member (or appends one element) to `parent`. */
function undoCreation (operation: Operation, parent: JsonContainer, key: string | number): Undo {
  if (operation.op === 'delete') return NOTHING
  if (Array.isArray(parent)) {
    const length = parent.length
    return () => { parent.length = length }
  }
  // A new member is the object's last (or sorts among the integer-like keys): deleting it
  // restores the order.
  return () => { delete parent[key as string] }
}

/** The operation changes the existing value `old` at `parent[key]`. */
function undoChange (operation: Operation, parent: JsonContainer, key: string | number, old: Json): Undo {
  switch (operation.op) {
    case 'increment':
    case 'decrement':
    case 'set':
      // Replaced, not mutated: putting the old value back keeps the member's position.
      return () => { put(parent, key, old) }
    case 'push': {
      if (!Array.isArray(old)) return NOTHING
      const length = old.length
      return () => { old.length = length }
    }
    case 'insert': {
      if (!Array.isArray(old)) return NOTHING
      const index = operation.index
      return () => { old.splice(index, 1) }
    }
    case 'delete': {
      if (Array.isArray(parent)) return () => { parent.splice(key as number, 0, old) }
      const keys = Object.keys(parent)
      const later = keys.slice(keys.indexOf(key as string) + 1)
      return () => {
        const object = parent as JsonObject
        object[key as string] = old
        // Re-adding the members that followed it moves them back behind it.
        for (const name of later) {
          const value = object[name] as Json
          delete object[name]
          // Defined, not assigned: whatever the name, it stays an own data member.
          Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true })
        }
      }
    }
    default:
      return NOTHING
  }
}

function put (parent: JsonContainer, key: string | number, value: Json): void {
  if (Array.isArray(parent)) parent[key as number] = value
  else parent[key as string] = value
}
