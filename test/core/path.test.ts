// Dot paths (docs/design.md §2): parsePath, isCanonicalIndex, keyProblem, utf8ByteLength.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { formatPath, isCanonicalIndex, keyProblem, MAX_KEY_BYTES, MAX_PATH_LENGTH, MAX_PATH_SEGMENTS, parsePath, utf8ByteLength } from '../../shared/path.js'

function pathError (path: unknown): ContentdError {
  try {
    parsePath(path)
  } catch (e) {
    if (e instanceof ContentdError) return e
    throw e
  }
  throw new Error(`parsePath(${JSON.stringify(path)}) did not throw`)
}

describe('parsePath', () => {
  const VALID: Array<[string, string[]]> = [
    ['a', ['a']],
    ['data.item.count', ['data', 'item', 'count']],
    ['list.0.name', ['list', '0', 'name']],
    ['07', ['07']],
    ['a$', ['a$']],
    ['constructor.prototype', ['constructor', 'prototype']],
    ['toString', ['toString']],
    ['__proto', ['__proto']],
    ['__proto__x', ['__proto__x']],
    ['with space', ['with space']],
    ['ключ.🌍', ['ключ', '🌍']],
    [Array(MAX_PATH_SEGMENTS).fill('a').join('.'), Array(MAX_PATH_SEGMENTS).fill('a')],
    ['x'.repeat(MAX_KEY_BYTES), ['x'.repeat(MAX_KEY_BYTES)]],
    [`${'p'.repeat(511)}.${'q'.repeat(512)}`, ['p'.repeat(511), 'q'.repeat(512)]]
  ]
  for (const [path, segments] of VALID) {
    it(`splits ${JSON.stringify(path.length > 40 ? path.slice(0, 40) + '…' : path)}`, () => {
      expect(parsePath(path)).toEqual(segments)
      expect(formatPath(parsePath(path))).toBe(path)
    })
  }

  // [path, a word the message must contain]
  const INVALID: Array<[unknown, string]> = [
    ['', 'empty'],
    ['a..b', 'segment 2 is empty'],
    ['.a', 'segment 1 is empty'],
    ['a.', 'segment 2 is empty'],
    ['.', 'empty'],
    ['$x', 'segment 1 starts with "$"'],
    ['a.$x', 'segment 2 starts with "$"'],
    ['__proto__', 'segment 1 is "__proto__"'],
    ['__proto__.x', 'segment 1 is "__proto__"'],
    ['a.__proto__', 'segment 2 is "__proto__"'],
    ['a\u0000b', 'control character'],
    ['a\nb', 'control character'],
    ['a\u001fb', 'control character'],
    ['a\u007fb', 'control character'],
    ['a\u009fb', 'control character'],
    [Array(MAX_PATH_SEGMENTS + 1).fill('a').join('.'), `more than ${MAX_PATH_SEGMENTS} segments`],
    [`${'p'.repeat(512)}.${'q'.repeat(512)}`, `longer than ${MAX_PATH_LENGTH} characters`],
    ['x'.repeat(MAX_KEY_BYTES + 1), `longer than ${MAX_KEY_BYTES} bytes`],
    ['é'.repeat(385), `longer than ${MAX_KEY_BYTES} bytes`],
    [5, 'must be a string'],
    [null, 'must be a string'],
    [undefined, 'must be a string'],
    [['a'], 'must be a string']
  ]
  for (const [path, words] of INVALID) {
    const label = typeof path === 'string' && path.length > 40 ? `${path.slice(0, 20)}… (${path.length} chars)` : JSON.stringify(path) ?? 'undefined'
    it(`rejects ${label} with INVALID_PATH (${words})`, () => {
      const error = pathError(path)
      expect(error.code).toBe('INVALID_PATH')
      expect(error.status).toBe(400)
      expect(error.message).toContain(words)
    })
  }

  it('accepts 1024 characters and 32 segments at once, rejects one more of either', () => {
    // 31 dots + 30 one-character segments + two long ones (481 + 482) = 1024 characters.
    const at32 = ['x'.repeat(481), 'y'.repeat(482), ...Array(30).fill('z')].join('.')
    expect(at32.length).toBe(1024)
    expect(parsePath(at32)).toHaveLength(32)
    expect(pathError(at32 + 'z').code).toBe('INVALID_PATH')
    expect(pathError(at32.slice(1) + '.z').code).toBe('INVALID_PATH')
  })

  it('round-trips any path made of valid segments', () => {
    const segment = fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' })
      .filter(s => !s.includes('.') && keyProblem(s) === null)
    fc.assert(fc.property(fc.array(segment, { minLength: 1, maxLength: MAX_PATH_SEGMENTS }), segments => {
      const path = formatPath(segments)
      if (path.length > MAX_PATH_LENGTH) return
      expect(parsePath(path)).toEqual(segments)
    }), { numRuns: 300, seed: 20251121 })
  })
})

