// The canonical table of content-operation cases (docs/design.md §2-§3). One table, many runners:
// the pure core (test/core/operations.test.ts) and every store's contract suite replay it,
// so all of them agree on every rule to the letter.
//
// A case is request-level, like an HTTP body: `path` is the dot string as sent, not split.
// `toOperation` turns it into the shared Operation exactly as the HTTP layer does (same zod
// schemas, same catalogued 400s). For an error case the content must stay equal to `before`.
//
// Runners must not mutate the table: clone `before` (structuredClone keeps own "__proto__"
// keys), and `toOperation` already clones the value it hands over.
import type { ErrorCode } from '../../shared/errors.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { pathOperationFrom, updateOperationFrom } from '../../shared/operation-table.js'
import type { Operation, OperationName } from '../../shared/operations.js'

export interface OperationRequest {
  op: OperationName
  /** The dot path exactly as a client sends it (absent for update, or to test a missing path). */
  path?: unknown
  value?: unknown
  index?: unknown
}

export type CaseExpectation = { content: JsonObject } | { code: ErrorCode }

export interface OperationCase {
  name: string
  before: JsonObject
  operation: OperationRequest
  expect: CaseExpectation
}

/** The request body the HTTP layer would receive for a path operation. */
function bodyOf (request: OperationRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  if (request.path !== undefined) body.path = request.path
  if (request.value !== undefined) body.value = request.value
  if (request.index !== undefined) body.index = request.index
  return structuredClone(body)
}

/**
 * The shared Operation for a case (or a bare request), built by the operation table exactly
 * as the HTTP routes build it: an invalid path throws INVALID_PATH, a wrongly typed amount or
 * a missing value INVALID_VALUE, a bad index INVALID_BODY. `update` is passed through:
 * validateOperation (run by applyOperation, as by the route) refuses content that is not an
 * object.
 */
export function toOperation (c: OperationCase | OperationRequest): Operation {
  const request = 'operation' in c ? c.operation : c
  const body = bodyOf(request)
  return request.op === 'update' ? updateOperationFrom(body.value) : pathOperationFrom(request.op, body)
}

/**
 * Strict JSON equality: same JSON types, same own keys (in any order), plain objects only
 * (prototype Object.prototype). Use it where vitest's toStrictEqual is fooled by data keys
 * named "constructor"; pair it with toEqual for a readable diff.
 */
export function isSameJson (actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return actual === expected
  if (actual === null || typeof actual !== 'object') return false
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((item, i) => isSameJson(actual[i], item))
  }
  if (Array.isArray(actual)) return false
  if (Object.getPrototypeOf(actual) !== Object.prototype) return false
  const actualKeys = Object.keys(actual)
  const expectedKeys = Object.keys(expected)
  const has = (obj: object, key: string) => Object.prototype.hasOwnProperty.call(obj, key)
  return actualKeys.length === expectedKeys.length &&
    expectedKeys.every(key => has(actual, key) && isSameJson((actual as Record<string, unknown>)[key], (expected as Record<string, unknown>)[key]))
}

// ---------------------------------------------------------------------------------------
// Builders

const cases: OperationCase[] = []

function ok (name: string, before: JsonObject, operation: OperationRequest, content: JsonObject): void {
  cases.push({ name, before, operation, expect: { content } })
}

function fails (name: string, before: JsonObject, operation: OperationRequest, code: ErrorCode): void {
  cases.push({ name, before, operation, expect: { code } })
}

/** `levels` nested arrays: 1 is `[]`, 2 is `[[]]` (a container is one level, docs/design.md §3). */
export function nestedArrays (levels: number): Json[] {
  let value: Json[] = []
  for (let i = 1; i < levels; i++) value = [value]
  return value
}

/** `levels` nested objects: 1 is `{}`, 2 is `{"k":{}}`. */
export function nestedObjects (levels: number): JsonObject {
  let value: JsonObject = {}
  for (let i = 1; i < levels; i++) value = { k: value }
  return value
}

