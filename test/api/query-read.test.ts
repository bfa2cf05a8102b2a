// The one-shot live query read, GET …/content?path=P&orderBy=…&limit=… (docs/design.md §16):
// one row per request, every status it can answer, the order rules (JSON order, missing as
// null, ties by key with integer keys first, desc reversing ties too), bounds as JSON texts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey } from '../support/http.js'
import type { TestApp } from '../support/temp-app.js'
import { startContentApp, PROJECT, type ContentFixture } from './fixture.js'
import { ownerTarget, runScenario, type Scenario } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

type Row = Scenario<ContentFixture>

/** A read key narrowed to `board` (docs/design.md §12): it may query there only. */
let boardKey = ''

const BASE = {
  board: {
    ann: { score: 30 },
    bob: { score: 10 },
    cy: { score: 20 },
    dee: { score: 20 },
    '10': { score: 20 },
    '9': { score: 'high' },
    eve: {},
    fay: 'not an object',
    gus: { score: null },
    hal: { score: true }
  },
  chat: [{ text: 'a', at: 3 }, { text: 'b', at: 1 }, { text: 'c', at: 2 }],
  text: 'hello',
  count: 3
}

const q = (params: string) => `${PROJECT}/content?${params}`
const read = (name: string, url: string, expectBody: unknown): Row =>
  ({ name, method: 'GET', url, token: f => f.readKey, expectStatus: 200, expectBody })
const bad = (name: string, url: string, code = 'INVALID_QUERY', status = 400): Row =>
  ({ name, method: 'GET', url, token: f => f.readKey, expectStatus: status, expectCode: code })

const item = (key: string) => ({ key, value: (BASE.board as Record<string, unknown>)[key] })

