// Batches and patches as operations (docs/design.md §10): what the stores apply and log, and
// what a client replays from a `batch` or `patch` change entry, next to the single operations
// of operations.ts. applyContentOperation is the one entry point for any of them.
import { applyBatch, batchOperationBody, type BatchOperation } from './batch.js'
import { sizeChangeOf, type ContentBudget } from './content-budget.js'
import type { Json, JsonObject } from './json.js'
import { applyPatch, type PatchOperation } from './json-patch.js'
import { jsonByteLength } from './json-size.js'
import { applyOperation, applyValidOperation, type Operation } from './operations.js'
import { validateOnce } from './validate-operation.js'

export type CompoundOperation =
  | { op: 'batch', operations: BatchOperation[] }
  | { op: 'patch', operations: PatchOperation[] }

/** Anything that changes the content as one new version. */
export type ContentOperation = Operation | CompoundOperation

export function isCompound (operation: { op: string }): operation is CompoundOperation {
  return operation.op === 'batch' || operation.op === 'patch'
}

/**
 * Applies any content operation. Single operations as applyOperation does (in place); a
 * batch or patch on a working copy: the result is a new document and `doc` is unchanged
 * when it throws.
 *
 * With a budget (the store's write path; replays of committed changes go without), the
 * content limit is enforced while applying (docs/design.md §13b): CONTENT_TOO_LARGE is thrown
 * before any step that would take the content past `budget.limit` (for a batch or patch, as
 * an OperationError naming that operation), `doc` unchanged; on success `budget.bytes` is the
 * result's JSON size (exact once it came near the limit, else an upper bound).
 */
export function applyContentOperation (doc: JsonObject, operation: ContentOperation, budget?: ContentBudget): JsonObject {
  switch (operation.op) {
    case 'batch': return applyBatch(doc, operation.operations, budget)
    case 'patch': return applyPatch(doc, operation.operations, budget)
    case 'update':
      if (!budget) return applyOperation(doc, operation)
      // Checked once (validate-operation.ts), before the budget is charged.
      validateOnce(operation)
      budget.replaceAll(jsonByteLength(operation.value, budget.limit))
      return applyValidOperation(doc, operation)
    default: {
      if (!budget) return applyOperation(doc, operation)
      // The operation's own 400s come first, as without a budget.
      validateOnce(operation)
      const valueBytes = operation.op === 'set' || operation.op === 'push' || operation.op === 'insert' ? jsonByteLength(operation.value, budget.limit) : 0
      const change = sizeChangeOf(doc, operation, valueBytes)
      if (change) budget.charge(doc, change)
      const result = applyValidOperation(doc, operation)
      if (!change) budget.remeasure(result)
      return result
    }
  }
}

/** The change entry's `operations`: batch operations with dot paths, patch operations as applied. */
export function operationsOfEntry (operation: CompoundOperation): Json[] {
  return operation.op === 'batch' ? operation.operations.map(batchOperationBody) as unknown as Json[] : operation.operations as unknown as Json[]
}