/** A JSON object with an own "__proto__" key, as JSON.parse builds it from a request body. */
export const OWN_PROTO_KEY_VALUE = (): JsonObject => JSON.parse('{"__proto__": {"polluted": true}}') as JsonObject

const WRITING_OPS = ['increment', 'decrement', 'set', 'delete', 'push', 'insert'] as const
type WritingOp = typeof WRITING_OPS[number]

/** A valid request for a writing op at `path` (insert at index 0, push/set a number). */
function request (op: WritingOp, path: string): OperationRequest {
  switch (op) {
    case 'increment':
    case 'decrement':
    case 'delete': return { op, path }
    case 'set':
    case 'push': return { op, path, value: 1 }
    case 'insert': return { op, path, value: 1, index: 0 }
  }
}

// ---------------------------------------------------------------------------------------
// increment / decrement

ok('increment: default amount is 1', { n: 1 }, { op: 'increment', path: 'n' }, { n: 2 })
ok('increment: custom amount', { n: 1 }, { op: 'increment', path: 'n', value: 5 }, { n: 6 })
ok('increment: negative amount', { n: 1 }, { op: 'increment', path: 'n', value: -3 }, { n: -2 })
ok('increment: fractional amount', { n: 1 }, { op: 'increment', path: 'n', value: 0.5 }, { n: 1.5 })
ok('increment: amount 0 leaves the number', { n: 4 }, { op: 'increment', path: 'n', value: 0 }, { n: 4 })
ok('increment: nested existing number', { data: { item: { count: 2 } } }, { op: 'increment', path: 'data.item.count', value: 3 }, { data: { item: { count: 5 } } })
ok('increment: missing target is created as the amount', {}, { op: 'increment', path: 'n', value: 5 }, { n: 5 })
ok('increment: missing target with default amount is created as 1', {}, { op: 'increment', path: 'n' }, { n: 1 })
ok('increment: missing intermediates are created as objects', {}, { op: 'increment', path: 'a.b.c', value: 2 }, { a: { b: { c: 2 } } })
ok('increment: missing key beside existing keys', { a: { x: 1 } }, { op: 'increment', path: 'a.y' }, { a: { x: 1, y: 1 } })
ok('increment: array element', { a: [1, 2] }, { op: 'increment', path: 'a.1' }, { a: [1, 3] })
ok('increment: index = length appends the amount', { a: [1, 2] }, { op: 'increment', path: 'a.2', value: 4 }, { a: [1, 2, 4] })
fails('increment: index > length is out of range', { a: [1, 2] }, { op: 'increment', path: 'a.3' }, 'INDEX_OUT_OF_RANGE')
fails('increment: null target is not a number', { n: null }, { op: 'increment', path: 'n' }, 'NOT_A_NUMBER')
fails('increment: string target is not a number', { n: '5' }, { op: 'increment', path: 'n' }, 'NOT_A_NUMBER')
fails('increment: boolean target is not a number', { n: true }, { op: 'increment', path: 'n' }, 'NOT_A_NUMBER')
fails('increment: object target is not a number', { n: { v: 1 } }, { op: 'increment', path: 'n' }, 'NOT_A_NUMBER')
fails('increment: array target is not a number', { n: [1] }, { op: 'increment', path: 'n' }, 'NOT_A_NUMBER')
fails('increment: overflow to Infinity is a non-finite result', { n: 1e308 }, { op: 'increment', path: 'n', value: 1e308 }, 'NON_FINITE_RESULT')
fails('increment: amount that is a string is an invalid value', { n: 1 }, { op: 'increment', path: 'n', value: '5' }, 'INVALID_VALUE')
fails('increment: amount null is an invalid value', { n: 1 }, { op: 'increment', path: 'n', value: null }, 'INVALID_VALUE')
fails('increment: amount that is an object is an invalid value', { n: 1 }, { op: 'increment', path: 'n', value: { v: 1 } }, 'INVALID_VALUE')

