// JSON typed by people (the content's JSON tab, the schema editor): parsed with the place of a
// syntax error, and printed the way the editors show it. Pure: test/console/pure.test.ts.
import type { Json, JsonObject } from '../shared/client/index.js'

export type Parsed = { ok: true, value: Json } | { ok: false, message: string }

export function pretty (value: Json | undefined): string {
  return JSON.stringify(value ?? {}, null, 2)
}

/**
 * "Unexpected token } in JSON at position 12" → the line and column of that position, said
 * once: newer engines (Chromium 120+, Node 22+) already end the message with
 * "(line 3 column 1)", which is dropped for ours, so every browser shows the same text.
 */
export function locate (text: string, message: string): string {
  const position = /position (\d+)/.exec(message)
  if (!position) return message
  message = message.replace(/\s*\(line \d+ column \d+\)$/, '')
  const before = text.slice(0, Number(position[1]))
  const line = before.split('\n').length
  const column = before.length - before.lastIndexOf('\n')
  return `${message} (line ${line}, column ${column})`
}

export function parseJsonText (text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) as Json }
  } catch (e) {
    return { ok: false, message: `Not valid JSON: ${locate(text, e instanceof Error ? e.message : String(e))}` }
  }
}

export function isJsonObject (value: Json): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
