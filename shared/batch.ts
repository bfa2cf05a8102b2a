// `POST …/content/batch` (docs/design.md §10): the path operations of the operation table plus
// `test`, applied in order to one working copy, all or nothing. Shared by the server (stores)
// and clients (replaying `batch` change entries); batch-request.ts validates requests.
import type { ContentBudget } from './content-budget.js'
import { ContentdError, isContentdError } from './errors.js'
import type { Json, JsonObject } from './json.js'
import { jsonEqual } from './json-equal.js'
import { getAt, type PathOperation } from './operations.js'
import type { PathOperationName } from './operation-table.js'
import { formatPath, parsePath } from './path.js'
import { applyAtomically, applyInCopy } from './working-copy.js'

/** `{op: "test", path, value}`: passes when the value at `path` deep-equals `value`. */
export interface TestOperation { op: 'test', path: string[], value: Json }

export type BatchOperation = PathOperation | TestOperation
export type BatchOperationName = PathOperationName | 'test'
export const BATCH_OPERATION_NAMES: readonly BatchOperationName[] = ['increment', 'decrement', 'set', 'delete', 'push', 'insert', 'test']

/** A batch operation as requests, change entries and the SDK spell it: a dot path. */
export interface BatchOperationBody {
  op: BatchOperationName
  path: string
  value?: Json
  index?: number
}

export const BATCH_MESSAGE = 'Batch applied successfully'
export const DEFAULT_BATCH_LIMIT = 100

/** Throws TEST_FAILED unless the value at `path` deep-equals `value` (a missing path fails). */
export function assertTest (doc: JsonObject, path: readonly string[], value: Json): void {
  let found: Json
  try {
    found = getAt(doc, path)
  } catch (error) {
    if (isContentdError(error) && error.code === 'PATH_NOT_FOUND') throw new ContentdError('TEST_FAILED', `nothing is stored at "${formatPath(path)}"`)
    throw error
  }
  if (!jsonEqual(found, value)) throw new ContentdError('TEST_FAILED', `"${formatPath(path)}"`)
}

/**
 * The content after the batch; `doc` itself is never changed. Throws OperationError. With a
 * budget, refuses (CONTENT_TOO_LARGE, naming the operation) the first operation that would
 * take the content past its limit, before applying it; the budget then holds the result's size.
 */
export function applyBatch (doc: JsonObject, operations: readonly BatchOperation[], budget?: ContentBudget): JsonObject {
  return applyAtomically(doc, operations, (copy, operation) => {
    if (operation.op === 'test') assertTest(copy.root, operation.path, operation.value)
    else applyInCopy(copy, operation)
  }, budget)
}

/** The operation as a request spells it (the change entry's `operations`). */
export function batchOperationBody (operation: BatchOperation): BatchOperationBody {
  const body: BatchOperationBody = { op: operation.op, path: formatPath(operation.path) }
  if ('value' in operation) body.value = operation.value
  if (operation.op === 'insert') body.index = operation.index
  return body
}

/** Back from the spelled form (replaying a change entry). Throws on a malformed one. */
export function batchOperationOf (body: BatchOperationBody): BatchOperation {
  const path = parsePath(body.path)
  switch (body.op) {
    case 'delete': return { op: 'delete', path }
    case 'insert': return { op: 'insert', path, value: body.value as Json, index: body.index as number }
    case 'increment':
    case 'decrement': return { op: body.op, path, value: body.value as number }
    default: return { op: body.op, path, value: body.value as Json }
  }
}