ok('decrement: default amount is 1', { n: 5 }, { op: 'decrement', path: 'n' }, { n: 4 })
ok('decrement: custom amount', { n: 5 }, { op: 'decrement', path: 'n', value: 2.5 }, { n: 2.5 })
ok('decrement: negative amount adds', { n: 1 }, { op: 'decrement', path: 'n', value: -2 }, { n: 3 })
ok('decrement: below zero', { n: 0 }, { op: 'decrement', path: 'n', value: 3 }, { n: -3 })
ok('decrement: missing target is created as -amount', {}, { op: 'decrement', path: 'n', value: 3 }, { n: -3 })
ok('decrement: missing target with default amount is created as -1', {}, { op: 'decrement', path: 'n' }, { n: -1 })
ok('decrement: missing intermediates are created as objects', { a: {} }, { op: 'decrement', path: 'a.b.c', value: 2 }, { a: { b: { c: -2 } } })
fails('decrement: null target is not a number', { n: null }, { op: 'decrement', path: 'n' }, 'NOT_A_NUMBER')
fails('decrement: string target is not a number', { n: 'ten' }, { op: 'decrement', path: 'n' }, 'NOT_A_NUMBER')
fails('decrement: overflow to -Infinity is a non-finite result', { n: -1e308 }, { op: 'decrement', path: 'n', value: 1e308 }, 'NON_FINITE_RESULT')
fails('decrement: amount that is a string is an invalid value', { n: 1 }, { op: 'decrement', path: 'n', value: '1' }, 'INVALID_VALUE')

// ---------------------------------------------------------------------------------------
// set

ok('set: new top-level key', { y: 1 }, { op: 'set', path: 'x', value: 'hello' }, { y: 1, x: 'hello' })
ok('set: creates missing intermediates as objects', {}, { op: 'set', path: 'a.b.c', value: 1 }, { a: { b: { c: 1 } } })
ok('set: replaces a number with an object', { a: 1 }, { op: 'set', path: 'a', value: { b: [1, 2] } }, { a: { b: [1, 2] } })
ok('set: replaces an object with a string', { a: { b: 1 } }, { op: 'set', path: 'a', value: 'x' }, { a: 'x' })
ok('set: null is allowed', { a: 1 }, { op: 'set', path: 'a', value: null }, { a: null })
ok('set: false and 0 are values', {}, { op: 'set', path: 'f', value: false }, { f: false })
ok('set: array value', {}, { op: 'set', path: 'list', value: [1, 'two', null, { three: 3 }] }, { list: [1, 'two', null, { three: 3 }] })
ok('set: unicode string', {}, { op: 'set', path: 'greeting', value: 'héllo 🌍' }, { greeting: 'héllo 🌍' })
ok('set: array index < length replaces', { a: [1, 2, 3] }, { op: 'set', path: 'a.1', value: 'x' }, { a: [1, 'x', 3] })
ok('set: array index = length appends', { a: [1, 2, 3] }, { op: 'set', path: 'a.3', value: 4 }, { a: [1, 2, 3, 4] })
ok('set: index 0 of an empty array appends', { a: [] }, { op: 'set', path: 'a.0', value: 'first' }, { a: ['first'] })
fails('set: array index > length is out of range', { a: [1, 2, 3] }, { op: 'set', path: 'a.4', value: 5 }, 'INDEX_OUT_OF_RANGE')
fails('set: huge canonical index is out of range', { a: [1] }, { op: 'set', path: 'a.999999999999999', value: 5 }, 'INDEX_OUT_OF_RANGE')
ok('set: through an array element into its object', { a: [{ b: 1 }] }, { op: 'set', path: 'a.0.c', value: 2 }, { a: [{ b: 1, c: 2 }] })
ok('set: index = length followed by more segments appends a new object', { a: [0] }, { op: 'set', path: 'a.1.b', value: 1 }, { a: [0, { b: 1 }] })
ok('set: numeric-looking key in an object is just a key', { a: {} }, { op: 'set', path: 'a.07', value: 1 }, { a: { '07': 1 } })
ok('set: key with "$" after the start is fine', {}, { op: 'set', path: 'price$', value: 1 }, { price$: 1 })
fails('set: missing value is an invalid value', {}, { op: 'set', path: 'a' }, 'INVALID_VALUE')

