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
import { assertWritableValue, isPlainObject, writableStringifiedLength } from './json.js'
import type { Operation } from './operations.js'
import { assertPathSegments } from './path.js'

/**
 * The operations that passed validateOperation, by identity. Operations are never changed
 * once made (the server builds them per request and only reads them), so an object that
 * passed still does; the one exception comes after the write: a committed operation whose
 * value was handed over lets go of it (server/engine/content-engine.ts), and is not checked
 * or applied again.
 */
const passed = new WeakMap<Operation, string | undefined>()

/**
 * Throws the catalogued 400 for the first problem; returns when the operation is well-formed.
 * `serialize`: the caller is about to write the operation (the route), so the value's JSON is
 * made now and kept for valueJsonOf (and vouches for its strings, json.ts). `escapeFree`: the
 * value was parsed from UTF-8 JSON text holding no \u escape, so none of its strings can hold
 * a lone surrogate (server/http/body.ts), and the JSON need not be searched for one (a search
 * copies the text whole; the engine makes its one copy, write-step.ts). `sourceJson`: the
 * request's text, which may already hold the value's JSON (server/http/body.ts
 * takeSourceJson): then it is not made at all. Other callers (a replay, a client applying a
 * change) need none of these.
 */
export function validateOperation (operation: Operation, serialize = false, escapeFree = false, sourceJson?: SourceJson): void {
  passed.set(operation, check(operation, serialize, escapeFree, sourceJson))
}

/**
 * The value's JSON.stringify as a slice of the request's own text, when that is proven
 * (shared/json-text.ts stringifiedWithin), else undefined; asked only for a valid value.
 * From a body without any backslash (server/http/body.ts), so also escape-free.
 */
export type SourceJson = (value: unknown, length: number) => string | undefined

/**
 * The operation's value as JSON: the text its validation made (the same JSON.stringify, once
 * per write, issue 35), or made now. Only for an operation with a value that is JSON. The
 * text is handed over, not kept: the operation lives until its write is answered, and the
 * engine copies the text into the stored entry (write-step.ts), so keeping it here would hold
 * a second 100 KB through the commit's sync for a 100 KB value (a later call makes it again).
 */
export function valueJsonOf (operation: Operation & { value: unknown }): string {
  const json = passed.get(operation)
  if (json === undefined) return JSON.stringify(operation.value)
  // Still passed (validateOnce), without its text.
  passed.set(operation, undefined)
  return json
}

/**
 * assertWritableValue, and the value's JSON when `serialize`: found in the request's text
 * when `sourceJson` proves it there (issue 35: the serialization was a tenth of a 100 KB
 * set's CPU), made otherwise.
 */
function checkedValue (value: unknown, at: readonly string[], serialize: boolean, escapeFree: boolean, sourceJson: SourceJson | undefined): string | undefined {
  if (serialize && sourceJson !== undefined) {
    // The check adds up the length JSON.stringify would write, which the search needs.
    const length = writableStringifiedLength(value, at)
    return (length >= 0 ? sourceJson(value, length) : undefined) ?? serialized(value)
  }
  const json = serialize ? serialized(value) : undefined
  assertWritableValue(value, at, json, escapeFree)
  return json
}

/**
 * The value's JSON, made here because the write needs it anyway (write-step.ts takes it
 * through valueJsonOf) and because it spares the value's check reading every string
 * (json.ts). undefined when the value has no JSON text (a function, a BigInt, a cycle,
 * nesting past the stack): the check then refuses it with its own message.
 */
function serialized (value: unknown): string | undefined {
  try {
    return JSON.stringify(value) as string | undefined
  } catch {
    return undefined
  }
}

/** validateOperation, unless this very operation has already passed it. */
export function validateOnce (operation: Operation): void {
  if (!passed.has(operation)) validateOperation(operation)
}

/** The checks; returns the value's JSON when it made it. */
function check (operation: Operation, serialize: boolean, escapeFree: boolean, sourceJson: SourceJson | undefined): string | undefined {
  if (operation.op === 'update') {
    if (!isPlainObject(operation.value)) throw new ContentdError('INVALID_BODY', 'the content must be a JSON object')
    return checkedValue(operation.value, [], serialize, escapeFree, sourceJson)
  }
  assertPathSegments(operation.path)
  switch (operation.op) {
    case 'increment':
    case 'decrement':
      if (!Number.isFinite(operation.value)) {
        throw new ContentdError('INVALID_VALUE', 'the amount must be a finite number')
      }
      return undefined
    case 'insert':
      if (!Number.isSafeInteger(operation.index) || operation.index < 0) {
        throw new ContentdError('INDEX_OUT_OF_RANGE', 'index must be a non-negative integer')
      }
      return checkedValue(operation.value, operation.path, serialize, escapeFree, sourceJson)
    case 'set':
    case 'push':
      return checkedValue(operation.value, operation.path, serialize, escapeFree, sourceJson)
    case 'delete':
      return undefined
  }
}
