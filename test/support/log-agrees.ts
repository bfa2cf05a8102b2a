// The store's own consistency check, over HTTP (docs/design.md §9): the whole change log,
// page by page, agrees with the content: versions 1..current, one entry each, in order; the
// last entry's version is the content's; replayed over {} they give exactly the content, so
// nothing is in one only. Needs HISTORY_LIMIT=0 (the whole log kept).
import { expect } from 'vitest'
import { applyContentOperation } from '../../shared/compound.js'
import { operationOfChange, type ChangeEntry } from '../../shared/events.js'
import type { JsonObject } from '../../shared/json.js'
import { call } from './http.js'

export async function expectLogAgrees (url: string, token: string, path: string, label: string): Promise<void> {
  const now = await call(url, 'GET', `${path}/content`, { token })
  expect(now.status).toBe(200)
  const version = Number(JSON.parse(now.headers.get('etag') as string))
  const entries: ChangeEntry[] = []
  for (let more = true; more;) {
    const page = await call(url, 'GET', `${path}/content/changes?since=${entries.length}&limit=1000`, { token })
    expect(page.status, page.text).toBe(200)
    entries.push(...page.body.changes as ChangeEntry[])
    more = page.body.more as boolean
  }
  expect(entries.map(entry => entry.version), `${label}: one entry per version`).toEqual(Array.from({ length: version }, (_, i) => i + 1))
  let replayed: JsonObject = {}
  for (const entry of entries) replayed = applyContentOperation(replayed, operationOfChange(entry))
  expect(replayed, `${label}: the log replayed is the content`).toEqual(now.body)
  console.log(`${label}: change log and content agree at version ${version}`)
}