const ROWS: Row[] = [
  read('top three scores, desc (ties by key reversed too)', q('path=board&orderBy=score&direction=desc&limit=3'),
    { version: 1, items: [item('9'), item('ann'), item('dee')] }),
  read('lowest scores asc: missing and non-objects are null, then false/true, numbers; ties by key, integer keys first', q('path=board&orderBy=score&limit=6'),
    { version: 1, items: [item('eve'), item('fay'), item('gus'), item('hal'), item('bob'), item('10')] }),
  read('startAt/endAt are inclusive JSON texts', q('path=board&orderBy=score&startAt=20&endAt=30&limit=10'),
    { version: 1, items: [item('10'), item('cy'), item('dee'), item('ann')] }),
  read('a string bound is quoted JSON', q('path=board&orderBy=score&startAt=%22a%22&limit=10'),
    { version: 1, items: [item('9')] }),
  read('orderBy key: integer keys first, as numbers', q('path=board&orderBy=key&limit=4'),
    { version: 1, items: [item('9'), item('10'), item('ann'), item('bob')] }),
  read('orderBy key with bounds', q('path=board&orderBy=key&startAt=%22bob%22&endAt=%22dee%22&limit=10'),
    { version: 1, items: [item('bob'), item('cy'), item('dee')] }),
  read('an array: keys are indexes; latest two by a child', q('path=chat&orderBy=at&direction=desc&limit=2'),
    { version: 1, items: [{ key: '0', value: { text: 'a', at: 3 } }, { key: '2', value: { text: 'c', at: 2 } }] }),
  read('orderBy value over an array', q('path=chat&orderBy=value&limit=1'),
    { version: 1, items: [{ key: '0', value: { text: 'a', at: 3 } }] }),
  read('a path where nothing is has no items', q('path=nothing.here&orderBy=key&limit=5'), { version: 1, items: [] }),
  { ...read('the owner session reads it too', q('path=chat&orderBy=key&limit=1'), { version: 1, items: [{ key: '0', value: { text: 'a', at: 3 } }] }), token: f => f.ownerSession },
  bad('a path holding a string', q('path=text&orderBy=key&limit=5')),
  bad('a path holding a number', q('path=count&orderBy=key&limit=5')),
  bad('no limit', q('path=board&orderBy=score')),
  bad('limit 0', q('path=board&orderBy=score&limit=0')),
  bad('limit 1001', q('path=board&orderBy=score&limit=1001')),
  bad('limit not canonical', q('path=board&orderBy=score&limit=05')),
  bad('limit given twice', q('path=board&orderBy=score&limit=5&limit=6')),
  bad('no orderBy', q('path=board&limit=5')),
  bad('an orderBy that is not a dot path', q('path=board&orderBy=a..b&limit=5')),
  bad('an unknown direction', q('path=board&orderBy=score&direction=up&limit=5')),
  bad('a bound that is not JSON', q('path=board&orderBy=score&startAt=abc&limit=5')),
  bad('an object bound', q('path=board&orderBy=score&startAt=%7B%7D&limit=5')),
  bad('a number bound with orderBy key', q('path=board&orderBy=key&startAt=3&limit=5')),
  bad('a query without a path', q('orderBy=score&limit=5')),
  bad('a bad path is INVALID_PATH', q('path=a..b&orderBy=score&limit=5'), 'INVALID_PATH'),
  { ...bad('401 without authentication', q('path=board&orderBy=score&limit=5'), 'AUTH_REQUIRED', 401), token: () => undefined },
  { ...bad('401 with a revoked key', q('path=board&orderBy=score&limit=5'), 'INVALID_TOKEN', 401), token: f => f.revokedKey },
  { ...bad('403 for a stranger', q('path=board&orderBy=score&limit=5'), 'FORBIDDEN', 403), token: f => f.strangerSession },
  { ...bad('403 for a key of another project', q('path=board&orderBy=score&limit=5'), 'KEY_PERMISSION_DENIED', 403), token: f => f.otherProjectKey },
  { ...read('a key narrowed to the path may query it', q('path=board&orderBy=score&direction=desc&limit=1'), { version: 1, items: [item('9')] }), token: () => boardKey },
  { ...bad('a key narrowed elsewhere is 403', q('path=chat&orderBy=key&limit=1'), 'KEY_SCOPE_DENIED', 403), token: () => boardKey },
  { ...bad('404 for an unknown project', '/api/@alice/nope/content?path=board&orderBy=score&limit=5', 'PROJECT_NOT_FOUND', 404) },
  {
    ...read('304 when If-None-Match names the version', q('path=board&orderBy=score&limit=5'), undefined),
    headers: (_f, version) => ({ 'if-none-match': `"${version}"` }),
    expectStatus: 304
  },
  {
    ...bad('412 when If-Match fails', q('path=board&orderBy=score&limit=5'), 'PRECONDITION_FAILED', 412),
    headers: () => ({ 'if-match': '"999"' })
  }
]

describe('one-shot query read (GET …/content?path=&orderBy=&limit=)', () => {
  let app: TestApp
  let fixture: ContentFixture
  beforeAll(async () => {
    ({ app, fixture } = await startContentApp())
    boardKey = (await createKey(app.url, fixture.ownerSession, { name: 'board only', permission: 'read', paths: ['board'] })).key
  })
  afterAll(async () => { await app.close() })

  const target = ownerTarget(() => app.url, () => fixture, BASE)
  for (const row of ROWS) {
    it(row.name, async () => {
      // The content is reset before each row: the version is the reset's, not 1.
      if (row.expectBody && typeof row.expectBody === 'object' && 'version' in row.expectBody) {
        const expected = row.expectBody as { version: number, items: unknown }
        const { expectBody: _ignored, ...rest } = row
        const r = await runScenario(target, rest)
        expect(r.body.items).toEqual(expected.items)
        expect(r.body.version).toBe(Number(JSON.parse(r.headers.get('etag') ?? 'null')))
        return
      }
      await runScenario(target, row)
    })
  }
})
