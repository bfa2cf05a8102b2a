// The size of a value as the content limit counts it (docs/design.md §13b): the UTF-8 bytes of
// its JSON, exactly Buffer.byteLength(JSON.stringify(value)), measured by walking the value
// rather than by serializing it, and stopping early once past a cap, so that measuring a value
// that is too large costs no more than the limit it is measured against.
import type { Json } from './json.js'

// Characters JSON.stringify writes as themselves, one byte each: printable ASCII but `"` and `\`.
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

/** The UTF-8 bytes of JSON.stringify(text): the quotes, escapes, and lone surrogates as \uXXXX. */
export function stringJsonBytes (text: string): number {
  if (PLAIN_ASCII.test(text)) return text.length + 2
  let bytes = 2
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit === 0x22 || unit === 0x5c) bytes += 2
    else if (unit < 0x20) bytes += unit === 0x08 || unit === 0x09 || unit === 0x0a || unit === 0x0c || unit === 0x0d ? 2 : 6
    else if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0
      if (next >= 0xdc00 && next <= 0xdfff) { bytes += 4; i++ } else bytes += 6
    } else if (unit >= 0xdc00 && unit <= 0xdfff) bytes += 6
    else bytes += 3
  }
  return bytes
}

/** The bytes of a finite number's JSON (JSON.stringify and String agree on finite numbers). */
export function numberJsonBytes (value: number): number {
  return String(value).length
}

/**
 * The UTF-8 bytes of the value's JSON, exact when at most `cap`. Past `cap` the walk stops
 * and the result is some number above `cap`: the cost is bounded by the cap, not the value.
 */
export function jsonByteLength (value: Json, cap = Infinity): number {
  const counter = { bytes: 0, cap }
  count(value, counter)
  return counter.bytes
}

function count (value: Json, counter: { bytes: number, cap: number }): void {
  switch (typeof value) {
    case 'string':
      // A string is at least as many bytes as its length: a huge one is refused unread.
      counter.bytes += value.length + 2 > counter.cap - counter.bytes ? value.length + 2 : stringJsonBytes(value)
      return
    case 'number': counter.bytes += numberJsonBytes(value); return
    case 'boolean': counter.bytes += value ? 4 : 5; return
  }
  if (value === null) { counter.bytes += 4; return }
  if (Array.isArray(value)) {
    counter.bytes += value.length === 0 ? 2 : value.length + 1
    for (const item of value) {
      if (counter.bytes > counter.cap) return
      count(item, counter)
    }
    return
  }
  const keys = Object.keys(value)
  counter.bytes += keys.length === 0 ? 2 : keys.length + 1
  for (const key of keys) {
    if (counter.bytes > counter.cap) return
    counter.bytes += stringJsonBytes(key) + 1
    count(value[key] as Json, counter)
  }
}
