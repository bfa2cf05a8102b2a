// Batches and patches as operations (docs/design.md §10): what the stores apply and log, and
// what a client replays from a `batch` or `patch` change entry, next to the single operations
// of operations.ts. applyContentOperation is the one entry point for any of them.
import { applyBatch, batchOperationBody, type BatchOperation } from './batch.js'
import type { Json, JsonObject } from './json.js'
import { applyPatch, pointerSegments, type PatchOperation } from './json-patch.js'
import { applyOperation, growthBound, type Operation } from './operations.js'
import { utf8ByteLength } from './path.js'

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
 */
export function applyContentOperation (doc: JsonObject, operation: ContentOperation): JsonObject {
  switch (operation.op) {
    case 'batch': return applyBatch(doc, operation.operations)
    case 'patch': return applyPatch(doc, operation.operations)
    default: return applyOperation(doc, operation)
  }
}

/** The change entry's `operations`: batch operations with dot paths, patch operations as applied. */
export function operationsOfEntry (operation: CompoundOperation): Json[] {
  return operation.op === 'batch' ? operation.operations.map(batchOperationBody) as unknown as Json[] : operation.operations as unknown as Json[]
}

/**
 * An upper bound of how much a batch or patch can grow the serialized content (see
 * growthBound), or Infinity when only measuring can tell (a patch's copy duplicates a value).
 */
export function compoundGrowthBound (operation: CompoundOperation): number {
  let bound = 0
  if (operation.op === 'batch') {
    for (const step of operation.operations) {
      if (step.op === 'test') continue
      bound += growthBound(step, 'value' in step ? utf8ByteLength(JSON.stringify(step.value)) : 0)
    }
    return bound
  }
  for (const step of operation.operations) {
    if (step.op === 'copy') return Infinity
    if (step.op === 'remove' || step.op === 'test') continue
    // A moved or added member's key may be new; each level a JSON-escaped key and punctuation.
    bound += pointerSegments(step.path).reduce((sum, segment) => sum + 6 * segment.length + 8, 0)
    if ('value' in step) bound += utf8ByteLength(JSON.stringify(step.value)) + 8
  }
  return bound
}
