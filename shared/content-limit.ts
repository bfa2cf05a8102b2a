// CONTENT_LIMIT, one rule for every store (docs/design.md §3, §13): the content after a change
// may be at most `limit` bytes, measured as the UTF-8 length of its JSON. Both stores apply
// every change through applyWithinLimit, so the same content is accepted or refused (413
// CONTENT_TOO_LARGE, nothing changed) whichever store holds it.
//
// Measuring the whole document on every write would cost its full size per increment, so the
// size is carried along as an upper bound: each change adds its growth bound
// (operations.ts growthBound), and only when the bound could pass the limit is the result
// measured exactly (which resets the bound). A batch or patch is charged operation by
// operation as it is applied (content-budget.ts), so one that would build a result past the
// limit stops before it does (docs/design.md §13b).
import { applyContentOperation, isCompound, type ContentOperation } from './compound.js'
import { ContentBudget } from './content-budget.js'
import { ContentdError } from './errors.js'
import type { JsonObject } from './json.js'
import { applyValidOperation, growthBound, type Operation } from './operations.js'
import { utf8ByteLength } from './path.js'
import { validateOnce } from './validate-operation.js'

/** A document with an upper bound of its JSON's UTF-8 length (exact after a measure). */
export interface SizedContent {
  doc: JsonObject
  bytes: number
}

/** UTF-8 length of a JSON text; the server passes Buffer.byteLength, which is faster. */
export type MeasureJson = (json: string) => number

/** The UTF-8 length of the JSON of `doc`. */
export function jsonBytes (doc: JsonObject, measure: MeasureJson = utf8ByteLength): number {
  return measure(JSON.stringify(doc))
}

/**
 * Applies the operation unless the content would outgrow `limit`. `valueBytes` is the JSON
 * size of the operation's value (0 without one). A path operation changes `state.doc` in place
 * when the bound proves it fits; near the limit it runs on a copy, so a refusal changes
 * nothing. update, batch and patch build a new document and leave `state.doc` untouched.
 */
export function applyWithinLimit (state: SizedContent, operation: ContentOperation, limit: number, valueBytes: number, measure: MeasureJson = utf8ByteLength): SizedContent {
  if (operation.op === 'update') {
    if (valueBytes > limit) throw tooLarge(valueBytes, limit)
    return { doc: applyChecked(state.doc, operation), bytes: valueBytes }
  }
  if (isCompound(operation)) {
    // state.bytes is an upper bound of the document's size: the budget starts from it.
    const budget = new ContentBudget(limit, state.bytes)
    const doc = applyContentOperation(state.doc, operation, budget)
    return { doc, bytes: budget.bytes }
  }
  const bound = growthBound(operation, valueBytes)
  if (state.bytes + bound <= limit) {
    return { doc: applyChecked(state.doc, operation), bytes: state.bytes + bound }
  }
  // Close to the limit: measure exactly, on a copy, so a refusal changes nothing.
  const doc = applyChecked(structuredClone(state.doc), operation)
  const bytes = jsonBytes(doc, measure)
  if (bytes > limit) throw tooLarge(bytes, limit)
  return { doc, bytes }
}

/** applyOperation, its validation skipped when the route already made it (validate-operation.ts). */
function applyChecked (doc: JsonObject, operation: Operation): JsonObject {
  validateOnce(operation)
  return applyValidOperation(doc, operation)
}

function tooLarge (bytes: number, limit: number): ContentdError {
  return new ContentdError('CONTENT_TOO_LARGE', `the content would be ${bytes} bytes; the limit is ${limit}`)
}
