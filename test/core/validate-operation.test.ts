// validateOperation: the checks of an operation that need no document, shared by the HTTP
// routes, applyOperation (the SQLite store, clients) and the MongoDB store. Each refusal has
// its code and exact message; applyOperation refuses the same operations with the same
// error before looking at the document.
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { applyOperation, type Operation } from '../../shared/operations.js'
import { validateOperation, valueJsonOf } from '../../shared/validate-operation.js'

function refusal (run: () => unknown): { code: string, message: string } {
  let thrown: unknown
  try { run() } catch (e) { thrown = e }
  expect(thrown).toBeInstanceOf(ContentdError)
  const { code, message } = thrown as ContentdError
  return { code, message }
}

const REFUSED: Array<[string, Operation, string, string]> = [
  ['a segment holding "." (two MongoDB levels, two keys joined)', { op: 'set', path: ['a.b'], value: 1 }, 'INVALID_PATH', 'The path is not valid: segment 1 contains "."'],
  ['a "$" segment (a MongoDB operator)', { op: 'delete', path: ['$set'] }, 'INVALID_PATH', 'The path is not valid: segment 1 starts with "$"'],
  ['a "__proto__" segment', { op: 'increment', path: ['a', '__proto__'], value: 1 }, 'INVALID_PATH', 'The path is not valid: segment 2 is "__proto__"'],
  ['an empty segment', { op: 'push', path: ['a', ''], value: 1 }, 'INVALID_PATH', 'The path is not valid: segment 2 is empty'],
  ['an empty path', { op: 'delete', path: [] }, 'INVALID_PATH', 'The path is not valid: path is empty'],
  ['33 segments', { op: 'delete', path: Array.from({ length: 33 }, () => 'a') }, 'INVALID_PATH', 'The path is not valid: path has more than 32 segments'],
  ['1025 characters joined', { op: 'delete', path: ['a'.repeat(700), 'b'.repeat(324)] }, 'INVALID_PATH', 'The path is not valid: path is longer than 1024 characters'],
  ['a non-finite amount', { op: 'increment', path: ['a'], value: Infinity }, 'INVALID_VALUE', 'The value is not valid: the amount must be a finite number'],
  ['a NaN amount', { op: 'decrement', path: ['a'], value: NaN }, 'INVALID_VALUE', 'The value is not valid: the amount must be a finite number'],
  ['a value key starting with "$"', { op: 'set', path: ['a'], value: { $where: 1 } }, 'INVALID_VALUE', 'The value is not valid: key "$where" at "a" starts with "$"'],
  ['a value key with "."', { op: 'push', path: ['a'], value: { 'x.y': 1 } }, 'INVALID_VALUE', 'The value is not valid: key "x.y" at "a" contains "."'],
  ['a negative insert index', { op: 'insert', path: ['a'], value: 1, index: -1 }, 'INDEX_OUT_OF_RANGE', 'The array index is out of range: index must be a non-negative integer'],
  ['a fractional insert index', { op: 'insert', path: ['a'], value: 1, index: 0.5 }, 'INDEX_OUT_OF_RANGE', 'The array index is out of range: index must be a non-negative integer'],
  ['an inserted value with a bad key', { op: 'insert', path: ['a'], value: { '': 1 }, index: 0 }, 'INVALID_VALUE', 'The value is not valid: key "" at "a" is empty'],
  ['update with an array', { op: 'update', value: [] as never }, 'INVALID_BODY', 'The request body is not valid: the content must be a JSON object'],
  ['update with a bad key deep inside', { op: 'update', value: { a: [{ $b: 1 }] } }, 'INVALID_VALUE', 'The value is not valid: key "$b" at "a.0" starts with "$"']
]

describe('validateOperation', () => {
  it.each(REFUSED)('refuses %s', (_name, operation, code, message) => {
    expect(refusal(() => validateOperation(operation))).toEqual({ code, message })
  })

  it.each(REFUSED)('applyOperation refuses %s the same way, changing nothing', (_name, operation, code, message) => {
    const doc = { a: [1], keep: true }
    expect(refusal(() => applyOperation(doc, operation))).toEqual({ code, message })
    expect(doc).toEqual({ a: [1], keep: true })
  })

  it('accepts ordinary operations, keys such as "constructor" included', () => {
    expect(() => validateOperation({ op: 'set', path: ['constructor', '0'], value: { toString: 1 } })).not.toThrow()
    expect(() => validateOperation({ op: 'update', value: { a: [1, { b: null }] } })).not.toThrow()
    expect(() => validateOperation({ op: 'insert', path: ['list'], value: null, index: 0 })).not.toThrow()
    expect(() => validateOperation({ op: 'decrement', path: ['a'], value: -2.5 })).not.toThrow()
  })
})

// A write's validation (the route's, `serialize`) makes the value's JSON, which the engine
// stores, and lets the text vouch that no string holds a lone surrogate (shared/json.ts).
describe('validateOperation for a write (serialize)', () => {
  it.each(REFUSED)('refuses %s the same way', (_name, operation, code, message) => {
    expect(refusal(() => validateOperation(operation, true))).toEqual({ code, message })
  })

  it.each([
    ['in a string', { op: 'set', path: ['a'], value: { b: ['ok', 'x\ud800'] } } as Operation, 'The value is not valid: "a.b.1" contains a lone surrogate (not valid Unicode)'],
    ['in a key', { op: 'push', path: ['a'], value: { ['k\udfff']: 1 } } as Operation, 'The value is not valid: key "k\\udfff" at "a" contains a lone surrogate (not valid Unicode)'],
    ['beside a backslash that spells \\ud', { op: 'update', value: { a: '\\ud83d', b: '\udc00' } } as Operation, 'The value is not valid: "b" contains a lone surrogate (not valid Unicode)']
  ])('refuses a lone surrogate %s', (_name, operation, message) => {
    expect(refusal(() => validateOperation(operation, true))).toEqual({ code: 'INVALID_VALUE', message })
  })

  it('refuses a value without JSON text (a BigInt, a cycle) as INVALID_VALUE, not a TypeError', () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(refusal(() => validateOperation({ op: 'set', path: ['a'], value: { n: 1n } as never }, true)).code).toBe('INVALID_VALUE')
    expect(refusal(() => validateOperation({ op: 'set', path: ['a'], value: cycle as never }, true)).code).toBe('INVALID_VALUE')
  })

  it('keeps the value\'s JSON for the engine, and accepts paired surrogates and a backslash before "ud"', () => {
    const value = { emoji: '🌍', ['k🌍']: ['\\ud800'], n: 1.5 }
    const operation: Operation = { op: 'set', path: ['a'], value }
    validateOperation(operation, true)
    expect(valueJsonOf(operation)).toBe(JSON.stringify(value))
    // Without a text of its own (validated without serialize, or not at all), one is made.
    const plain: Operation = { op: 'insert', path: ['a'], value: [1], index: 0 }
    validateOperation(plain)
    expect(valueJsonOf(plain)).toBe('[1]')
  })
})
