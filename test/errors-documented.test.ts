// Every code of the error catalogue is documented in the README with its status, and the
// README documents no code that does not exist.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ERRORS } from '../shared/errors.js'

const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8')
const start = readme.indexOf('\n## Errors\n')
const section = readme.slice(start, readme.indexOf('\n## ', start + 1))
const documented = new Map<string, number>()
for (const match of section.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)) documented.set(match[1] as string, Number(match[2]))

describe('error catalogue', () => {
  it.each(Object.entries(ERRORS))('%s is documented in the README with its status', (code, { status }) => {
    expect(documented.get(code)).toBe(status)
  })

  it('the README documents only codes that exist', () => {
    expect([...documented.keys()].filter(code => !(code in ERRORS))).toEqual([])
  })

  it('each code has a status in the 4xx or 5xx range and a message', () => {
    for (const { status, message } of Object.values(ERRORS)) {
      expect(status).toBeGreaterThanOrEqual(400)
      expect(status).toBeLessThan(600)
      expect(message.length).toBeGreaterThan(0)
    }
  })
})