describe('isCanonicalIndex', () => {
  for (const segment of ['0', '1', '7', '10', '42', '999999999999999']) {
    it(`"${segment}" is canonical`, () => { expect(isCanonicalIndex(segment)).toBe(true) })
  }
  // The 16-digit case: indexes beyond 15 digits exceed any array a 8 MiB document holds and
  // would lose precision near 2^53, so they are treated as invalid rather than out of range.
  for (const segment of ['', '07', '00', '-1', '-0', '+1', '1e0', '1.0', '0x1', ' 1', '1 ', 'x', 'length', '１', '1234567890123456']) {
    it(`${JSON.stringify(segment)} is not canonical`, () => { expect(isCanonicalIndex(segment)).toBe(false) })
  }

  it('agrees with String(Number(s)) === s for every short digit string', () => {
    fc.assert(fc.property(fc.stringMatching(/^-?[0-9]{1,15}$/), s => {
      const n = Number(s)
      expect(isCanonicalIndex(s)).toBe(Number.isSafeInteger(n) && n >= 0 && String(n) === s)
    }), { numRuns: 500, seed: 20251121 })
  })
})

describe('keyProblem', () => {
  const FINE = ['a', 'a$', 'a.b' /* "." is a path matter, checked by the value rules */, 'constructor', '__proto', ' ', '🌍', 'x'.repeat(MAX_KEY_BYTES), '€'.repeat(256)]
  for (const key of FINE) {
    it(`${JSON.stringify(key.slice(0, 20))} (${key.length} chars) is fine`, () => { expect(keyProblem(key)).toBeNull() })
  }
  const BAD: Array<[string, string]> = [
    ['', 'is empty'],
    ['$', 'starts with "$"'],
    ['$set', 'starts with "$"'],
    ['__proto__', 'is "__proto__"'],
    ['\u0000', 'contains a control character'],
    ['tab\there', 'contains a control character'],
    ['\u0085', 'contains a control character'],
    ['x'.repeat(MAX_KEY_BYTES + 1), `is longer than ${MAX_KEY_BYTES} bytes`],
    ['€'.repeat(257), `is longer than ${MAX_KEY_BYTES} bytes`],
    ['🌍'.repeat(193), `is longer than ${MAX_KEY_BYTES} bytes`]
  ]
  for (const [key, problem] of BAD) {
    it(`${JSON.stringify(key.slice(0, 20))} ${problem}`, () => { expect(keyProblem(key)).toBe(problem) })
  }
})

describe('utf8ByteLength', () => {
  const TABLE: Array<[string, number]> = [
    ['', 0], ['a', 1], ['\u007f', 1], ['\u0080', 2], ['é', 2], ['\u07ff', 2], ['\u0800', 3], ['€', 3], ['\uffff', 3],
    ['🌍', 4], ['a🌍b', 6],
    // Lone surrogates are encoded as U+FFFD (3 bytes) by Buffer and TextEncoder.
    ['\ud800', 3], ['\udc00', 3], ['\ud800a', 4], ['\udc00\ud800', 6]
  ]
  for (const [text, bytes] of TABLE) {
    it(`${JSON.stringify(text)} is ${bytes} bytes`, () => {
      expect(utf8ByteLength(text)).toBe(bytes)
      expect(Buffer.byteLength(text, 'utf8')).toBe(bytes)
    })
  }

  it('equals Buffer.byteLength for random strings, including lone surrogates', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 64 }), fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map(c => String.fromCharCode(c)), maxLength: 4 }), (text, surrogates) => {
      const mixed = text + surrogates + text
      expect(utf8ByteLength(mixed)).toBe(Buffer.byteLength(mixed, 'utf8'))
    }), { numRuns: 1000, seed: 20251121 })
  })
})
