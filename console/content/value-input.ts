// What the value editors type in, turned into JSON: the user picks a kind (string, number,
// true/false, null, or JSON for objects and arrays) and types text. Pure: tested in
// test/console/value-input.test.ts.
import type { Json } from '../../shared/client/index.js'

export type ValueKind = 'string' | 'number' | 'boolean' | 'null' | 'json'

export const VALUE_KINDS: ReadonlyArray<{ kind: ValueKind, label: string }> = [
  { kind: 'string', label: 'Text' },
  { kind: 'number', label: 'Number' },
  { kind: 'boolean', label: 'True/false' },
  { kind: 'null', label: 'Null' },
  { kind: 'json', label: 'JSON (object or array)' }
]

export function kindOf (value: Json): ValueKind {
  if (value === null) return 'null'
  if (typeof value === 'string') return 'string'
  if (typeof value === 'number') return 'number'
  if (typeof value === 'boolean') return 'boolean'
  return 'json'
}

/** The text an editor starts with for `value` shown as `kind`. */
export function textOf (value: Json, kind: ValueKind): string {
  if (kind === 'string') return typeof value === 'string' ? value : ''
  if (kind === 'number') return typeof value === 'number' ? String(value) : ''
  if (kind === 'boolean') return value === false ? 'false' : 'true'
  if (kind === 'null') return ''
  return typeof value === 'object' && value !== null ? JSON.stringify(value, null, 2) : '{}'
}

export type Parsed = { ok: true, value: Json } | { ok: false, message: string }

export function parseValue (kind: ValueKind, text: string): Parsed {
  switch (kind) {
    case 'string': return { ok: true, value: text }
    case 'null': return { ok: true, value: null }
    case 'boolean':
      if (text === 'true' || text === 'false') return { ok: true, value: text === 'true' }
      return { ok: false, message: 'Choose true or false' }
    case 'number': {
      const trimmed = text.trim()
      const number = Number(trimmed)
      if (trimmed === '' || !Number.isFinite(number)) return { ok: false, message: 'Enter a finite number, like 42 or -0.5' }
      return { ok: true, value: number }
    }
    case 'json': {
      try {
        return { ok: true, value: JSON.parse(text) as Json }
      } catch (e) {
        return { ok: false, message: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` }
      }
    }
  }
}

/** A one-line preview of a value, cut to `max` characters. */
export function preview (value: Json, max = 80): string {
  const text = JSON.stringify(value) ?? 'undefined'
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}
