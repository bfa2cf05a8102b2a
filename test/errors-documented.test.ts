// Every code of the error catalogue (shared/errors.ts) is documented in docs/errors.md with
// its status, and docs/errors.md documents no code that does not exist.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ERRORS } from '../shared/errors.js'

const page = readFileSync(join(import.meta.dirname, '..', 'docs', 'errors.md'), 'utf8')
const start = page.indexOf('\n## The catalogue\n')
const end = page.indexOf('\n## ', start + 1)
const section = page.slice(start, end === -1 ? undefined : end)
const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)]
const documented = new Map<string, number>(rows.map(match => [match[1] as string, Number(match[2])]))

describe('error catalogue', () => {
  it('docs/errors.md has its catalogue table, each code once', () => {
    expect(start).toBeGreaterThan(-1)
    expect(rows.length).toBe(documented.size)
  })

  it.each(Object.entries(ERRORS))('%s is documented in docs/errors.md with its status', (code, { status }) => {
    expect(documented.get(code)).toBe(status)
  })

  it('docs/errors.md documents only codes that exist', () => {
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
