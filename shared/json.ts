// The JSON value model of project content, and the rules every written value obeys
// (docs/design.md §3): nesting at most 64 levels, keys 1-768 UTF-8 bytes without ".", without a
// leading "$", not "__proto__", no control characters; no lone surrogates in keys or strings.
import { ContentdError } from './errors.js'
import { hasLoneSurrogate, keyProblem, MAX_KEY_BYTES } from './path.js'

export type Json = null | boolean | number | string | Json[] | JsonObject
export interface JsonObject { [key: string]: Json }
export type JsonContainer = Json[] | JsonObject

export const MAX_VALUE_DEPTH = 64

export function isPlainObject (value: unknown): value is JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}

export function isContainer (value: unknown): value is JsonContainer {
  return Array.isArray(value) || isPlainObject(value)
}

export function typeName (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  return `a ${typeof value}`
}

/**
 * Checks a value about to be written. `at` is where it will live, for messages that name
 * the offending key's path. Depth counts containers: `1` is 0 levels, `{"a":[]}` is 2.
 * Stops descending past the limit, so hostile nesting cannot exhaust the stack.
 * `json`: JSON.stringify(value), when the caller made it anyway. It writes a lone surrogate,
 * in a key or a string, as an escape (\ud800), a pair as itself and a backslash as \\, so a
 * text without \ud proves there is no lone surrogate anywhere, and the strings need not be
 * read one by one. `escapeFree`: the caller knows the same without a text of its own (the
 * value was parsed from UTF-8 JSON holding no \u escape, server/http/body.ts).
 */
export function assertWritableValue (value: unknown, at: readonly string[] = [], json?: string, escapeFree = false): asserts value is Json {
  // The common case, a value that obeys every rule, answered without building paths; only
  // a value it doubts is walked again by check, which names the first problem's path.
  if (writable(value, 0, !escapeFree && (json === undefined || json.includes('\\ud'))) >= 0) return
  check(value, [...at], 0)
}

/**
 * assertWritableValue for a value parsed from UTF-8 JSON text without any backslash (so no
 * string or key holds a lone surrogate or anything JSON.stringify escapes), which also
 * answers the length of JSON.stringify(value), added up during the same walk (the request's
 * text may hold that serialization, shared/json-text.ts); -1 when the quick walk doubted and
 * the exact check passed.
 */
export function writableStringifiedLength (value: unknown, at: readonly string[] = []): number {
  const length = writable(value, 0, false)
  if (length >= 0) return length
  check(value, [...at], 0)
  return -1
}

/**
 * Keys plainKey accepted lately, so a key that comes back (the same members in record after
 * record) is not read again: in the server's profile of a 100 KB `set` of 1,280 records the
 * character loop was about half of the walk (V8 left its `charCodeAt` to a generic load IC
 * there). Whether a key passes is a property of the key alone; a key checked with
 * `surrogates` false passed because the caller proved no string of the value, keys included,
 * holds a lone surrogate. Bounded: emptied when full, so content with ever-new keys (a map
 * keyed by ids) costs one lookup and one insertion more per key, and the memory stays small
 * (plainKey takes at most 256 UTF-16 units).
 */
const knownKeys = new Set<string>()
const KNOWN_KEYS_KEPT = 4096

function knownKey (key: string, surrogates: boolean): boolean {
  if (knownKeys.has(key)) return true
  if (!plainKey(key, surrogates)) return false
  if (knownKeys.size >= KNOWN_KEYS_KEPT) knownKeys.clear()
  knownKeys.add(key)
  return true
}

/**
 * At least 0 only when check would accept the value; -1 when it would refuse it or when in
 * doubt (check then decides). One walk over the value that allocates no path strings (an
 * array element's index was a new string each) and tests keys and strings with one loop over
 * their characters instead of two to four regular expressions: validation was about a fifth
 * of the server's CPU for a 100 KB `set` (BENCHMARKS.md, issue 35). What it answers is the
 * length of JSON.stringify(value) when no string or key needs an escape
 * (writableStringifiedLength), added up on the way at the cost of a few additions.
 */
