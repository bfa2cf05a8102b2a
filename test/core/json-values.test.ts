// The JSON value rules for written values (docs/design.md §3): assertWritableValue and helpers.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { assertWritableValue, isContainer, isPlainObject, MAX_VALUE_DEPTH, typeName } from '../../shared/json.js'
import { nestedArrays, nestedObjects, OWN_PROTO_KEY_VALUE } from '../cases/operation-cases.js'

function problemWith (value: unknown, at?: string[]): ContentdError | null {
  try {
    assertWritableValue(value, at)
    return null
  } catch (e) {
    if (e instanceof ContentdError) return e
    throw e
  }
}

describe('assertWritableValue accepts', () => {
  const FINE: Array<[string, unknown]> = [
    ['null', null], ['true', true], ['0', 0], ['-1.5', -1.5], ['max double', Number.MAX_VALUE], ['a string', 'x'],
    ['an empty string', ''], ['an empty object', {}], ['an empty array', []],
    ['nested containers', { a: [1, { b: null }], c: { d: 'e' } }],
    ['prototype-named keys', { constructor: 1, prototype: { toString: 2, hasOwnProperty: 3, valueOf: 4 } }],
    ['"$" after the start', { a$: 1, 'a$b': 2 }],
    ['a key of 768 bytes', { ['k'.repeat(768)]: 1 }],
    ['a key of 768 bytes in 192 emoji', { ['🌍'.repeat(192)]: 1 }],
    ['strings with any characters', { a: '\u0000$.__proto__' }],
    // Past what the quick walk takes on trust (shared/json.ts plainKey): the exact check decides.
    ['a key of 300 characters', { a: [{ ['k'.repeat(300)]: 1 }] }],
    ['strings with paired surrogates', { a: ['🌍', { b: 'x🌍y' }] }],
    ['an object without a prototype', Object.assign(Object.create(null) as object, { a: 1 })],
    [`${MAX_VALUE_DEPTH} levels of arrays`, nestedArrays(MAX_VALUE_DEPTH)],
    [`${MAX_VALUE_DEPTH} levels of objects`, nestedObjects(MAX_VALUE_DEPTH)]
  ]
  for (const [label, value] of FINE) {
    it(label, () => { expect(problemWith(value)).toBeNull() })
  }
})

describe('assertWritableValue rejects with INVALID_VALUE naming the place', () => {
  // [label, value, where it will live, words the message must contain]
  const BAD: Array<[string, unknown, string[], string]> = [
    ['a key with "."', { 'a.b': 1 }, [], 'key "a.b" at the value contains "."'],
    ['a key with "." below the target path', { x: { 'a.b': 1 } }, ['data', 'item'], 'key "a.b" at "data.item.x" contains "."'],
    ['a key starting with "$"', { list: [{ ok: 1 }, { $set: 1 }] }, ['v'], 'key "$set" at "v.list.1" starts with "$"'],
    ['an own "__proto__" key', OWN_PROTO_KEY_VALUE(), ['v'], 'key "__proto__" at "v" is "__proto__"'],
    ['a nested own "__proto__" key', JSON.parse('{"a":[{"__proto__":1}]}'), [], 'key "__proto__" at "a.0" is "__proto__"'],
    ['an empty key', { a: { '': 1 } }, [], 'key "" at "a" is empty'],
    ['a control character', { 'x\u0001': 1 }, [], 'contains a control character'],
    ['a C1 control character', { 'x\u0085': 1 }, [], 'contains a control character'],
    ['a key of 769 bytes', { ['k'.repeat(769)]: 1 }, [], 'is longer than 768 bytes'],
    ['a key of 772 bytes in 193 emoji', { ['🌍'.repeat(193)]: 1 }, [], 'is longer than 768 bytes'],
    [`${MAX_VALUE_DEPTH + 1} levels of arrays`, nestedArrays(MAX_VALUE_DEPTH + 1), [], `nests deeper than ${MAX_VALUE_DEPTH} levels`],
    [`${MAX_VALUE_DEPTH + 1} levels of objects`, nestedObjects(MAX_VALUE_DEPTH + 1), ['v'], `"v${'.k'.repeat(MAX_VALUE_DEPTH)}" nests deeper than ${MAX_VALUE_DEPTH} levels`],
    ['NaN', { a: NaN }, [], '"a" is not a finite number'],
    ['a lone surrogate in a nested string', { a: [{ b: 'x\ud800y' }] }, ['v'], '"v.a.0.b" contains a lone surrogate'],
    ['a lone surrogate in a key', { a: { ['k\udc00']: 1 } }, [], 'key "k\\udc00" at "a" contains a lone surrogate'],
    ['Infinity', [1, Infinity], [], '"1" is not a finite number'],
    ['undefined', { a: undefined }, [], '"a" is undefined, not JSON'],
    ['a function', { f: () => 1 }, [], '"f" is function, not JSON'],
    ['a bigint', { n: 1n }, [], '"n" is bigint, not JSON'],
    ['a symbol', Symbol('s'), [], 'the value is symbol, not JSON'],
    ['a Date', { d: new Date(0) }, [], '"d" is not a plain object'],
    ['a Map', new Map(), [], 'the value is not a plain object'],
    ['a class instance', { c: new (class Point { x = 1 })() }, [], '"c" is not a plain object']
  ]
  for (const [label, value, at, words] of BAD) {
    it(label, () => {
      const error = problemWith(value, at)
      expect(error?.code).toBe('INVALID_VALUE')
      expect(error?.status).toBe(400)
      expect(error?.message).toContain(words)
    })
  }

  it('survives hostile nesting far past the limit without exhausting the stack', () => {
    expect(problemWith(nestedArrays(100_000))?.code).toBe('INVALID_VALUE')
  })

  it('does not change the "at" array it was given', () => {
    const at = ['a', 'b']
    problemWith({ x: { $bad: 1 } }, at)
    expect(at).toEqual(['a', 'b'])
  })
})

