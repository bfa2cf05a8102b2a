// The CLI's input checks, worded for a terminal. The CLI validates with the same request
// schemas as the HTTP API (shared/schemas.ts), whose messages name body fields
// ("password must have at least 8 characters"); here the field becomes the flag or argument
// the operator typed ("--password must have at least 8 characters"). This file is the one
// place that knows which flag feeds which field.
import type { z } from 'zod'
import { isPlainObject, type JsonObject } from '../../shared/json.js'
import { UsageError } from './usage.js'

interface Term {
  /** How the command line names the field. */
  name: string
  /** Never echo the value back (it would land in terminal scrollback and logs). */
  secret?: boolean
}

/** Longer values are not echoed: the message would bury the problem. */
const ECHO_MAX_CHARS = 80

const TERM_BY_FIELD: Record<string, Term> = {
  username: { name: '@name' },
  password: { name: '--password', secret: true },
  slug: { name: 'the slug of @name/slug' },
  name: { name: '--name' },
  permission: { name: '--permission' },
  projects: { name: '--project' },
  expiresAt: { name: '--expires' },
  url: { name: 'URL' },
  paths: { name: '--path' },
  ops: { name: '--op' },
  description: { name: '--description' }
}

/**
 * Validates values gathered from a command's flags and arguments; a problem is a UsageError
 * (exit 2, with the command's usage line) naming the flag or argument.
 */
export function parseInput<S extends z.ZodType> (schema: S, input: Record<string, unknown>, command: string): z.output<S> {
  const result = schema.safeParse(input)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const field = typeof issue?.path[0] === 'string' ? issue.path[0] : ''
  const message = issue?.message ?? 'is not valid'
  const term = TERM_BY_FIELD[field]
  if (!term) throw new UsageError(message, command)
  // Schema messages start with the field's name; anything else is appended after a colon.
  const worded = message.startsWith(`${field} `) ? `${term.name}${message.slice(field.length)}` : `${term.name}: ${message}`
  const value = issue?.path.reduce<unknown>((at, key) => (at as Record<PropertyKey, unknown> | undefined)?.[key as PropertyKey], input)
  const shown = !term.secret && typeof value === 'string' && value.length <= ECHO_MAX_CHARS ? ` (got ${JSON.stringify(value)})` : ''
  throw new UsageError(worded + shown, command)
}

/** Parses a schema read from a file or stdin: any JSON (the schema check says what a schema is). */
export function parseJsonInput (text: string, source: string): unknown {
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new Error(`${source} is not valid JSON (${(e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ')})`)
  }
}

/** Parses what `contentd import` read from stdin: a JSON object. */
export function parseContentFromStdin (text: string): JsonObject {
  let content: unknown
  try {
    content = JSON.parse(text)
  } catch (e) {
    // V8's message quotes the start of the input, line breaks included: keep it one line.
    throw new Error(`stdin is not valid JSON (${(e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ')})`)
  }
  if (!isPlainObject(content)) {
    throw new Error(`stdin must hold a JSON object, not ${content === null ? 'null' : Array.isArray(content) ? 'an array' : `a ${typeof content}`}`)
  }
  return content as JsonObject
}
