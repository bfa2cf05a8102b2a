// Bounded schemas (docs/design.md §13b, issue 26 finding 4): formats that cannot run in linear
// time refused at compile, every kept format right on ordinary and on ~1 MiB adversarial
// strings, uniqueItems by canonical keys (right, and doing linear work), and the static bounds
// on subschemas and on the work one value may cost. Outcomes only: no timing assertions.
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { ContentSchema } from '../../server/schema/content-schema.js'
import { PATTERN_BUDGET } from '../../server/schema/linear-regexp.js'
import { MAX_SUBSCHEMAS, WORK_PER_VALUE } from '../../server/schema/schema-cost.js'
import { canonicalKey } from '../../server/schema/unique-items.js'

const MiB = 1 << 20

function refusal (schema: unknown): string {
  try {
    ContentSchema.compile(schema)
  } catch (error) {
    expect(error).toBeInstanceOf(ContentdError)
    expect((error as ContentdError).code).toBe('INVALID_SCHEMA')
    return (error as ContentdError).message
  }
  throw new Error('the schema was accepted')
}

const formatSchema = (format: string) => ({ type: 'object', properties: { v: { type: 'string', format } } })
const valid = (schema: ContentSchema, v: unknown): boolean => schema.validate({ v } as never).length === 0

describe('formats', () => {
  it('refuses "url" at compile, naming it and where it is', () => {
    const message = refusal({ $defs: { link: { type: 'string', format: 'url' } }, properties: { home: { $ref: '#/$defs/link' } } })
    expect(message).toContain('format "url"')
    expect(message).toContain('#/$defs/link')
    expect(message).toContain('"uri"')
  })

  // ajv-formats' own test style: a table of valid and invalid strings per format.
  const examples: Record<string, { valid: string[], invalid: string[] }> = {
    date: { valid: ['2024-02-29', '1963-06-19'], invalid: ['2023-02-29', '1963-13-01', '06/19/1963', '2024-02-29x'] },
    time: { valid: ['08:30:06Z', '23:59:60Z', '08:30:06.283185+01:00'], invalid: ['08:30:06', '24:00:00Z', '8:30:06Z'] },
    'date-time': { valid: ['1963-06-19T08:30:06.283185Z', '1963-06-19t08:30:06z'], invalid: ['1963-06-19T08:30:06', '1963-06-19 08:30'] },
    'iso-time': { valid: ['08:30:06', '08:30:06Z'], invalid: ['8:30'] },
    'iso-date-time': { valid: ['1963-06-19T08:30:06', '1963-06-19 08:30:06Z'], invalid: ['1963-06-19'] },
    duration: { valid: ['P4DT12H30M5S', 'P1W', 'PT1S', 'P1Y2M'], invalid: ['P', 'PT', 'P1', 'PT1H2', 'P1W1D'] },
    uri: { valid: ['http://example.com/a?b#c', 'urn:isbn:0451450523', 'mailto:a@b.c'], invalid: ['//example.com', 'example', 'http://exa mple.com'] },
    'uri-reference': { valid: ['/a/b', '#frag', 'http://example.com'], invalid: ['\\\\WINDOWS', 'a b'] },
    'uri-template': { valid: ['http://example.com/{id}', '/a{?x,y}'], invalid: ['/a{', '/{a b}'] },
    email: { valid: ['joe.bloggs@example.com', 'a+b@c.io'], invalid: ['joe..bloggs@example.com', '@example.com', 'a@b@c.com', 'a@-b.com'] },
    hostname: { valid: ['www.example.com', 'xn--4gbwdl.xn--wgbh1c', 'a'], invalid: ['-a.com', 'a_b.com', `${'a'.repeat(64)}.com`, `${'a.'.repeat(127)}aa`] },
    ipv4: { valid: ['192.168.0.1', '0.0.0.0'], invalid: ['256.0.0.1', '1.2.3', '01.2.3.4.5'] },
    ipv6: { valid: ['::1', '2001:db8::8a2e:370:7334', '::ffff:192.0.2.1'], invalid: ['12345::', '1:2:3:4:5:6:7:8:9', ':::'] },
    regex: { valid: ['^[a-z]+$', '(a|b)*'], invalid: ['(', '[a-', 'a\\Z'] },
    uuid: { valid: ['2eb8aa08-aa98-11ea-b4aa-73b441d16380', 'urn:uuid:2eb8aa08-aa98-11ea-b4aa-73b441d16380'], invalid: ['2eb8aa08-aa98-11ea-b4aa-73b441d1638', '2eb8aa08aa9811eab4aa73b441d16380'] },
    'json-pointer': { valid: ['', '/a/b~0c/d~1e', '/'], invalid: ['a', '/a~2'] },
    'json-pointer-uri-fragment': { valid: ['#', '#/a/%25'], invalid: ['/a', '#/%zz'] },
    'relative-json-pointer': { valid: ['0', '1/a', '2#'], invalid: ['-1', '01', '/a'] },
    byte: { valid: ['', 'QUJD', 'QUI=', 'QQ=='], invalid: ['QUJ', 'Q===', '!!!!'] }
  }

  for (const [format, { valid: good, invalid: bad }] of Object.entries(examples)) {
    it(`checks "${format}" as ajv-formats does`, () => {
      const schema = ContentSchema.compile(formatSchema(format))
      for (const v of good) expect(valid(schema, v), `${format}: ${JSON.stringify(v)}`).toBe(true)
      for (const v of bad) expect(valid(schema, v), `${format}: ${JSON.stringify(v)}`).toBe(false)
    })
  }

  // Strings of about 1 MiB in the shapes that make each expression backtrack the most (a long
  // run of what one repetition accepts, ended by what none does); each must be answered.
  const n = MiB
  const adversarial: Record<string, Array<[string, boolean]>> = {
    date: [['1'.repeat(n), false]],
    time: [[`08:30:06.${'1'.repeat(n)}`, false], [`08:30:06.${'1'.repeat(n)}Z`, true]],
    'date-time': [[`1963-06-19T08:30:06.${'1'.repeat(n)}!`, false]],
    'iso-date-time': [[`1963-06-19T08:30:06.${'1'.repeat(n)}!`, false]],
    duration: [[`P${'1'.repeat(n)}`, false], [`PT${'1'.repeat(n)}S`, true]],
    uri: [[`http://${'a'.repeat(n)} `, false], [`http://${'a@'.repeat(n / 2)} `, false], [`a:${'a:'.repeat(n / 2)} `, false], [`http://${'%41'.repeat(n / 3)}@ `, false], [`http://x/${'a/'.repeat(n / 2)}`, true]],
    'uri-reference': [[`${'a'.repeat(n)}\\`, false], [`//${':'.repeat(n)}#\\`, false]],
    'uri-template': [[`${'{a}'.repeat(n / 3)}{`, false], [`{${'a,'.repeat(n / 2)}`, false]],
    email: [[`a@${'a'.repeat(n)}!`, false], [`${'a.'.repeat(n / 2)}@a`, false], [`a@${'a-'.repeat(n / 2)}.a`, false], [`a@${'a.'.repeat(n / 2)}a`, true]],
    hostname: [['a'.repeat(n), false], [`${'a.'.repeat(n / 2)}!`, false]],
    ipv4: [['1.'.repeat(n / 2), false]],
    ipv6: [['1:'.repeat(n / 2), false], [`::${'1'.repeat(n)}`, false]],
    regex: [['('.repeat(n), false], ['a'.repeat(n), true]],
    uuid: [['a-'.repeat(n / 2), false]],
    'json-pointer': [[`${'/a'.repeat(n / 2)}~`, false], [`/${'~0'.repeat(n / 2)}`, true]],
    'json-pointer-uri-fragment': [[`#${'/a'.repeat(n / 2)}%`, false]],
    'relative-json-pointer': [[`1${'/a'.repeat(n / 2)}~`, false]],
    byte: [[`${'QUJD'.repeat(n / 4)}!`, false], ['QUJD'.repeat(n / 4), true]]
  }
  for (const [format, cases] of Object.entries(adversarial)) {
    it(`answers "${format}" on ~1 MiB adversarial strings`, () => {
      const schema = ContentSchema.compile(formatSchema(format))
      for (const [v, expected] of cases) expect(valid(schema, v), `${format}: ${JSON.stringify(v.slice(0, 20))}…`).toBe(expected)
    })
  }
})

