// Dot paths (docs/design.md §2). Shared by the server and clients, so that a client can reject a
// bad path before sending it and apply change events with exactly the server's rules.
import { ContentdError } from './errors.js'

export const MAX_PATH_LENGTH = 1024
export const MAX_PATH_SEGMENTS = 32
/** A segment names a key, and keys are at most this many UTF-8 bytes (docs/design.md §3). */
export const MAX_KEY_BYTES = 768

// C0 controls, DEL and C1 controls.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/
const CANONICAL_INDEX = /^(0|[1-9][0-9]*)$/

/** Why a single key or segment is not allowed, or null when it is fine. */
export function keyProblem (key: string): string | null {
  if (key.length === 0) return 'is empty'
  if (CONTROL_CHARACTER.test(key)) return 'contains a control character'
  if (key.startsWith('$')) return 'starts with "$"'
  if (key === '__proto__') return 'is "__proto__"'
  if (hasLoneSurrogate(key)) return 'contains a lone surrogate (not valid Unicode)'
  if (utf8ByteLength(key) > MAX_KEY_BYTES) return `is longer than ${MAX_KEY_BYTES} bytes`
  return null
}

/**
 * Splits and validates a dot path. Throws INVALID_PATH naming the first problem.
 * `a..b`, `.a`, `a.` and `""` are invalid; so are `$x`, `__proto__` and control characters.
 */
export function parsePath (path: unknown): string[] {
  if (typeof path !== 'string') throw new ContentdError('INVALID_PATH', 'path must be a string')
  if (path.length > MAX_PATH_LENGTH) throw new ContentdError('INVALID_PATH', `path is longer than ${MAX_PATH_LENGTH} characters`)
  const segments = path === '' ? [] : path.split('.')
  assertPathSegments(segments)
  return segments
}

/**
 * The rules of docs/design.md §2 for a path already split into segments (what operations, change
 * events and stores carry): 1 to 32 segments, each a valid key without ".", at most 1024
 * characters joined. Throws INVALID_PATH naming the first problem.
 */
export function assertPathSegments (segments: readonly string[]): void {
  if (segments.length === 0) throw new ContentdError('INVALID_PATH', 'path is empty')
  if (segments.length > MAX_PATH_SEGMENTS) throw new ContentdError('INVALID_PATH', `path has more than ${MAX_PATH_SEGMENTS} segments`)
  let length = segments.length - 1
  segments.forEach((segment, i) => {
    // Only a path given as segments can hold "."; joined, it would name two levels.
    const problem = typeof segment !== 'string' ? 'is not a string' : segment.includes('.') ? 'contains "."' : keyProblem(segment)
    if (problem) throw new ContentdError('INVALID_PATH', `segment ${i + 1} ${problem}`)
    length += segment.length
  })
  if (length > MAX_PATH_LENGTH) throw new ContentdError('INVALID_PATH', `path is longer than ${MAX_PATH_LENGTH} characters`)
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * True when a string holds a lone UTF-16 surrogate ("\ud800"): legal in JSON text, but not
 * Unicode, so it has no UTF-8 form. Refused in keys, path segments and string values on every
 * store (docs/design.md §3): MongoDB's driver would store U+FFFD instead, and two such keys
 * would collapse into one.
 */
export function hasLoneSurrogate (text: string): boolean {
  return LONE_SURROGATE.test(text)
}

/** True when a segment addresses an array element: `0`, `7`; never `07`, `-1`, `1e0`. */
export function isCanonicalIndex (segment: string): boolean {
  return CANONICAL_INDEX.test(segment) && segment.length <= 15
}

export function formatPath (segments: readonly string[]): string {
  return segments.join('.')
}

/** The segments of a dot path, without validating it; "" is the root (no segments). */
export function dotSegments (path: string): string[] {
  return path === '' ? [] : path.split('.')
}

/**
 * Whether `path` is at or below the dot path `scope`, segment by segment: `votes.a` and
 * `votes` are at or below `votes`; `votesX` and `vo` are not; everything is at or below ""
 * (the root). The one rule of a narrowed key's paths (docs/design.md §12) and a webhook's
 * path filter (§11).
 */
export function isAtOrBelow (path: readonly string[], scope: string): boolean {
  const prefix = dotSegments(scope)
  return prefix.length <= path.length && prefix.every((segment, i) => path[i] === segment)
}

/** UTF-8 length without Buffer, so this module runs in browsers too. */
export function utf8ByteLength (text: string): number {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) { bytes += 4; i++ } else bytes += 3
    } else bytes += 3
  }
  return bytes
}