// `surrogates`: lone surrogates are possible (no JSON text proved otherwise).
function writable (value: unknown, depth: number, surrogates: boolean): number {
  switch (typeof value) {
    case 'string':
      return !surrogates || !hasSurrogate(value) || !hasLoneSurrogate(value) ? value.length + 2 : -1
    case 'boolean':
      return value ? 4 : 5
    case 'number':
      return Number.isFinite(value) ? numberLength(value) : -1
    case 'object':
      break
    default:
      return -1
  }
  if (value === null) return 4
  if (depth + 1 > MAX_VALUE_DEPTH) return -1
  let length = 1
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = writable(value[i], depth + 1, surrogates)
      if (item < 0) return -1
      length += item + 1
    }
    return value.length === 0 ? 2 : length
  }
  if (!isPlainObject(value)) return -1
  // for…in, not Object.keys: no array per object, and V8 reads value[key] through the
  // object's enum cache (about a fifth faster here). It also visits inherited enumerable keys
  // (a polluted Object.prototype): checking more keys can only make the answer "doubt", and
  // json-text.ts uses no length while Object.prototype has such keys.
  let members = 0
  for (const key in value) {
    if (!knownKey(key, surrogates)) return -1
    const member = writable(value[key], depth + 1, surrogates)
    if (member < 0) return -1
    length += key.length + 4 + member
    members++
  }
  return members === 0 ? 2 : length
}

/** JSON.stringify(value).length for a finite number: an integer below 10^15 without making its text. */
export function numberLength (value: number): number {
  if (!Number.isInteger(value) || value >= 1e15 || value <= -1e15) return String(value).length
  let length = value < 0 ? 2 : 1
  for (let rest = Math.abs(value); rest >= 10; rest = Math.floor(rest / 10)) length++
  return length
}

/** Surrogates, paired or not (rare in content): only then the exact lone-surrogate test runs. */
function hasSurrogate (text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdfff) return true
  }
  return false
}

/**
 * A key keyProblem certainly accepts, without "." (path.ts's rules): not empty, no leading
 * "$", not "__proto__", no control character and no surrogate (unless `surrogates` is false:
 * none is lone), and short enough that its UTF-8 form (at most 3 bytes per UTF-16 unit, a
 * surrogate pair 4 for 2) fits MAX_KEY_BYTES. Anything else: false.
 */
function plainKey (key: string, surrogates: boolean): boolean {
  const length = key.length
  if (length === 0 || length * 3 > MAX_KEY_BYTES || key.charCodeAt(0) === 0x24 || key === '__proto__') return false
  for (let i = 0; i < length; i++) {
    const unit = key.charCodeAt(i)
    if (unit < 0x20 || unit === 0x2e || (unit >= 0x7f && unit <= 0x9f) || (surrogates && unit >= 0xd800 && unit <= 0xdfff)) return false
  }
  return true
}

function check (value: unknown, at: string[], depth: number): void {
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) throw new ContentdError('INVALID_VALUE', `${describe(at)} contains a lone surrogate (not valid Unicode)`)
      return
    case 'boolean':
      return
    case 'number':
      if (!Number.isFinite(value)) throw new ContentdError('INVALID_VALUE', `${describe(at)} is not a finite number`)
      return
    case 'object':
      break
    default:
      throw new ContentdError('INVALID_VALUE', `${describe(at)} is ${typeof value}, not JSON`)
  }
  if (value === null) return
  if (depth + 1 > MAX_VALUE_DEPTH) {
    throw new ContentdError('INVALID_VALUE', `${describe(at)} nests deeper than ${MAX_VALUE_DEPTH} levels`)
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      at.push(String(i)); check(value[i], at, depth + 1); at.pop()
    }
    return
  }
  if (!isPlainObject(value)) throw new ContentdError('INVALID_VALUE', `${describe(at)} is not a plain object`)
  for (const key of Object.keys(value)) {
    const problem = key.includes('.') ? 'contains "."' : keyProblem(key)
    if (problem) throw new ContentdError('INVALID_VALUE', `key ${JSON.stringify(key)} at ${describe(at)} ${problem}`)
    at.push(key); check(value[key], at, depth + 1); at.pop()
  }
}

function describe (at: readonly string[]): string {
  return at.length === 0 ? 'the value' : `"${at.join('.')}"`
}
