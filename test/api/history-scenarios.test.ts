// The change log over HTTP (docs/design.md §9): GET …/content/changes, GET …/content?version=N
// and POST …/content/revert, every status code as scenario rows; then what the answers hold
// (entries with their actor, past contents, a revert as one new change).
//
// The app keeps HISTORY_LIMIT = 40 entries and starts past version 41, so version 0 is
// already beyond retention. Each row runs on a fresh version (the runner resets the content),
// so rows name versions relative to the one before the request, `v`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { startContentApp, PROJECT, type ContentFixture } from './fixture.js'
import { ownerTarget, runScenario, type Scenario } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

type Row = Scenario<ContentFixture>

const LIMIT = 40
const BASE = { data: { count: 5, list: [1, 2] } }
const content = `${PROJECT}/content`
const changes = (query: string) => (_f: ContentFixture, v: number) => `${content}/changes${query.replaceAll('{v}', String(v))}`
const atVersion = (offset: number) => (_f: ContentFixture, v: number) => `${content}?version=${v + offset}`

/** The entry of the runner's reset: the owner replaced the content with BASE. */
const resetEntry = { project: '@alice/demo', version: expect.any(Number), op: 'update', value: BASE, at: expect.any(String), actor: { type: 'user', name: '@alice' } }

const NOT_CANONICAL = ['07', '-1', '1.5', '1e1', '+1', '%201', 'x', '', '0x10', '9007199254740993']