describe('uniqueItems', () => {
  const schema = ContentSchema.compile({ type: 'object', properties: { v: { type: 'array', uniqueItems: true } } })

  it.each<[string, unknown[], boolean]>([
    ['distinct scalars', [1, '1', true, null, 'a'], true],
    ['a repeated number, written differently', [1, 2, 1.0], false],
    ['objects equal up to member order', [{ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }], false],
    ['objects that differ in a nested value', [{ a: 1, b: [1, { c: 2 }] }, { a: 1, b: [1, { c: 3 }] }], true],
    ['arrays are ordered', [[1, 2], [2, 1]], true],
    ['equal arrays', [[1, [2]], [1, [2]]], false],
    ['a string is not the number it spells', [{ a: 1 }, { a: '1' }], true],
    ['member names that look like JSON', [{ 'a":1,"b': 2 }, { a: 1, b: 2 }], true],
    ['0 and -0', [0, -0], false]
  ])('%s', (_name, items, unique) => {
    const violations = schema.validate({ v: items } as never)
    expect(violations.length === 0).toBe(unique)
    if (!unique) expect(violations[0]?.message).toMatch(/^must NOT have duplicate items \(items ## \d+ and \d+ are identical\)$/)
  })

  it('keys equal JSON values alike and different ones apart', () => {
    expect(canonicalKey({ b: 1, a: [true, null] })).toBe(canonicalKey({ a: [true, null], b: 1 }))
    expect(canonicalKey({ a: 1 })).not.toBe(canonicalKey({ a: '1' }))
  })

  it('reads each item a bounded number of times, not once per pair', () => {
    // Each item is a Proxy counting the reads made on it: a pairwise comparison reads both
    // items of every pair (about n²/2 comparisons); canonical keys read each item once.
    const n = 2000
    let reads = 0
    const counting = (i: number): object => new Proxy({ id: i, tag: 'x' }, {
      get (target, key, receiver) { reads++; return Reflect.get(target, key, receiver) },
      ownKeys (target) { reads++; return Reflect.ownKeys(target) }
    })
    const items = Array.from({ length: n }, (_, i) => counting(i))
    expect(schema.validate({ v: items } as never)).toEqual([])
    expect(reads).toBeLessThan(20 * n)
  })
})

describe('compile and validation cost', () => {
  it(`refuses more than ${MAX_SUBSCHEMAS} subschemas (2,000 patternProperties), and accepts exactly that many`, () => {
    const patterns = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`^p${i}$`, { type: 'integer' }]))
    expect(refusal({ type: 'object', patternProperties: patterns(2000) })).toContain(`at most ${MAX_SUBSCHEMAS}`)
    const properties = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, {}]))
    // The root and its properties: MAX_SUBSCHEMAS schema objects in all.
    expect(() => ContentSchema.compile({ properties: properties(MAX_SUBSCHEMAS - 1) })).not.toThrow()
    expect(refusal({ properties: properties(MAX_SUBSCHEMAS) })).toContain(`has ${MAX_SUBSCHEMAS + 1} subschemas`)
  })

  it('refuses patternProperties that would test every key of an object against too many patterns', () => {
    const patterns = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`^p${i}$`, true]))
    // Each key is tested against every pattern (4 units each) and gets one subschema per pattern.
    const fitting = Math.floor(WORK_PER_VALUE / 5)
    expect(() => ContentSchema.compile({ type: 'object', patternProperties: patterns(fitting) })).not.toThrow()
    expect(refusal({ type: 'object', patternProperties: patterns(fitting + 1) })).toContain('costs too much to check on one value')
  })

  it('refuses objects below the root with more properties than one value may cost, not the root itself', () => {
    const properties = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, true]))
    expect(() => ContentSchema.compile({ properties: properties(500) })).not.toThrow()
    expect(refusal({ type: 'array', items: { properties: properties(500) } })).toContain('at depth 1')
  })

  it('refuses combinators that multiply: allOf of $refs, nested 30 deep (2^30 applications)', () => {
    const $defs: Record<string, unknown> = { a30: { minimum: 0 } }
    for (let i = 0; i < 30; i++) $defs[`a${i}`] = { allOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] }
    expect(refusal({ $defs, $ref: '#/$defs/a0' })).toContain('over a billion')
  })

  it('refuses $anchor references that multiply as well', () => {
    const $defs: Record<string, unknown> = { a30: { $anchor: 'a30', minimum: 0 } }
    for (let i = 0; i < 30; i++) $defs[`a${i}`] = { $anchor: `a${i}`, anyOf: [{ $ref: `#a${i + 1}` }, { $ref: `#a${i + 1}` }] }
    expect(refusal({ $defs, $ref: '#a0' })).toContain('costs too much')
  })

  it('refuses two branches each sending a member back to the root (2^depth applications down the document)', () => {
    const message = refusal({ allOf: [{ properties: { x: { $ref: '#' } } }, { properties: { x: { $ref: '#' } } }] })
    expect(message).toContain('costs too much to check on one value')
  })

  it('accepts the usual recursive and combined schemas', () => {
    const tree = { $defs: { node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['name'] } }, $ref: '#/$defs/node' }
    const compiled = ContentSchema.compile(tree)
    expect(compiled.validate({ name: 'a', children: [{ name: 'b', children: [{ name: 'c' } as never] }] } as never)).toEqual([])
    expect(compiled.validate({ name: 'a', children: [{ children: [] }] } as never)).toHaveLength(1)
    expect(() => ContentSchema.compile({ anyOf: [{ type: 'object', patternProperties: { '^x-': { type: 'string' } } }, { required: ['id'] }], if: { required: ['a'] }, then: { required: ['b'] } })).not.toThrow()
  })

  it('checks a short pattern on a 1 MiB string, and refuses a write whose pattern tests would pass the budget', () => {
    const plain = ContentSchema.compile({ type: 'object', properties: { v: { type: 'string', pattern: '^[^<>]*$' } } })
    expect(valid(plain, 'a'.repeat(MiB))).toBe(true)
    expect(valid(plain, `${'a'.repeat(MiB)}<`)).toBe(false)
    // 100 alternatives: V8's linear engine steps through each for every character.
    const pattern = `^(?:${Array.from({ length: 100 }, (_, i) => `a${i}`).join('|')}|a)*$`
    const wide = ContentSchema.compile({ type: 'object', properties: { v: { type: 'string', pattern } } })
    expect(valid(wide, 'a'.repeat(1000))).toBe(true)
    const length = Math.ceil(PATTERN_BUDGET / pattern.length) + 1
    const violations = wide.validate({ v: 'a'.repeat(length) } as never)
    expect(violations).toHaveLength(1)
    expect(violations[0]?.message).toContain('testing patterns on this content needs more than')
    // The budget is per check: the next write starts afresh.
    expect(valid(wide, 'a'.repeat(1000))).toBe(true)
  })

  it('shares the pattern budget among all the keys one check tests (patternProperties)', () => {
    const pattern = `^(?:${Array.from({ length: 20 }, (_, i) => `k${i}`).join('|')}|k|[0-9])*$`
    const schema = ContentSchema.compile({ type: 'object', patternProperties: { [pattern]: { type: 'integer' } } })
    const key = (i: number) => `k${String(i).padStart(700, '0')}`
    const few = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [key(i), 1]))
    expect(schema.validate(few as never)).toEqual([])
    const keys = Math.ceil(PATTERN_BUDGET / (pattern.length * key(0).length)) + 1
    const many = Object.fromEntries(Array.from({ length: keys }, (_, i) => [key(i), 1]))
    expect(schema.validate(many as never)[0]?.message).toContain('testing patterns on this content needs more than')
  })
})