// An independent oracle of the key rules, to compare with on random values.
// eslint-disable-next-line no-control-regex -- control characters are what the rule is about
const BAD_KEY = /^$|^\$|^__proto__$|\.|[\u0000-\u001f\u007f-\u009f]/
const keyIsBad = (key: string) => BAD_KEY.test(key) || Buffer.byteLength(key) > 768
function oracleAccepts (value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return true
  if (depth + 1 > MAX_VALUE_DEPTH) return false
  if (Array.isArray(value)) return value.every(item => oracleAccepts(item, depth + 1))
  return Object.entries(value).every(([key, item]) => !keyIsBad(key) && oracleAccepts(item, depth + 1))
}

describe('assertWritableValue agrees with an independent oracle', () => {
  it('on random JSON values with hostile keys', () => {
    const key = fc.oneof(
      fc.constantFrom('a', 'b', '', '.', 'a.b', '$x', 'x$', '__proto__', 'constructor', 'toString', '\u0000', '\u0085', 'k'.repeat(769), 'é'.repeat(384)),
      fc.string({ maxLength: 6 })
    )
    const { value } = fc.letrec(tie => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant(null), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 4 }), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      // JSON.parse makes "__proto__" an own key, as a request body would.
      object: fc.array(fc.tuple(key, tie('value')), { maxLength: 3 }).map(entries => JSON.parse(JSON.stringify(Object.fromEntries(entries))) as unknown)
    }))
    fc.assert(fc.property(value, v => {
      expect(problemWith(v) === null).toBe(oracleAccepts(v))
    }), { numRuns: 500, seed: 20251121 })
  })
})

describe('assertWritableValue given the value\'s JSON (shared/validate-operation.ts)', () => {
  it('answers as without it, lone surrogates in keys and strings included', () => {
    // Code units that make lone surrogates, pairs and backslashes before "ud" come up often.
    const text = fc.string({ unit: fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', '\\', 'u', 'd', 'a', '.', '$', '\u0085'), maxLength: 4 })
    const { value } = fc.letrec(tie => ({
      value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.integer(), text, tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      object: fc.array(fc.tuple(fc.oneof(text, fc.constantFrom('a', '$x', 'a.b', '\\ud800')), tie('value')), { maxLength: 3 })
        .map(entries => JSON.parse(JSON.stringify(Object.fromEntries(entries))) as unknown)
    }))
    let refused = 0
    fc.assert(fc.property(value, v => {
      const alone = problemWith(v)
      if (alone) refused += 1
      let withText: ContentdError | null = null
      try { assertWritableValue(v, [], JSON.stringify(v)) } catch (e) { withText = e as ContentdError }
      expect(withText?.message).toBe(alone?.message)
    }), { numRuns: 500, seed: 20261127 })
    // The property saw refusals, not only values that pass.
    expect(refused).toBeGreaterThan(10)
  })
})

describe('isPlainObject, isContainer, typeName', () => {
  it('tells plain objects from everything else', () => {
    expect(isPlainObject({})).toBe(true)
    expect(isPlainObject(Object.create(null))).toBe(true)
    expect(isPlainObject(OWN_PROTO_KEY_VALUE())).toBe(true)
    for (const other of [null, [], 'x', 1, new Date(), new Map(), Object.create({})]) expect(isPlainObject(other)).toBe(false)
  })

  it('counts arrays and plain objects as containers', () => {
    expect(isContainer([])).toBe(true)
    expect(isContainer({})).toBe(true)
    for (const other of [null, 'x', 1, true]) expect(isContainer(other)).toBe(false)
  })

  it('names JSON types for messages', () => {
    expect([null, [], {}, 'x', 1, true].map(typeName)).toEqual(['null', 'an array', 'an object', 'a string', 'a number', 'a boolean'])
  })
})