// ---------------------------------------------------------------------------------------
// delete

ok('delete: existing key', { a: 1, b: 2 }, { op: 'delete', path: 'a' }, { b: 2 })
ok('delete: nested key keeps its siblings and parent', { a: { b: 1, c: 2 } }, { op: 'delete', path: 'a.b' }, { a: { c: 2 } })
ok('delete: last key leaves an empty object', { a: { b: 1 } }, { op: 'delete', path: 'a.b' }, { a: {} })
ok('delete: a whole subtree', { a: { b: { c: [1, 2] } }, d: 1 }, { op: 'delete', path: 'a' }, { d: 1 })
ok('delete: a null value', { a: null }, { op: 'delete', path: 'a' }, {})
ok('delete: array element shifts later elements down', { a: [1, 2, 3] }, { op: 'delete', path: 'a.0' }, { a: [2, 3] })
ok('delete: last array element', { a: [1, 2, 3] }, { op: 'delete', path: 'a.2' }, { a: [1, 2] })
ok('delete: missing key is ok and changes nothing', { a: 1 }, { op: 'delete', path: 'b' }, { a: 1 })
ok('delete: missing intermediates are ok and create nothing', { a: 1 }, { op: 'delete', path: 'x.y.z' }, { a: 1 })
ok('delete: index = length is missing, nothing changes', { a: [1, 2] }, { op: 'delete', path: 'a.2' }, { a: [1, 2] })
ok('delete: index past the end is missing, nothing changes', { a: [1, 2] }, { op: 'delete', path: 'a.5' }, { a: [1, 2] })

// ---------------------------------------------------------------------------------------
// push

ok('push: appends to an existing array', { a: [1] }, { op: 'push', path: 'a', value: 2 }, { a: [1, 2] })
ok('push: missing target is created as [value]', {}, { op: 'push', path: 'a', value: 'x' }, { a: ['x'] })
ok('push: missing intermediates are created as objects', {}, { op: 'push', path: 'a.b', value: 1 }, { a: { b: [1] } })
ok('push: an array is pushed as one element', { a: [1] }, { op: 'push', path: 'a', value: [2, 3] }, { a: [1, [2, 3]] })
ok('push: an array onto a missing target is one element', {}, { op: 'push', path: 'a', value: [2, 3] }, { a: [[2, 3]] })
ok('push: an object', { a: [] }, { op: 'push', path: 'a', value: { id: 1 } }, { a: [{ id: 1 }] })
ok('push: null', { a: [] }, { op: 'push', path: 'a', value: null }, { a: [null] })
ok('push: into a nested array by index', { a: [[1]] }, { op: 'push', path: 'a.0', value: 2 }, { a: [[1, 2]] })
fails('push: object target is not an array', { a: { b: 1 } }, { op: 'push', path: 'a', value: 1 }, 'NOT_AN_ARRAY')
fails('push: string target is not an array', { a: 'text' }, { op: 'push', path: 'a', value: 1 }, 'NOT_AN_ARRAY')
fails('push: number target is not an array', { a: 1 }, { op: 'push', path: 'a', value: 1 }, 'NOT_AN_ARRAY')
fails('push: null target is not an array', { a: null }, { op: 'push', path: 'a', value: 1 }, 'NOT_AN_ARRAY')
fails('push: missing value is an invalid value', { a: [] }, { op: 'push', path: 'a' }, 'INVALID_VALUE')

// ---------------------------------------------------------------------------------------
// insert