const CHANGES: Row[] = [
  { name: '200 with a read key: the entries after since, ascending', method: 'GET', url: changes('?since={v}'), token: f => f.readKey, expectStatus: 200, expectBody: { version: expect.any(Number), changes: [], more: false }, expectHeaders: { 'content-type': /^application\/json/ } },
  { name: '200 since = v − 1: the reset, as its entry with the actor', method: 'GET', url: (_f, v) => `${content}/changes?since=${v - 1}`, token: f => f.readKey, expectStatus: 200, expectBody: { version: expect.any(Number), changes: [resetEntry], more: false } },
  { name: '200 for a viewer', method: 'GET', url: changes('?since={v}'), token: f => f.viewerSession, expectStatus: 200 },
  { name: '200 for the owner session and a write key', method: 'GET', url: changes('?since={v}'), token: f => f.writeKey, expectStatus: 200 },
  { name: '200 limit=1 pages: one entry, more: true', method: 'GET', url: (_f, v) => `${content}/changes?since=${v - 3}&limit=1`, token: f => f.readKey, expectStatus: 200, expectBody: { version: expect.any(Number), changes: [expect.objectContaining({ project: '@alice/demo' })], more: true } },
  { name: `200 since = v − ${LIMIT}: the oldest answerable, all ${LIMIT} kept entries`, method: 'GET', url: (_f, v) => `${content}/changes?since=${v - LIMIT}&limit=1000`, token: f => f.readKey, expectStatus: 200, expectBody: expect.objectContaining({ changes: expect.toSatisfy((list: unknown[]) => list.length === LIMIT), more: false }) },
  { name: `410 since = v − ${LIMIT + 1}: beyond HISTORY_LIMIT`, method: 'GET', url: (_f, v) => `${content}/changes?since=${v - LIMIT - 1}`, token: f => f.readKey, expectStatus: 410, expectCode: 'HISTORY_EXPIRED' },
  { name: '410 without since (0), version 0 being beyond retention', method: 'GET', url: changes(''), token: f => f.readKey, expectStatus: 410, expectCode: 'HISTORY_EXPIRED' },
  { name: '400 since above the current version', method: 'GET', url: (_f, v) => `${content}/changes?since=${v + 1}`, token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_VERSION' },
  ...NOT_CANONICAL.map((since): Row => ({ name: `400 since=${since}`, method: 'GET', url: `${content}/changes?since=${since}`, token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_VERSION' })),
  { name: '400 since given twice', method: 'GET', url: changes('?since={v}&since={v}'), token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_VERSION' },
  ...['0', '1001', '01', 'x', ''].map((limit): Row => ({ name: `400 limit=${limit}`, method: 'GET', url: changes(`?since={v}&limit=${limit}`), token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_BODY' })),
  { name: '200 limit=1000', method: 'GET', url: changes('?since={v}&limit=1000'), token: f => f.readKey, expectStatus: 200 },
  { name: '401 without authentication', method: 'GET', url: changes('?since={v}'), token: () => undefined, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { name: '401 with a revoked key', method: 'GET', url: changes('?since={v}'), token: f => f.revokedKey, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 with an expired key', method: 'GET', url: changes('?since={v}'), token: f => f.expiredKey, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '403 for a stranger', method: 'GET', url: changes('?since={v}'), token: f => f.strangerSession, expectStatus: 403, expectCode: 'FORBIDDEN' },
  { name: '403 for a key scoped to another project', method: 'GET', url: changes('?since={v}'), token: f => f.otherProjectKey, expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' },
  { name: '403 before a bad since (access first)', method: 'GET', url: `${content}/changes?since=x`, token: f => f.strangerSession, expectStatus: 403, expectCode: 'FORBIDDEN' },
  { name: '404 for an unknown project', method: 'GET', url: '/api/@alice/nope/content/changes', token: f => f.writeKey, expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' },
  { name: '405 for POST', method: 'POST', url: `${content}/changes`, token: f => f.writeKey, body: {}, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED' }
]

const VERSION: Row[] = [
  { name: '200 ?version = the current one: the content, ETag its version', method: 'GET', url: atVersion(0), token: f => f.readKey, expectStatus: 200, expectBody: BASE },
  { name: '200 ?version = v − 1: ETag names that version', method: 'GET', url: atVersion(-1), token: f => f.viewerSession, expectStatus: 200, expectEtag: v => v - 1 },
  { name: `200 ?version = v − ${LIMIT}: the oldest answerable`, method: 'GET', url: atVersion(-LIMIT), token: f => f.readKey, expectStatus: 200, expectEtag: v => v - LIMIT },
  { name: `410 ?version = v − ${LIMIT + 1}`, method: 'GET', url: atVersion(-LIMIT - 1), token: f => f.readKey, expectStatus: 410, expectCode: 'HISTORY_EXPIRED' },
  { name: '410 ?version=0', method: 'GET', url: `${content}?version=0`, token: f => f.readKey, expectStatus: 410, expectCode: 'HISTORY_EXPIRED' },
  { name: '404 ?version above the current one', method: 'GET', url: atVersion(1), token: f => f.readKey, expectStatus: 404, expectCode: 'VERSION_NOT_FOUND' },
  ...NOT_CANONICAL.map((version): Row => ({ name: `400 ?version=${version}`, method: 'GET', url: `${content}?version=${version}`, token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_VERSION' })),
  { name: '200 ?version with ?path: the value there then', method: 'GET', url: (_f, v) => `${content}?version=${v}&path=data.list`, token: f => f.readKey, expectStatus: 200, expectBody: [1, 2] },
  { name: '304 ?version with a matching If-None-Match', method: 'GET', url: atVersion(-1), token: f => f.readKey, headers: (_f, v) => ({ 'if-none-match': `"${v - 1}"` }), expectStatus: 304, expectEtag: v => v - 1 },
  { name: '401 without authentication', method: 'GET', url: atVersion(0), token: () => undefined, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { name: '403 for a stranger', method: 'GET', url: atVersion(0), token: f => f.strangerKey, expectStatus: 403, expectCode: 'FORBIDDEN' },
  { name: '403 for a key scoped to another project', method: 'GET', url: atVersion(0), token: f => f.otherProjectKey, expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' }
]

const revert = { method: 'POST' as const, url: `${content}/revert` }
const revertedMessage = { message: expect.stringMatching(/^Content reverted to version \d+\.$/) }

const REVERT: Row[] = [
  { ...revert, name: '200 to the current version with a write key: one new version, same content', token: f => f.writeKey, bodyAt: v => ({ version: v }), expectStatus: 200, expectBody: revertedMessage, expectContent: BASE },
  { ...revert, name: '200 for the owner session', token: f => f.ownerSession, bodyAt: v => ({ version: v }), expectStatus: 200, expectBody: revertedMessage, expectContent: BASE },
  { ...revert, name: '200 for an editor', token: f => f.editorSession, bodyAt: v => ({ version: v }), expectStatus: 200, expectBody: revertedMessage, expectContent: BASE },
  { ...revert, name: '200 with a matching If-Match', token: f => f.writeKey, bodyAt: v => ({ version: v }), headers: (_f, v) => ({ 'if-match': `"${v}"` }), expectStatus: 200, expectContent: BASE },
  { ...revert, name: '404 above the current version', token: f => f.writeKey, bodyAt: v => ({ version: v + 1 }), expectStatus: 404, expectCode: 'VERSION_NOT_FOUND' },
  { ...revert, name: '410 beyond retention', token: f => f.writeKey, body: { version: 0 }, expectStatus: 410, expectCode: 'HISTORY_EXPIRED' },
  { ...revert, name: '412 with a stale If-Match', token: f => f.writeKey, bodyAt: v => ({ version: v }), headers: (_f, v) => ({ 'if-match': `"${v - 1}"` }), expectStatus: 412, expectCode: 'PRECONDITION_FAILED' },
  { ...revert, name: '412 before 404: a stale If-Match and a version above the current one', token: f => f.writeKey, bodyAt: v => ({ version: v + 1 }), headers: (_f, v) => ({ 'if-match': `"${v - 1}"` }), expectStatus: 412, expectCode: 'PRECONDITION_FAILED' },
  ...[['a string', '3'], ['negative', -1], ['a fraction', 1.5], ['null', null], ['beyond 2^53', 2 ** 53]].map(([what, version]): Row =>
    ({ ...revert, name: `400 when version is ${String(what)}`, token: f => f.writeKey, body: { version }, expectStatus: 400, expectCode: 'INVALID_VERSION' })),
  { ...revert, name: '400 when version is missing', token: f => f.writeKey, body: {}, expectStatus: 400, expectCode: 'INVALID_VERSION' },
  { ...revert, name: '400 INVALID_BODY for an unknown member', token: f => f.writeKey, bodyAt: v => ({ version: v, to: 1 }), expectStatus: 400, expectCode: 'INVALID_BODY' },
  { ...revert, name: '400 INVALID_JSON', token: f => f.writeKey, raw: '{"version":', expectStatus: 400, expectCode: 'INVALID_JSON' },
  { ...revert, name: '401 without authentication', token: () => undefined, body: { version: 1 }, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { ...revert, name: '403 for a viewer', token: f => f.viewerSession, bodyAt: v => ({ version: v }), expectStatus: 403, expectCode: 'FORBIDDEN' },
  { ...revert, name: '403 for a read-only key', token: f => f.readKey, bodyAt: v => ({ version: v }), expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' },
  { ...revert, name: '403 for a stranger', token: f => f.strangerSession, bodyAt: v => ({ version: v }), expectStatus: 403, expectCode: 'FORBIDDEN' },
  { ...revert, name: '404 for an unknown project', url: '/api/@alice/nope/content/revert', token: f => f.writeKey, body: { version: 1 }, expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' },
  { ...revert, method: 'GET', name: '405 for GET', token: f => f.writeKey, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED' }
]

describe('change log API scenarios', () => {
  let app: TestApp
  let fixture: ContentFixture
  beforeAll(async () => {
    ({ app, fixture } = await startContentApp({ HISTORY_LIMIT: String(LIMIT) }))
    // Past the limit from the first row on: version 0 is no longer answerable.
    for (let i = 0; i <= LIMIT; i++) {
      expect((await call(app.url, 'POST', `${content}/increment`, { token: fixture.writeKey, body: { path: 'warmup' } })).status).toBe(200)
    }
  })
  afterAll(async () => { await app.close() })

  const target = ownerTarget(() => app.url, () => fixture, BASE)

  const groups: Array<[string, Row[]]> = [['GET …/content/changes', CHANGES], ['GET …/content?version=', VERSION], ['POST …/content/revert', REVERT]]
  for (const [name, rows] of groups) {
    describe(name, () => {
      for (const row of rows) it(row.name, async () => { await runScenario(target, row) })
    })
  }
})

describe('what the change log answers', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp() })
  afterAll(async () => { await app.close() })

  it('records who made each change: the key by id and name, the user by name; never a secret', async () => {
    const { key, keyId, session, path } = await ownerWithProject(app.url, 'erin')
    expect((await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'a', value: 1 } })).status).toBe(200)
    expect((await call(app.url, 'POST', `${path}/content/push`, { token: session, body: { path: 'list', value: 'x' } })).status).toBe(200)
    const page = await call(app.url, 'GET', `${path}/content/changes`, { token: key })
    expect(page.status).toBe(200)
    expect(page.headers.get('etag')).toBe('"2"')
    expect(page.body).toEqual({
      version: 2,
      changes: [
        { project: '@erin/demo', version: 1, op: 'set', path: 'a', value: 1, at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), actor: { type: 'key', id: keyId, name: 'writer' } },
        { project: '@erin/demo', version: 2, op: 'push', path: 'list', value: 'x', at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), actor: { type: 'user', name: '@erin' } }
      ],
      more: false
    })
    expect(page.text).not.toContain(key)
    expect(page.text).not.toContain(session)
  })

  it('?version=N gives every past content; a revert restores one as ONE new change', async () => {
    const { key, path } = await ownerWithProject(app.url, 'frank')
    const steps: Array<[string, unknown]> = [
      ['increment', { path: 'n', value: 2 }],
      ['set', { path: 'title', value: 'draft' }],
      ['push', { path: 'tags', value: 'a' }],
      ['insert', { path: 'tags', value: 'b', index: 0 }],
      ['delete', { path: 'title' }]
    ]
    const contents: unknown[] = [{}]
    for (const [op, body] of steps) {
      expect((await call(app.url, 'POST', `${path}/content/${op}`, { token: key, body })).status).toBe(200)
      contents.push((await call(app.url, 'GET', `${path}/content`, { token: key })).body)
    }
    for (const [version, expected] of contents.entries()) {
      const r = await call(app.url, 'GET', `${path}/content?version=${version}`, { token: key })
      expect(r.status).toBe(200)
      expect(r.headers.get('etag')).toBe(`"${version}"`)
      expect(r.body, `version ${version}`).toEqual(expected)
    }

    const reverted = await call(app.url, 'POST', `${path}/content/revert`, { token: key, body: { version: 2 } })
    expect(reverted.status).toBe(200)
    expect(reverted.body).toEqual({ message: 'Content reverted to version 2.' })
    expect(reverted.headers.get('etag')).toBe('"6"')
    expect((await call(app.url, 'GET', `${path}/content`, { token: key })).body).toEqual({ n: 2, title: 'draft' })
    const page = await call(app.url, 'GET', `${path}/content/changes?since=5`, { token: key })
    expect(page.body.changes).toEqual([expect.objectContaining({ version: 6, op: 'revert', revertedTo: 2, value: { n: 2, title: 'draft' } })])
    // History itself is unchanged: version 5 still reads as it was.
    expect((await call(app.url, 'GET', `${path}/content?version=5`, { token: key })).body).toEqual(contents[5])
  })

  it('pages through a long log with since and more, without a gap or a duplicate', async () => {
    const { key, path } = await ownerWithProject(app.url, 'gina')
    for (let i = 0; i < 25; i++) expect((await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })).status).toBe(200)
    const versions: number[] = []
    let since = 0
    for (let more = true; more;) {
      const r = await call(app.url, 'GET', `${path}/content/changes?since=${since}&limit=10`, { token: key })
      expect(r.status).toBe(200)
      expect(r.body.changes.length).toBeLessThanOrEqual(10)
      versions.push(...r.body.changes.map((change: { version: number }) => change.version))
      since = versions.at(-1) ?? since
      more = r.body.more
    }
    expect(versions).toEqual(Array.from({ length: 25 }, (_, i) => i + 1))
  })
})
