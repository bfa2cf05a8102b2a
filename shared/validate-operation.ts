// The checks of an operation that need no document (docs/design.md §2-§3): the path's segments,
// a finite amount, a non-negative integer index, the value rules of json.ts, and update's
// content being a JSON object. One function for every caller: the HTTP routes run it as
// request validation (docs/design.md §4 step 5, before If-Match), applyOperation runs it before
// touching the document (so the SQLite store and clients applying change events get it),
// and the MongoDB store runs it before translating, since its writes never call
// applyOperation.
//
// Once per write on the server (issue 27): the route's check (step 5) is remembered for that
// very operation object, and the engine's apply (content-limit.ts, compound.ts, working-copy.ts
// through validateOnce and applyValidOperation) does not run it again. A caller that made its
// operation elsewhere (the CLI, a replay, a test) is checked there as before; applyOperation
// itself always checks.
import { ContentdError } from './errors.js'
import { assertWritableValue, isPlainObject } from './json.js'
import type { Operation } from './operations.js'
import { assertPathSegments } from './path.js'

/**
 * The operations that passed validateOperation, by identity. Operations are never changed
 * once made (the server builds them per request and only reads them), so an object that
 * passed still does.
 */
const passed = new WeakSet<Operation>()

/** Throws the catalogued 400 for the first problem; returns when the operation is well-formed. */
export function validateOperation (operation: Operation): void {
  check(operation)
  passed.add(operation)
}

/** validateOperation, unless this very operation has already passed it. */
export function validateOnce (operation: Operation): void {
  if (!passed.has(operation)) validateOperation(operation)
}

function check (operation: Operation): void {
  if (operation.op === 'update') {
    if (!isPlainObject(operation.value)) throw new ContentdError('INVALID_BODY', 'the content must be a JSON object')
    assertWritableValue(operation.value)
    return
  }
  assertPathSegments(operation.path)
  switch (operation.op) {
    case 'increment':
    case 'decrement':
      if (!Number.isFinite(operation.value)) {
        throw new ContentdError('INVALID_VALUE', 'the amount must be a finite number')
      }
      return
    case 'insert':
      if (!Number.isSafeInteger(operation.index) || operation.index < 0) {
        throw new ContentdError('INDEX_OUT_OF_RANGE', 'index must be a non-negative integer')
      }
      assertWritableValue(operation.value, operation.path)
      return
    case 'set':
    case 'push':
      assertWritableValue(operation.value, operation.path)
      return
    case 'delete':
      return
  }
}