ok('insert: at index 0', { a: [1, 2] }, { op: 'insert', path: 'a', value: 0, index: 0 }, { a: [0, 1, 2] })
ok('insert: in the middle', { a: [1, 3] }, { op: 'insert', path: 'a', value: 2, index: 1 }, { a: [1, 2, 3] })
ok('insert: at index = length appends', { a: [1, 2] }, { op: 'insert', path: 'a', value: 3, index: 2 }, { a: [1, 2, 3] })
ok('insert: an array is inserted as one element', { a: [1] }, { op: 'insert', path: 'a', value: [2, 3], index: 0 }, { a: [[2, 3], 1] })
ok('insert: missing target with index 0 is created as [value]', {}, { op: 'insert', path: 'a.b', value: 'x', index: 0 }, { a: { b: ['x'] } })
fails('insert: missing target with index 1 is out of range', {}, { op: 'insert', path: 'a', value: 'x', index: 1 }, 'INDEX_OUT_OF_RANGE')
fails('insert: index > length is out of range', { a: [1, 2] }, { op: 'insert', path: 'a', value: 3, index: 3 }, 'INDEX_OUT_OF_RANGE')
fails('insert: negative index is out of range', { a: [1, 2] }, { op: 'insert', path: 'a', value: 3, index: -1 }, 'INDEX_OUT_OF_RANGE')
fails('insert: fractional index is an invalid body', { a: [1, 2] }, { op: 'insert', path: 'a', value: 3, index: 1.5 }, 'INVALID_BODY')
fails('insert: string index is an invalid body', { a: [1, 2] }, { op: 'insert', path: 'a', value: 3, index: '1' }, 'INVALID_BODY')
fails('insert: missing index is an invalid body', { a: [1, 2] }, { op: 'insert', path: 'a', value: 3 }, 'INVALID_BODY')
fails('insert: missing value is an invalid value', { a: [] }, { op: 'insert', path: 'a', index: 0 }, 'INVALID_VALUE')
fails('insert: object target is not an array', { a: {} }, { op: 'insert', path: 'a', value: 1, index: 0 }, 'NOT_AN_ARRAY')
fails('insert: string target is not an array', { a: 'x' }, { op: 'insert', path: 'a', value: 1, index: 0 }, 'NOT_AN_ARRAY')

// ---------------------------------------------------------------------------------------
// update

ok('update: replaces the whole content', { a: 1, b: { c: 2 } }, { op: 'update', value: { x: [1, { y: null }] } }, { x: [1, { y: null }] })
ok('update: with an empty object empties the content', { a: 1 }, { op: 'update', value: {} }, {})
fails('update: an array is an invalid body', { a: 1 }, { op: 'update', value: [1, 2] }, 'INVALID_BODY')
fails('update: null is an invalid body', { a: 1 }, { op: 'update', value: null }, 'INVALID_BODY')
fails('update: a string is an invalid body', { a: 1 }, { op: 'update', value: 'content' }, 'INVALID_BODY')
fails('update: a key with "." is an invalid value', { a: 1 }, { op: 'update', value: { 'a.b': 1 } }, 'INVALID_VALUE')
fails('update: an own "__proto__" key is an invalid value', { a: 1 }, { op: 'update', value: OWN_PROTO_KEY_VALUE() }, 'INVALID_VALUE')

// ---------------------------------------------------------------------------------------
// Lone UTF-16 surrogates (legal JSON text, not Unicode): refused on every store (docs/design.md §3).
// MongoDB's driver would store U+FFFD, and two such keys would collapse into one.

