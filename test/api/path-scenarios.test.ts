// The history of one path over HTTP (docs/design.md §15): GET …/content/changes?path=, every
// status code as scenario rows (narrowed keys included); then what it answers: only the
// changes that touch the path, each as a path subscription is sent it, never a value outside.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, createKey, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { startContentApp, PROJECT, type ContentFixture } from './fixture.js'
import { ownerTarget, runScenario, type Scenario } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

interface PathFixture extends ContentFixture {
  /** Narrowed to data.count. */
  countKey: string
  /** Narrowed by ops only: may watch any path. */
  incrementKey: string
}
type Row = Scenario<PathFixture>

const LIMIT = 40
const BASE = { data: { count: 5, list: [1, 2] }, secret: 's3cret' }
const content = `${PROJECT}/content`
const changes = (query: string) => (_f: PathFixture, v: number) => `${content}/changes${query.replaceAll('{v}', String(v)).replaceAll('{v-1}', String(v - 1))}`

/** The runner's reset (an update by the owner), as a subscription to data.count is sent it. */
const projectedReset = { project: '@alice/demo', version: expect.any(Number), op: 'set', path: 'data.count', value: 5, projected: true, at: expect.any(String), actor: { type: 'user', name: '@alice' } }

const ROWS: Row[] = [
  { name: '200 the reset, projected onto the path: its value, nothing else', method: 'GET', url: changes('?path=data.count&since={v-1}'), token: f => f.readKey, expectStatus: 200, expectBody: { version: expect.any(Number), changes: [projectedReset], more: false } },
  { name: '200 a path with nothing there: a projected delete', method: 'GET', url: changes('?path=nothing.here&since={v-1}'), token: f => f.readKey, expectStatus: 200, expectBody: { version: expect.any(Number), changes: [{ ...projectedReset, op: 'delete', path: 'nothing.here', value: undefined }], more: false } },
  { name: '200 since = v: nothing yet', method: 'GET', url: changes('?path=data.count&since={v}'), token: f => f.readKey, expectStatus: 200, expectBody: { version: expect.any(Number), changes: [], more: false } },
  { name: '200 for a viewer', method: 'GET', url: changes('?path=data&since={v}'), token: f => f.viewerSession, expectStatus: 200 },
  { name: '200 for a key narrowed to the path', method: 'GET', url: changes('?path=data.count&since={v-1}'), token: f => f.countKey, expectStatus: 200, expectBody: { version: expect.any(Number), changes: [projectedReset], more: false } },
  { name: '200 for a key narrowed to the path, below it', method: 'GET', url: changes('?path=data.count.deep&since={v}'), token: f => f.countKey, expectStatus: 200 },
  { name: '200 for a key narrowed by ops only, any path', method: 'GET', url: changes('?path=secret&since={v}'), token: f => f.incrementKey, expectStatus: 200 },
  { name: '200 limit=1 pages', method: 'GET', url: changes('?path=data&since={v-1}&limit=1'), token: f => f.readKey, expectStatus: 200, expectBody: { version: expect.any(Number), changes: [expect.objectContaining({ path: 'data', projected: true })], more: expect.any(Boolean) } },
  { name: '304 with a matching If-None-Match', method: 'GET', url: changes('?path=data&since={v}'), token: f => f.readKey, headers: (_f, v) => ({ 'if-none-match': `"${v}"` }), expectStatus: 304 },
  { name: '412 with a stale If-Match', method: 'GET', url: changes('?path=data&since={v}'), token: f => f.readKey, headers: (_f, v) => ({ 'if-match': `"${v - 1}"` }), expectStatus: 412, expectCode: 'PRECONDITION_FAILED' },
  { name: '403 for a key narrowed elsewhere: a path outside its paths', method: 'GET', url: changes('?path=secret&since={v}'), token: f => f.countKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { name: '403 for a key narrowed to data.count: the path above it', method: 'GET', url: changes('?path=data&since={v}'), token: f => f.countKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { name: '403 for a narrowed key without path: the whole log', method: 'GET', url: changes('?since={v}'), token: f => f.countKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  ...['a..b', '', '.a', 'a.', '__proto__', '$x', 'a.__proto__.b'].map((path): Row => ({ name: `400 path=${JSON.stringify(path)}`, method: 'GET', url: `${content}/changes?path=${encodeURIComponent(path)}`, token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_PATH' })),
  { name: '400 path given twice', method: 'GET', url: `${content}/changes?path=a&path=b`, token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_PATH' },
  { name: '400 an invalid path before the key scope', method: 'GET', url: `${content}/changes?path=a..b`, token: f => f.countKey, expectStatus: 400, expectCode: 'INVALID_PATH' },
  { name: '400 since above the current version', method: 'GET', url: (_f, v) => `${content}/changes?path=data&since=${v + 1}`, token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_VERSION' },
  { name: '400 since=x', method: 'GET', url: `${content}/changes?path=data&since=x`, token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_VERSION' },
  { name: '400 limit=0', method: 'GET', url: changes('?path=data&since={v}&limit=0'), token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_BODY' },
  { name: `410 since beyond HISTORY_LIMIT`, method: 'GET', url: `${content}/changes?path=data&since=0`, token: f => f.readKey, expectStatus: 410, expectCode: 'HISTORY_EXPIRED' },
  { name: '401 without authentication', method: 'GET', url: changes('?path=data&since={v}'), token: () => undefined, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { name: '401 with a revoked key', method: 'GET', url: changes('?path=data&since={v}'), token: f => f.revokedKey, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '403 for a stranger', method: 'GET', url: changes('?path=data&since={v}'), token: f => f.strangerSession, expectStatus: 403, expectCode: 'FORBIDDEN' },
  { name: '403 for a key scoped to another project', method: 'GET', url: changes('?path=data&since={v}'), token: f => f.otherProjectKey, expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' },
  { name: '403 before a bad path (access first)', method: 'GET', url: `${content}/changes?path=a..b`, token: f => f.strangerSession, expectStatus: 403, expectCode: 'FORBIDDEN' },
  { name: '404 for an unknown project', method: 'GET', url: '/api/@alice/nope/content/changes?path=data', token: f => f.writeKey, expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' }
]

describe('GET …/content/changes?path= scenarios', () => {
  let app: TestApp
  let fixture: PathFixture
  beforeAll(async () => {
    const started = await startContentApp({ HISTORY_LIMIT: String(LIMIT) })
    app = started.app
    const base = started.fixture
    const countKey = (await createKey(app.url, base.ownerSession, { name: 'count only', permission: 'write', paths: ['data.count'] })).key
    const incrementKey = (await createKey(app.url, base.ownerSession, { name: 'increments only', permission: 'write', ops: ['increment'] })).key
    fixture = { ...base, countKey, incrementKey }
    for (let i = 0; i <= LIMIT; i++) {
      expect((await call(app.url, 'POST', `${content}/increment`, { token: fixture.writeKey, body: { path: 'warmup' } })).status).toBe(200)
    }
  })
  afterAll(async () => { await app.close() })

  const target = ownerTarget(() => app.url, () => fixture, BASE)
  for (const row of ROWS) it(row.name, async () => { await runScenario(target, row) })
})

describe('what changes?path= answers', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp() })
  afterAll(async () => { await app.close() })

  it('only the changes that touch the path, as sent on a path subscription; a batch filtered to the path', async () => {
    const { key, path } = await ownerWithProject(app.url, 'paula')
    const post = async (op: string, body: unknown) => expect((await call(app.url, 'POST', `${path}/content/${op}`, { token: key, body })).status).toBe(200)
    await post('set', { path: 'votes', value: { up: 0, down: 0 } })
    for (let i = 0; i < 20; i++) await post('increment', { path: 'elsewhere' })
    await post('increment', { path: 'votes.up' })
    await post('batch', { operations: [{ op: 'increment', path: 'votes.down' }, { op: 'set', path: 'hidden', value: 'secret' }] })
    await post('set', { path: 'hidden', value: { votes: 'no' } })
    const page = await call(app.url, 'GET', `${path}/content/changes?path=votes`, { token: key })
    expect(page.status).toBe(200)
    expect(page.body.version).toBe(24)
    expect(page.body.changes.map((change: { version: number, op: string }) => [change.version, change.op])).toEqual([[1, 'set'], [22, 'increment'], [23, 'batch']])
    expect(page.body.changes[2].operations).toEqual([{ op: 'increment', path: 'votes.down', value: 1 }])
    expect(page.text).not.toContain('secret')
  })
})
