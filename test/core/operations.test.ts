// The canonical case table against the pure core: exact content on success, exact code and
// an untouched document on failure. Then getAt, which the table does not cover.
import { describe, expect, it } from 'vitest'
import { ContentdError, ERRORS, type ErrorCode } from '../../shared/errors.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { applyOperation, getAt, OPERATION_NAMES } from '../../shared/operations.js'
import { parsePath } from '../../shared/path.js'
import { isSameJson, OPERATION_CASES, toOperation, type OperationCase } from '../cases/operation-cases.js'

/** Runs a function expected to throw a ContentdError and returns its code. */
function codeOf (run: () => unknown): ErrorCode {
  let caught: unknown
  try { run() } catch (e) { caught = e }
  expect(caught, 'expected a ContentdError to be thrown').toBeInstanceOf(ContentdError)
  return (caught as ContentdError).code
}

function run (c: OperationCase): { doc: JsonObject, result: () => JsonObject } {
  const doc = structuredClone(c.before)
  return { doc, result: () => applyOperation(doc, toOperation(c)) }
}

describe('the operation case table', () => {
  it('has unique names', () => {
    const names = OPERATION_CASES.map(c => c.name)
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([])
  })

  it('covers every operation with successes and failures, using catalogued codes only', () => {
    for (const op of OPERATION_NAMES) {
      const ofOp = OPERATION_CASES.filter(c => c.operation.op === op)
      expect(ofOp.some(c => 'content' in c.expect), `${op} success`).toBe(true)
      expect(ofOp.some(c => 'code' in c.expect), `${op} failure`).toBe(true)
    }
    for (const c of OPERATION_CASES) {
      if ('code' in c.expect) expect(Object.keys(ERRORS)).toContain(c.expect.code)
    }
  })
})

describe('isSameJson (the comparison the runners rely on)', () => {
  const SAME: Array<[unknown, unknown]> = [[1, 1], [0, -0], [null, null], [{ a: 1, b: 2 }, { b: 2, a: 1 }], [[1, [2]], [1, [2]]], [{ constructor: { prototype: 1 } }, { constructor: { prototype: 1 } }]]
  const DIFFERENT: Array<[unknown, unknown]> = [[1, '1'], [null, {}], [[], {}], [{}, []], [{ a: 1 }, { a: 1, b: undefined }], [{ a: undefined }, {}], [[1, 2], [1]], [Object.create(null), {}], [{ a: { b: 1 } }, { a: { b: 2 } }]]
  for (const [a, b] of SAME) it(`same: ${JSON.stringify(a)}`, () => { expect(isSameJson(a, b)).toBe(true) })
  for (const [a, b] of DIFFERENT) it(`different: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`, () => { expect(isSameJson(a, b)).toBe(false) })
})

describe('applyOperation over the case table', () => {
  for (const c of OPERATION_CASES) {
    it(c.name, () => {
      const { doc, result } = run(c)
      if ('content' in c.expect) {
        const after = result()
        expect(after).toEqual(c.expect.content)
        expect(isSameJson(after, c.expect.content)).toBe(true)
        // Path operations change the document in place; update returns the new content.
        if (c.operation.op !== 'update') expect(after).toBe(doc)
      } else {
        expect(codeOf(result)).toBe(c.expect.code)
        expect(doc).toEqual(c.before)
        expect(isSameJson(doc, c.before)).toBe(true)
        expect(JSON.stringify(doc)).toBe(JSON.stringify(c.before))
      }
    })
  }

  it('does not share the written value with the table (runners can replay it)', () => {
    const c = OPERATION_CASES.find(k => k.name === 'push: an array is pushed as one element') as OperationCase
    const { result } = run(c)
    const after = result()
    ;((after.a as Json[])[1] as Json[]).push('mutated')
    expect(c.operation.value).toEqual([2, 3])
    expect(c.before).toEqual({ a: [1] })
  })
})

describe('getAt', () => {
  const doc: JsonObject = {
    data: { item: { count: 5 } },
    list: [10, { name: 'x' }, null],
    text: 'hello',
    nothing: null,
    constructor: { prototype: 'data' }
  }
  const get = (path: string): Json => getAt(doc, parsePath(path))

  const FOUND: Array<[string, Json]> = [
    ['data.item.count', 5],
    ['data.item', { count: 5 }],
    ['data', { item: { count: 5 } }],
    ['list.0', 10],
    ['list.1.name', 'x'],
    ['list.2', null],
    ['nothing', null],
    ['text', 'hello'],
    ['constructor.prototype', 'data']
  ]
  for (const [path, value] of FOUND) {
    it(`finds "${path}"`, () => { expect(get(path)).toStrictEqual(value) })
  }

  const NOT_FOUND = [
    'missing', 'data.missing', 'data.item.count.deeper', 'text.length', 'nothing.x',
    'list.3', 'list.99', 'list.0.x', 'toString', 'data.hasOwnProperty', 'valueOf'
  ]
  for (const path of NOT_FOUND) {
    it(`"${path}" is PATH_NOT_FOUND`, () => { expect(codeOf(() => get(path))).toBe('PATH_NOT_FOUND') })
  }

  for (const path of ['list.07', 'list.-1', 'list.1e0', 'list.x', 'list.length']) {
    it(`"${path}" is INVALID_ARRAY_INDEX`, () => { expect(codeOf(() => get(path))).toBe('INVALID_ARRAY_INDEX') })
  }

  it('returns the stored value itself, not a copy (callers serialize it)', () => {
    expect(get('data')).toBe(doc.data)
  })
})
