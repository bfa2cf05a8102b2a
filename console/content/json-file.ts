// A project's content as a .json file: the name a download gets, and a chosen file's text
// read as content. Pure: test/console/pure.test.ts.
import type { JsonObject } from '../../shared/client/index.js'
import { isJsonObject, parseJsonText } from '../json-text.js'

/** "@alice/demo" at version 12 → "alice-demo-v12.json". */
export function exportFileName (project: string, version: number | undefined): string {
  return `${project.replace(/^@/, '').replace('/', '-')}${version === undefined ? '' : `-v${version}`}.json`
}

/** A chosen file's text as the project's new content: a JSON object, or why it cannot be. */
export function readImport (text: string): { ok: true, value: JsonObject } | { ok: false, message: string } {
  const parsed = parseJsonText(text)
  if (!parsed.ok) return parsed
  if (!isJsonObject(parsed.value)) return { ok: false, message: 'The file must hold a JSON object: { … }, the whole content of a project.' }
  return { ok: true, value: parsed.value }
}