fails('set: a string value with a lone high surrogate is an invalid value', {}, { op: 'set', path: 'a', value: 'x\ud800' }, 'INVALID_VALUE')
fails('push: a lone low surrogate deep in the value is an invalid value', { l: [] }, { op: 'push', path: 'l', value: { b: ['\udc00'] } }, 'INVALID_VALUE')
fails('insert: a key with a lone surrogate is an invalid value', { l: [] }, { op: 'insert', path: 'l', value: { '\ud800': 1 }, index: 0 }, 'INVALID_VALUE')
fails('update: two keys that differ only in lone surrogates are invalid values', { a: 1 }, { op: 'update', value: { '\ud800': 1, '\ud801': 2 } }, 'INVALID_VALUE')
fails('increment: a path segment with a lone surrogate is an invalid path', {}, { op: 'increment', path: 'a.\udfff' }, 'INVALID_PATH')
fails('delete: a path segment with a lone surrogate is an invalid path', { '\ufffd': 1 }, { op: 'delete', path: '\ud800' }, 'INVALID_PATH')
ok('set: a surrogate pair (an emoji) in keys and strings is fine', {}, { op: 'set', path: '😀', value: { '😀': 'a😀b' } }, { '😀': { '😀': 'a😀b' } })

// ---------------------------------------------------------------------------------------
// Intermediates that are not containers: a conflict for every writing operation.

const SCALARS: Array<[string, Json]> = [['a string', 'text'], ['a number', 7], ['a boolean', true], ['null', null]]
for (const op of WRITING_OPS) {
  for (const [label, scalar] of SCALARS) {
    fails(`${op}: through ${label} is a path conflict`, { s: scalar }, request(op, 's.x'), 'PATH_CONFLICT')
  }
  fails(`${op}: through a deeper scalar is a path conflict`, { a: { s: 'x' } }, request(op, 'a.s.b.c'), 'PATH_CONFLICT')
  fails(`${op}: through a scalar array element is a path conflict`, { a: [1] }, request(op, 'a.0.b'), 'PATH_CONFLICT')
}

// ---------------------------------------------------------------------------------------
// Array indexes: canonical non-negative integers only.

ok('array index: canonical 0', { a: [1, 2] }, { op: 'set', path: 'a.0', value: 9 }, { a: [9, 2] })
ok('array index: canonical 7', { a: [0, 1, 2, 3, 4, 5, 6, 7] }, { op: 'set', path: 'a.7', value: 'x' }, { a: [0, 1, 2, 3, 4, 5, 6, 'x'] })
ok('array index: canonical 10', { a: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] }, { op: 'set', path: 'a.10', value: 10 }, { a: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] })
for (const segment of ['07', '00', '-1', '1e0', 'x', '+1', ' 1', '1 ', '0x1', 'length']) {
  fails(`array index: set at "${segment}" is invalid`, { a: [1, 2] }, { op: 'set', path: `a.${segment}`, value: 0 }, 'INVALID_ARRAY_INDEX')
}
for (const op of WRITING_OPS.filter(op => op !== 'set')) {
  fails(`array index: ${op} at "07" is invalid`, { a: [1, 2, 3, 4, 5, 6, 7, 8] }, request(op, 'a.07'), 'INVALID_ARRAY_INDEX')
}
fails('array index: invalid index in an intermediate', { a: [{ b: 1 }] }, { op: 'set', path: 'a.x.b', value: 0 }, 'INVALID_ARRAY_INDEX')

// ---------------------------------------------------------------------------------------
// Keys are data: names of Object.prototype members are ordinary keys.

