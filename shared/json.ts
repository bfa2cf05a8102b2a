// The JSON value model of project content, and the rules every written value obeys
// (docs/design.md §3): nesting at most 64 levels, keys 1-768 UTF-8 bytes without ".", without a
// leading "$", not "__proto__", no control characters; no lone surrogates in keys or strings.
import { ContentdError } from './errors.js'
import { hasLoneSurrogate, keyProblem } from './path.js'

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
 */
export function assertWritableValue (value: unknown, at: readonly string[] = []): asserts value is Json {
  check(value, [...at], 0)
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
