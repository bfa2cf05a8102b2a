// The engine of batches and JSON Patches (docs/design.md §10): a list of operations applied
// in order to ONE working copy of the content, all or nothing. The original document is never
// touched: before an operation runs, every container on its path that still belongs to the
// original is copied (shallowly, once per batch) and put in place in the copy. A failing
// operation therefore leaves nothing to undo, and the cost is the width of the containers a
// batch touches, not the size of the document.
import { ContentdError, isContentdError, OperationError } from './errors.js'
import { isContainer, type Json, type JsonContainer, type JsonObject } from './json.js'
import { applyOperation, type PathOperation } from './operations.js'
import { isCanonicalIndex } from './path.js'

export class WorkingCopy {
  readonly root: JsonObject
  // Containers created for this copy: operations may change them in place.
  private readonly owned = new WeakSet<object>()

  constructor (original: JsonObject) {
    this.root = { ...original }
    this.owned.add(this.root)
  }

  /**
   * Makes every existing container along `path` (the target included, when it is one) the
   * copy's own, so that an operation on `path` changes nothing the original shares. Values
   * an earlier operation wrote are not owned either: the operations keep theirs unchanged.
   */
  own (path: readonly string[]): void {
    let current: JsonContainer = this.root
    for (const segment of path) {
      let child: Json | undefined
      if (Array.isArray(current)) {
        if (!isCanonicalIndex(segment)) return
        child = current[Number(segment)]
      } else {
        child = Object.prototype.hasOwnProperty.call(current, segment) ? current[segment] : undefined
      }
      if (child === undefined || !isContainer(child)) return
      if (!this.owned.has(child)) {
        const copy: JsonContainer = Array.isArray(child) ? child.slice() : { ...child }
        this.owned.add(copy)
        // The segments were validated before (never "__proto__"), so this is a plain member write.
        if (Array.isArray(current)) current[Number(segment)] = copy
        else current[segment] = copy
        child = copy
      }
      current = child
    }
  }
}

/**
 * Applies `items` in order to a working copy of `doc`; returns the resulting document. The
 * first item that throws a ContentdError stops everything: it is rethrown as an
 * OperationError carrying its index, and `doc` is as it was.
 */
export function applyAtomically<T> (doc: JsonObject, items: readonly T[], step: (copy: WorkingCopy, item: T) => void): JsonObject {
  if (items.length === 0) throw new ContentdError('INVALID_BODY', 'at least one operation is required')
  const copy = new WorkingCopy(doc)
  items.forEach((item, i) => {
    try {
      step(copy, item)
    } catch (error) {
      if (isContentdError(error)) throw new OperationError(error, i)
      throw error
    }
  })
  return copy.root
}

/**
 * One path operation on the working copy: owns what it will change (for set and delete the
 * container holding the target, which is replaced or removed, not changed), then applies it.
 */
export function applyInCopy (copy: WorkingCopy, operation: PathOperation): void {
  copy.own(operation.op === 'set' || operation.op === 'delete' ? operation.path.slice(0, -1) : operation.path)
  applyOperation(copy.root, operation)
}