const PROTOTYPE_NAMES = ['constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__']
for (const name of PROTOTYPE_NAMES) {
  ok(`ordinary key: set "${name}"`, {}, { op: 'set', path: name, value: 1 }, { [name]: 1 })
  ok(`ordinary key: increment "${name}" creates it`, {}, { op: 'increment', path: name }, { [name]: 1 })
}
ok('ordinary key: increment an existing "toString"', { toString: 41 }, { op: 'increment', path: 'toString' }, { toString: 42 })
ok('ordinary key: "constructor.prototype.polluted" creates plain objects', {}, { op: 'set', path: 'constructor.prototype.polluted', value: true }, { constructor: { prototype: { polluted: true } } })
ok('ordinary key: push "hasOwnProperty"', {}, { op: 'push', path: 'hasOwnProperty', value: 1 }, { hasOwnProperty: [1] })
ok('ordinary key: insert "valueOf"', {}, { op: 'insert', path: 'valueOf', value: 1, index: 0 }, { valueOf: [1] })
ok('ordinary key: delete a missing "toString" changes nothing', { a: 1 }, { op: 'delete', path: 'toString' }, { a: 1 })
ok('ordinary key: delete an existing "constructor"', { constructor: 1, a: 1 }, { op: 'delete', path: 'constructor' }, { a: 1 })
fails('ordinary key: an own "toString" string is data, not an array', { o: { toString: 'x' } }, { op: 'push', path: 'o.toString', value: 1 }, 'NOT_AN_ARRAY')
ok('ordinary key: a value with "constructor" and "prototype" keys', {}, { op: 'set', path: 'v', value: { constructor: { prototype: { x: 1 } } } }, { v: { constructor: { prototype: { x: 1 } } } })
ok('ordinary key: a through-path "a.constructor.prototype"', { a: {} }, { op: 'increment', path: 'a.constructor.prototype' }, { a: { constructor: { prototype: 1 } } })

// ---------------------------------------------------------------------------------------
// Values written obey the key rules and the nesting limit (set, push, insert, update).

const BAD_KEYS: Array<[string, () => JsonObject]> = [
  ['a key with "."', () => ({ 'a.b': 1 })],
  ['a key starting with "$"', () => ({ $set: 1 })],
  ['an own "__proto__" key', OWN_PROTO_KEY_VALUE],
  ['a key with NUL', () => ({ 'a\u0000': 1 })],
  ['a key with a newline', () => ({ 'line\nbreak': 1 })],
  ['a key with DEL', () => ({ 'a\u007f': 1 })],
  ['a key with a C1 control', () => ({ 'a\u0085': 1 })],
  ['an empty key', () => ({ '': 1 })],
  ['a key of 769 bytes', () => ({ ['k'.repeat(769)]: 1 })],
  ['a key of 770 UTF-8 bytes in 385 characters', () => ({ ['é'.repeat(385)]: 1 })],
  ['a bad key nested in an array', () => ({ list: [{ ok: 1 }, { $bad: 1 }] as Json[] })]
]
for (const [label, value] of BAD_KEYS) {
  fails(`value: set with ${label} is invalid`, { a: 1 }, { op: 'set', path: 'v', value: value() }, 'INVALID_VALUE')
}
fails('value: push with a bad key is invalid', { a: [] }, { op: 'push', path: 'a', value: { $x: 1 } }, 'INVALID_VALUE')
fails('value: push with an own "__proto__" key is invalid', { a: [] }, { op: 'push', path: 'a', value: OWN_PROTO_KEY_VALUE() }, 'INVALID_VALUE')
fails('value: insert with a bad key is invalid', { a: [] }, { op: 'insert', path: 'a', value: { 'x.y': 1 }, index: 0 }, 'INVALID_VALUE')
ok('value: a key of exactly 768 bytes is fine', {}, { op: 'set', path: 'v', value: { ['k'.repeat(768)]: 1 } }, { v: { ['k'.repeat(768)]: 1 } })
ok('value: a key of 768 UTF-8 bytes in 384 characters is fine', {}, { op: 'set', path: 'v', value: { ['é'.repeat(384)]: 1 } }, { v: { ['é'.repeat(384)]: 1 } })
ok('value: keys with "$" inside, spaces and unicode are fine', {}, { op: 'set', path: 'v', value: { a$: 1, 'two words': 2, 'ключ': 3 } }, { v: { a$: 1, 'two words': 2, 'ключ': 3 } })
ok('value: string values may hold anything', {}, { op: 'set', path: 'v', value: '$x.__proto__\u0000' }, { v: '$x.__proto__\u0000' })

