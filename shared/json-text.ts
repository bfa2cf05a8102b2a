// A written value's JSON found in the request's own text instead of made again (issue 35).
// A client that sends JSON.stringify's output (nearly every client) has already written, in
// its body, the very text the write stores: JSON.stringify of the parsed value is then a
// slice of the body. Proving it costs one regular expression over the body (about a quarter
// of the serialization, on the 100 KB `set` of the benchmark) and a length the value's check
// adds up as it walks (json.ts), and saves the serialization and its 100 KB text. Anything not proven exactly (whitespace, a
// backslash anywhere, a number not written as JSON.stringify writes it, a key that could be
// an array index, a repeated key) answers undefined, and the caller serializes as before.
import { numberLength } from './json.js'
import { hasLoneSurrogate } from './path.js'

/**
 * A whole text made only of tokens JSON.stringify writes, with nothing between them: strings
 * with no backslash or control character (JSON.stringify would escape those; lone surrogates
 * are ruled out for the whole text first), keys not starting with a digit (an array index key
 * would be moved first: a string starting with a digit must not be followed by ":"),
 * integers of at most 15 digits without a leading zero or "-0" (they print as written),
 * true, false, null and the punctuation. Sticky, so lastIndex tells how far it got. Each
 * string is read once (a key's alternative tried first and failing on a string value read
 * it twice: 124 against 76 µs on the benchmark's 100 KB body).
 */
// eslint-disable-next-line no-control-regex -- control characters are what the classes exclude
const STRINGIFY_TOKENS = /(?:[{}[\],]|"(?:[^"0-9\\\x00-\x1f][^"\\\x00-\x1f]*)?":?|"[0-9][^"\\\x00-\x1f]*"(?!:)|(?:0|-?[1-9][0-9]{0,14})(?![0-9.eE])|true|false|null)*/y

function onlyStringifyTokens (text: string): boolean {
  if (hasLoneSurrogate(text)) return false
  STRINGIFY_TOKENS.lastIndex = 0
  try {
    return STRINGIFY_TOKENS.exec(text) !== null && STRINGIFY_TOKENS.lastIndex === text.length
  } catch {
    // The expression's backtracking stack exhausted by a huge text: not proven, serialize.
    return false
  }
}

/**
 * The length of JSON.stringify(value), for a value whose strings and keys hold nothing it
 * escapes (a value parsed from a text onlyStringifyTokens accepts); -1 for anything that is
 * not JSON. The caller compares it with the text's own length, which proves there was no
 * repeated key (JSON.parse keeps one member of a repeated key, so its serialization is shorter).
 */
export function stringifiedLength (value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2
    case 'number':
      return Number.isFinite(value) ? numberLength(value) : 4
    case 'boolean':
      return value ? 4 : 5
    case 'object':
      break
    default:
      return -1
  }
  if (value === null) return 4
  let length = 2
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = stringifiedLength(value[i])
      if (item < 0) return -1
      length += item + (i > 0 ? 1 : 0)
    }
    return length
  }
  let first = true
  // for…in without Object.hasOwn (a fifth of the walk): JSON.parse makes plain objects, and
  // stringifiedWithin refuses to answer while Object.prototype has enumerable keys.
  for (const key in value) {
    const member = stringifiedLength((value as Record<string, unknown>)[key])
    if (member < 0) return -1
    length += key.length + 3 + member + (first ? 0 : 1)
    first = false
  }
  return length
}

/**
 * JSON.stringify(value) as a slice of `text`, or undefined when that is not proven. `body` is
 * JSON.parse(text); `value` is `body` itself (an update: the whole body is the content) or
 * one of its members (set, push, insert: `value`); `valueLength` is stringifiedLength(value),
 * which the caller may have already (json.ts writableStringifiedLength adds it up while it
 * checks the value). Proven when the text is made only of stringify's tokens and is exactly
 * as long as JSON.stringify(body) would be: then it IS that text, and the member's
 * serialization sits where the lengths before it say.
 */
export function stringifiedWithin (text: string, body: unknown, value: unknown, valueLength = stringifiedLength(value)): string | undefined {
  // A polluted Object.prototype: for…in would count its keys too (stringifiedLength).
  if (Object.keys(Object.prototype).length > 0) return undefined
  if (valueLength < 0) return undefined
  if (body === value) return valueLength === text.length && onlyStringifyTokens(text) ? text : undefined
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
  let length = 1
  let start = -1
  let end = -1
  let first = true
  for (const key in body) {
    const member = (body as Record<string, unknown>)[key]
    const memberLength = member === value ? valueLength : stringifiedLength(member)
    if (memberLength < 0) return undefined
    length += (first ? 0 : 1) + key.length + 3
    first = false
    if (member === value) {
      // The value must be found once: another member holding the same object would be ambiguous.
      if (start >= 0) return undefined
      start = length
      end = length + memberLength
    }
    length += memberLength
  }
  length += 1
  if (start < 0 || length !== text.length || !onlyStringifyTokens(text)) return undefined
  return text.slice(start, end)
}
