// The content operations as the API offers them (docs/design.md §3): for each name under
// `POST …/content/<name>`, the body schema it is validated with, the Operation it becomes
// and its exact success message. Defined once: the routes, the API reference and the tests
// all read this table.
import type { z } from 'zod'
import type { Json, JsonObject } from './json.js'
import type { NarrowableOperation } from './key-scope.js'
import type { Operation } from './operations.js'
import { amountBody, insertBody, parseBody, pathBody, valueBody } from './schemas.js'

interface PathOperation<S extends z.ZodType> {
  schema: S
  message: string
  toOperation: (body: z.output<S>) => Operation
}

const define = <S extends z.ZodType>(operation: PathOperation<S>): PathOperation<S> => operation

export const PATH_OPERATIONS = {
  increment: define({ schema: amountBody, message: 'Value incremented successfully', toOperation: b => ({ op: 'increment', path: b.path, value: b.value }) }),
  decrement: define({ schema: amountBody, message: 'Value decremented successfully', toOperation: b => ({ op: 'decrement', path: b.path, value: b.value }) }),
  set: define({ schema: valueBody, message: 'Value set successfully', toOperation: b => ({ op: 'set', path: b.path, value: b.value as Json }) }),
  delete: define({ schema: pathBody, message: 'Value deleted successfully', toOperation: b => ({ op: 'delete', path: b.path }) }),
  push: define({ schema: valueBody, message: 'Object pushed successfully', toOperation: b => ({ op: 'push', path: b.path, value: b.value as Json }) }),
  insert: define({ schema: insertBody, message: 'Value inserted successfully', toOperation: b => ({ op: 'insert', path: b.path, value: b.value as Json, index: b.index }) })
} as const

export type PathOperationName = keyof typeof PATH_OPERATIONS
export const PATH_OPERATION_NAMES = Object.keys(PATH_OPERATIONS) as PathOperationName[]

// Every path operation can be named in a narrowed key's `ops`, and nothing else (a type error otherwise).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const narrowableAreThePathOperations: Same<PathOperationName, NarrowableOperation> = true
void narrowableAreThePathOperations

/** `POST …/content`: the body is the new content itself (free-form, so no schema). */
export const UPDATE_MESSAGE = 'Project content updated successfully.'

/** `POST …/content/revert`'s success message (also what a replay of it answers). */
export function revertMessage (version: number): string {
  return `Content reverted to version ${version}.`
}

/** Every operation's success message, update included. */
export const SUCCESS_MESSAGES: Record<PathOperationName | 'update', string> = {
  ...Object.fromEntries(PATH_OPERATION_NAMES.map(name => [name, PATH_OPERATIONS[name].message])) as Record<PathOperationName, string>,
  update: UPDATE_MESSAGE
}

/**
 * The Operation a request body asks for: validated with the operation's schema (a catalogued
 * 400 naming the first problem otherwise).
 */
export function pathOperationFrom (name: PathOperationName, body: unknown): Operation {
  const { schema, toOperation } = PATH_OPERATIONS[name] as PathOperation<z.ZodType>
  return toOperation(parseBody(schema, body))
}

/** The update's Operation; validateOperation refuses content that is not a JSON object. */
export function updateOperationFrom (body: unknown): Operation {
  return { op: 'update', value: body as JsonObject }
}