ok('nesting: 64 levels of arrays is fine', {}, { op: 'set', path: 'v', value: nestedArrays(64) }, { v: nestedArrays(64) })
fails('nesting: 65 levels of arrays is invalid', {}, { op: 'set', path: 'v', value: nestedArrays(65) }, 'INVALID_VALUE')
ok('nesting: 64 levels of objects is fine', {}, { op: 'set', path: 'v', value: nestedObjects(64) }, { v: nestedObjects(64) })
fails('nesting: 65 levels of objects is invalid', {}, { op: 'set', path: 'v', value: nestedObjects(65) }, 'INVALID_VALUE')
fails('nesting: push of 65 levels is invalid', { a: [] }, { op: 'push', path: 'a', value: nestedArrays(65) }, 'INVALID_VALUE')
fails('nesting: insert of 65 levels is invalid', { a: [] }, { op: 'insert', path: 'a', value: nestedArrays(65), index: 0 }, 'INVALID_VALUE')
ok('nesting: update with 64 levels (the content object counts) is fine', {}, { op: 'update', value: nestedObjects(64) }, nestedObjects(64))
fails('nesting: update with 65 levels is invalid', {}, { op: 'update', value: nestedObjects(65) }, 'INVALID_VALUE')

// ---------------------------------------------------------------------------------------
// Paths

const segments = (count: number): string => Array.from({ length: count }, (_, i) => `s${i}`).join('.')
const nestedAt = (count: number, leaf: Json): JsonObject => {
  let value: Json = leaf
  for (let i = count - 1; i >= 0; i--) value = { [`s${i}`]: value }
  return value as JsonObject
}
const LONGEST_PATH = `${'p'.repeat(511)}.${'q'.repeat(512)}` // 1024 characters, two segments under 768 bytes

ok('path: 32 segments is fine', {}, { op: 'set', path: segments(32), value: 1 }, nestedAt(32, 1))
ok('path: 1024 characters is fine', {}, { op: 'set', path: LONGEST_PATH, value: 1 }, { ['p'.repeat(511)]: { ['q'.repeat(512)]: 1 } })
ok('path: a segment of 768 bytes is fine', {}, { op: 'set', path: 'x'.repeat(768), value: 1 }, { ['x'.repeat(768)]: 1 })

const INVALID_PATHS: Array<[string, unknown]> = [
  ['the empty path', ''],
  ['"a..b"', 'a..b'],
  ['".a"', '.a'],
  ['"a."', 'a.'],
  ['"."', '.'],
  ['"$x"', '$x'],
  ['"a.$x"', 'a.$x'],
  ['"__proto__"', '__proto__'],
  ['"__proto__.x"', '__proto__.x'],
  ['"a.__proto__"', 'a.__proto__'],
  ['"a.__proto__.polluted"', 'a.__proto__.polluted'],
  ['33 segments', segments(33)],
  ['1025 characters', `${'p'.repeat(512)}.${'q'.repeat(512)}`],
  ['a segment of 769 bytes', 'x'.repeat(769)],
  ['a NUL character', 'a\u0000b'],
  ['a newline', 'a\nb'],
  ['a tab', 'a\tb'],
  ['DEL', 'a\u007f'],
  ['a C1 control character', 'a\u0085b'],
  ['a number instead of a string', 5],
  ['null instead of a string', null],
  ['an array instead of a string', ['a', 'b']],
  ['no path at all', undefined]
]
for (const [label, path] of INVALID_PATHS) {
  fails(`path: set with ${label} is invalid`, { a: 1 }, { op: 'set', path, value: 1 }, 'INVALID_PATH')
}
for (const op of WRITING_OPS.filter(op => op !== 'set')) {
  fails(`path: ${op} with "a..b" is invalid`, { a: 1 }, request(op, 'a..b'), 'INVALID_PATH')
  fails(`path: ${op} with "__proto__.polluted" is invalid`, { a: 1 }, request(op, '__proto__.polluted'), 'INVALID_PATH')
}

fails('path: set with "__proto__.polluted" is invalid', { a: 1 }, { op: 'set', path: '__proto__.polluted', value: 1 }, 'INVALID_PATH')

/** Every case, in a stable order, with unique names. */
export const OPERATION_CASES: readonly OperationCase[] = cases
