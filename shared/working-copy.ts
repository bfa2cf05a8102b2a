// The engine of batches and JSON Patches (docs/design.md §10): a list of operations applied
// in order to ONE working copy of the content, all or nothing. The original document is never
// touched: before an operation runs, every container on its path that still belongs to the
// original is copied (shallowly, once per batch) and put in place in the copy. A failing
// operation therefore leaves nothing to undo, and the cost is the width of the containers a
// batch touches, not the size of the document.
//
// With a ContentBudget (content-budget.ts), each operation is charged the bytes it adds before
// it runs, and one that would take the content past the limit stops the batch there
// (docs/design.md §13b): no operation ever builds a value the limit does not allow.
import { sizeChangeOf, type ContentBudget } from './content-budget.js'
import { ContentdError, isContentdError, OperationError } from './errors.js'
import { isContainer, type Json, type JsonContainer, type JsonObject } from './json.js'
import { jsonByteLength } from './json-size.js'
import { applyOperation, applyValidOperation, type PathOperation } from './operations.js'
import { isCanonicalIndex } from './path.js'
import { validateOnce } from './validate-operation.js'

export class WorkingCopy {
  readonly root: JsonObject
  // Containers created for this copy: operations may change them in place.
  private readonly owned = new WeakSet<object>()

  constructor (original: JsonObject, readonly budget?: ContentBudget) {
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
export function applyAtomically<T> (doc: JsonObject, items: readonly T[], step: (copy: WorkingCopy, item: T) => void, budget?: ContentBudget): JsonObject {
  if (items.length === 0) throw new ContentdError('INVALID_BODY', 'at least one operation is required')
  const copy = new WorkingCopy(doc, budget)
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

/** How the bytes of an operation's value are known, when they are not simply measured. */
export interface ValueSizing {
  /** The value's JSON bytes, already measured (a copy's source). */
  valueBytes?: number
  /**
   * The value is moved, not added (a `move`): its delete is charged without it and its add
   * without it, so a moved value is not measured, however large (unless the total must turn
   * exact between the two: then once).
   */
  moved?: Json
  /**
   * Write a deep copy of the value, made only once the budget has allowed it, charging its
   * `valueBytes` to what the batch may copy (a `copy`).
   */
  clone?: boolean
}

/**
 * One path operation on the working copy: charges the budget, if any (which throws
 * CONTENT_TOO_LARGE before anything is built), owns what it will change (for set and delete
 * the container holding the target, which is replaced or removed, not changed), applies it.
 */
export function applyInCopy (copy: WorkingCopy, operation: PathOperation, sizing: ValueSizing = {}): void {
  const { budget } = copy
  let change = null
  if (budget) {
    // The operation's own 400s come first, as without a budget (a copied or moved value is
    // already part of the content: applyOperation checks it, after the charge).
    if (!sizing.clone && sizing.moved === undefined) validateOnce(operation)
    const valueBytes = 'value' in operation && operation.op !== 'increment' && operation.op !== 'decrement'
      // Capped at the limit: a value larger cannot fit, whatever it replaces.
      ? sizing.valueBytes ?? (sizing.moved !== undefined ? 0 : jsonByteLength(operation.value, budget.limit))
      : 0
    change = sizeChangeOf(copy.root, operation, valueBytes)
    // A copy counts against what the batch may copy before it is cloned, even one that will fail.
    if (sizing.clone) budget.chargeCopy(valueBytes)
    if (change) {
      if (sizing.moved !== undefined) {
        if (operation.op === 'delete') delete change.removed
        else change.detached = sizing.moved
      }
      budget.charge(copy.root, change)
    }
  }
  if (sizing.clone && 'value' in operation) operation = { ...operation, value: structuredClone(operation.value) } as PathOperation
  copy.own(operation.op === 'set' || operation.op === 'delete' ? operation.path.slice(0, -1) : operation.path)
  // Checked just above (once per operation, validate-operation.ts) unless copied or moved.
  if (budget && !sizing.clone && sizing.moved === undefined) applyValidOperation(copy.root, operation)
  else applyOperation(copy.root, operation)
  // Unforeseen (the plan expected a failure that did not come): count it exactly instead.
  if (budget && !change) budget.remeasure(copy.root)
}
