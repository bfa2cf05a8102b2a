// A written value's JSON found in the request's own text (shared/json-text.ts, issue 35): for
// any text JSON.parse accepts, stringifiedWithin answers either exactly JSON.stringify of the
// value (as the body's text or a slice of it) or undefined, never anything else; and for the
// text clients send, JSON.stringify's own output, it answers (the optimisation applies).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Json } from '../../shared/json.js'
import { writableStringifiedLength } from '../../shared/json.js'
import { stringifiedLength, stringifiedWithin } from '../../shared/json-text.js'

// Characters that make JSON.stringify differ from the text: quotes, backslashes, control
// characters, 2-, 3- and 4-byte characters, digits (array-index keys), "." and "$".
const text = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', '"', '\\', '/', '\n', '\u0000', '\u001f', '\u007f', '\u2028', 'é', '日', '🌍', '.', '$', '0', '7'), maxLength: 6 })
const key = fc.oneof(text, fc.constantFrom('0', '1', '10', '01', '-1', 'value', 'path', '__proto__'))
const number = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e15, 999999999999999, -999999999999999, 1e21, 0.1, 1.5e-7, 2 ** 53 + 2))
const { value } = fc.letrec(tie => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), number, text, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 4 })
})) as { value: fc.Arbitrary<Json> }

// How else the same value may be written: spaces, indentation, number spellings JSON.parse
// reads alike, an escaped character, a repeated key, members moved around.
const respell = fc.constantFrom<(json: string) => string>(
  json => json,
  json => JSON.stringify(JSON.parse(json), null, 1),
  json => ` ${json}\n`,
  json => json.replace(/:(-?\d+)([,}\]])/, ':$1.0$2'),
  json => json.replace(/:(-?[1-9]\d*)([,}\]])/, ':$1e0$2'),
  json => json.replace(/:0([,}\]])/, ':-0$1'),
  json => json.replace(/"a/, '"\\u0061'),
  json => json.replace(/\/"/, '\\/"'),
  json => json.replace(/^\{"([^"\\]+)":/, '{"$1":1,"$1":'),
  json => json.replace(/^\{/, '{"9":0,'),
  json => json.replace(/^\{/, '{"x":0,').replace(/\}$/, ',"x":1}')
)

/** The body a path operation sends, as a client might write it. */
const body = fc.record({ before: fc.dictionary(key, value, { maxKeys: 2 }), value, after: fc.dictionary(key, value, { maxKeys: 2 }) })
  .map(({ before, value, after }) => ({ ...before, path: 'a.b', value, ...after }))

describe('the value\'s JSON found in the body\'s text', () => {
  it('is JSON.stringify of the value, or not found, whatever the text', () => {
    fc.assert(fc.property(body, respell, (sent, spell) => {
      const bodyText = spell(JSON.stringify(sent))
      const parsed = JSON.parse(bodyText) as Record<string, Json>
      const found = stringifiedWithin(bodyText, parsed, parsed.value)
      if (found !== undefined) expect(found).toBe(JSON.stringify(parsed.value))
      const whole = stringifiedWithin(bodyText, parsed, parsed)
      if (whole !== undefined) expect(whole).toBe(JSON.stringify(parsed))
    }), { numRuns: 3000 })
  })

  it('is found in what JSON.stringify writes, when its keys are not indexes, its strings need no escape and its numbers are integers', () => {
    const plainText = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', '/', '\u007f', '\u2028', 'é', '日', '🌍', '.', '$', '0'), maxLength: 6 })
    const plainKey = plainText.filter(k => !/^[0-9]/.test(k))
    const { plain } = fc.letrec(tie => ({
      plain: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), plainText, tie('array'), tie('object')),
      array: fc.array(tie('plain'), { maxLength: 4 }),
      object: fc.dictionary(plainKey, tie('plain'), { maxKeys: 4 })
    })) as { plain: fc.Arbitrary<Json> }
    fc.assert(fc.property(plain, fc.boolean(), (value, valueFirst) => {
      const sent = valueFirst ? { value, path: 'x' } : { path: 'x', value, index: 3 }
      const bodyText = JSON.stringify(sent)
      const parsed = JSON.parse(bodyText) as Record<string, Json>
      // A value equal to another member (path "x" and value "x", index 3 and value 3) is ambiguous.
      if (Object.entries(parsed).some(([k, v]) => k !== 'value' && v === parsed.value)) return
      expect(stringifiedWithin(bodyText, parsed, parsed.value)).toBe(JSON.stringify(value))
      expect(stringifiedWithin(bodyText, parsed, parsed)).toBe(bodyText)
    }), { numRuns: 2000 })
  })

  it('is not found where JSON.stringify would write otherwise', () => {
    const notFound = (bodyText: string) => {
      const parsed = JSON.parse(bodyText) as Record<string, Json>
      expect(stringifiedWithin(bodyText, parsed, parsed.value), bodyText).toBeUndefined()
    }
    notFound('{"path":"a","value":{"b":1,"b":2}}')
    notFound('{"path":"a","value":{"b":1,"1":2}}')
    notFound('{"path":"a","value":[1.0]}')
    notFound('{"path":"a","value":[-0]}')
    notFound('{"path":"a","value":[1e3]}')
    notFound('{"path":"a","value":[1234567890123456789]}')
    notFound('{"path":"a","value":["\\u0041"]}')
    notFound('{"path":"a", "value":[1]}')
    notFound('{"path":"a","value":[1],"value":[2]}')
    notFound('{"path":"x","value":"x"}')
  })

  it('measures what JSON.stringify writes for values needing no escape', () => {
    fc.assert(fc.property(value, v => {
      const json = JSON.stringify(v)
      // Escapes make the text longer than the measure; so do lone surrogates.
      if (!json.includes('\\')) expect(stringifiedLength(v)).toBe(json.length)
    }), { numRuns: 3000 })
    // The value check adds the same up while it walks (json.ts), for values it accepts.
    fc.assert(fc.property(value, v => {
      const json = JSON.stringify(v)
      if (json.includes('\\')) return
      let length: number
      try {
        length = writableStringifiedLength(v)
      } catch {
        return
      }
      if (length >= 0) expect(length).toBe(json.length)
    }), { numRuns: 3000 })
    expect(writableStringifiedLength({ items: [{ id: 12, name: 'a b', tags: ['x'], ok: true, none: null }], n: -3 })).toBe(JSON.stringify({ items: [{ id: 12, name: 'a b', tags: ['x'], ok: true, none: null }], n: -3 }).length)
    expect(stringifiedLength(undefined)).toBe(-1)
    expect(stringifiedLength({ f: () => 1 })).toBe(-1)
  })
})
