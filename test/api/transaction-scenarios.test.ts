// Transactions over HTTP (docs/design.md §10): POST …/content/batch and PATCH …/content with
// every status code as scenario rows; then the change each makes (one version, one entry with
// `operations`, broadcast as it is logged), Idempotency-Key (replay, reuse, in progress,
// restart), and the concurrency promises: 100 concurrent batches sum exactly, 50 concurrent
// retries under one key apply once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { startContentApp, PROJECT, type ContentFixture } from './fixture.js'
import { ownerTarget, runScenario, type Scenario } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

type Row = Scenario<ContentFixture>

const BASE = { stock: 5, price: 10, todo: ['a', 'b'], done: [] as string[] }
const batch = { method: 'POST' as const, url: `${PROJECT}/content/batch` }
const patch = { method: 'PATCH' as const, url: `${PROJECT}/content`, headers: { 'content-type': 'application/json-patch+json' } }
const batched = { message: 'Batch applied successfully', version: expect.any(Number) }
const patched = { message: 'Patch applied successfully', version: expect.any(Number) }
const moveAndCount = [
  { op: 'test', path: 'todo.0', value: 'a' },
  { op: 'delete', path: 'todo.0' },
  { op: 'push', path: 'done', value: 'a' },
  { op: 'increment', path: 'moved' }
]

const BATCH: Row[] = [
  { ...batch, name: '200 with a write key: applied in order, one version', token: f => f.writeKey, body: { operations: moveAndCount }, expectStatus: 200, expectBody: batched, expectContent: { ...BASE, todo: ['b'], done: ['a'], moved: 1 } },
  { ...batch, name: '200 for an editor', token: f => f.editorSession, body: { operations: [{ op: 'decrement', path: 'stock', value: 2 }] }, expectStatus: 200, expectContent: { ...BASE, stock: 3 } },
  { ...batch, name: '200 for a batch of passing tests only: still a new version', token: f => f.writeKey, body: { operations: [{ op: 'test', path: 'price', value: 10 }] }, expectStatus: 200, expectContent: BASE },
  { ...batch, name: '200 with a matching If-Match', token: f => f.writeKey, headers: (_f, v) => ({ 'if-match': `"${v}"` }), body: { operations: [{ op: 'set', path: 'price', value: 11 }] }, expectStatus: 200, expectContent: { ...BASE, price: 11 } },
  { ...batch, name: '200 with 100 operations (BATCH_LIMIT)', token: f => f.writeKey, body: { operations: Array(100).fill({ op: 'increment', path: 'stock' }) }, expectStatus: 200, expectContent: { ...BASE, stock: 105 } },
  { ...batch, name: '409 TEST_FAILED: the price changed; nothing applied', token: f => f.writeKey, body: { operations: [{ op: 'decrement', path: 'stock' }, { op: 'test', path: 'price', value: 9 }] }, expectStatus: 409, expectCode: 'TEST_FAILED', expectOperation: 1 },
  { ...batch, name: '409 TEST_FAILED for a missing path', token: f => f.writeKey, body: { operations: [{ op: 'test', path: 'nope', value: null }] }, expectStatus: 409, expectCode: 'TEST_FAILED', expectOperation: 0 },
  { ...batch, name: '400 NOT_A_NUMBER at operation 2; the first two undone', token: f => f.writeKey, body: { operations: [{ op: 'increment', path: 'stock' }, { op: 'set', path: 'x', value: 1 }, { op: 'increment', path: 'todo' }] }, expectStatus: 400, expectCode: 'NOT_A_NUMBER', expectOperation: 2 },
  { ...batch, name: '400 INDEX_OUT_OF_RANGE at operation 0', token: f => f.writeKey, body: { operations: [{ op: 'insert', path: 'todo', index: 5, value: 'z' }] }, expectStatus: 400, expectCode: 'INDEX_OUT_OF_RANGE', expectOperation: 0 },
  { ...batch, name: '400 for an empty batch', token: f => f.writeKey, body: { operations: [] }, expectStatus: 400, expectCode: 'INVALID_BODY' },
  { ...batch, name: '400 for 101 operations', token: f => f.writeKey, body: { operations: Array(101).fill({ op: 'increment', path: 'stock' }) }, expectStatus: 400, expectCode: 'INVALID_BODY' },
  { ...batch, name: '400 for an unknown op', token: f => f.writeKey, body: { operations: [{ op: 'increment', path: 'stock' }, { op: 'explode', path: 'x' }] }, expectStatus: 400, expectCode: 'INVALID_BODY', expectOperation: 1 },
  { ...batch, name: '400 for test without value', token: f => f.writeKey, body: { operations: [{ op: 'test', path: 'price' }] }, expectStatus: 400, expectCode: 'INVALID_VALUE', expectOperation: 0 },
  { ...batch, name: '400 for an unknown member of an operation', token: f => f.writeKey, body: { operations: [{ op: 'set', path: 'a', value: 1, extra: true }] }, expectStatus: 400, expectCode: 'INVALID_BODY', expectOperation: 0 },
  { ...batch, name: '400 for an invalid path', token: f => f.writeKey, body: { operations: [{ op: 'set', path: 'a.__proto__.b', value: 1 }] }, expectStatus: 400, expectCode: 'INVALID_PATH', expectOperation: 0 },
  { ...batch, name: '400 for a body without operations', token: f => f.writeKey, body: { ops: [] }, expectStatus: 400, expectCode: 'INVALID_BODY' },
  { ...batch, name: '400 INVALID_JSON', token: f => f.writeKey, raw: '{"operations":[', expectStatus: 400, expectCode: 'INVALID_JSON' },
  { ...batch, name: '400 for an empty Idempotency-Key', token: f => f.writeKey, headers: { 'idempotency-key': '' }, body: { operations: moveAndCount }, expectStatus: 400, expectCode: 'INVALID_IDEMPOTENCY_KEY' },
  { ...batch, name: '400 for an Idempotency-Key over 255 characters', token: f => f.writeKey, headers: { 'idempotency-key': 'k'.repeat(256) }, body: { operations: moveAndCount }, expectStatus: 400, expectCode: 'INVALID_IDEMPOTENCY_KEY' },
  { ...batch, name: '400 for an Idempotency-Key with a space', token: f => f.writeKey, headers: { 'idempotency-key': 'a b' }, body: { operations: moveAndCount }, expectStatus: 400, expectCode: 'INVALID_IDEMPOTENCY_KEY' },
  { ...batch, name: '401 without authentication', token: () => undefined, body: { operations: moveAndCount }, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { ...batch, name: '403 for a viewer', token: f => f.viewerSession, body: { operations: moveAndCount }, expectStatus: 403, expectCode: 'FORBIDDEN' },
  { ...batch, name: '403 for a read-only key', token: f => f.readKey, body: { operations: moveAndCount }, expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' },
  { ...batch, name: '404 for an unknown project', url: '/api/@alice/nope/content/batch', token: f => f.writeKey, body: { operations: moveAndCount }, expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' },
  { ...batch, method: 'GET', name: '405 for GET', token: f => f.writeKey, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED' },
  { ...batch, name: '412 with a stale If-Match', token: f => f.writeKey, headers: (_f, v) => ({ 'if-match': `"${v - 1}"` }), body: { operations: moveAndCount }, expectStatus: 412, expectCode: 'PRECONDITION_FAILED' },
  { ...batch, name: '413 when the content would outgrow CONTENT_LIMIT', token: f => f.writeKey, body: { operations: [{ op: 'set', path: 'a', value: 'x'.repeat(3000) }, { op: 'set', path: 'b', value: 'x'.repeat(3000) }] }, expectStatus: 413, expectCode: 'CONTENT_TOO_LARGE', expectOperation: 1 }
]

const PATCH: Row[] = [
  { ...patch, name: '200 RFC 6902: test, remove, add at "-", replace, copy, move', token: f => f.writeKey, body: [
    { op: 'test', path: '/price', value: 10 }, { op: 'remove', path: '/todo/0' }, { op: 'add', path: '/done/-', value: 'a' },
    { op: 'replace', path: '/stock', value: 4 }, { op: 'copy', from: '/done', path: '/archive' }, { op: 'move', from: '/price', path: '/cost' }
  ], expectStatus: 200, expectBody: patched, expectContent: { stock: 4, todo: ['b'], done: ['a'], archive: ['a'], cost: 10 } },
  { ...patch, name: '200 with a charset parameter', headers: { 'content-type': 'application/json-patch+json; charset=utf-8' }, token: f => f.editorSession, body: [{ op: 'add', path: '/stock', value: 0 }], expectStatus: 200, expectContent: { ...BASE, stock: 0 } },
  { ...patch, name: '409 TEST_FAILED; nothing applied', token: f => f.writeKey, body: [{ op: 'remove', path: '/stock' }, { op: 'test', path: '/price', value: 1 }], expectStatus: 409, expectCode: 'TEST_FAILED', expectOperation: 1 },
  { ...patch, name: '400 remove of a missing member', token: f => f.writeKey, body: [{ op: 'remove', path: '/nope' }], expectStatus: 400, expectCode: 'INVALID_PATCH', expectOperation: 0 },
  { ...patch, name: '400 move into its own child', token: f => f.writeKey, body: [{ op: 'add', path: '/o', value: {} }, { op: 'move', from: '/o', path: '/o/p' }], expectStatus: 400, expectCode: 'INVALID_PATCH', expectOperation: 1 },
  { ...patch, name: '400 for a patch that is not an array', token: f => f.writeKey, body: { op: 'add', path: '/a', value: 1 }, expectStatus: 400, expectCode: 'INVALID_PATCH' },
  { ...patch, name: '400 for an empty patch', token: f => f.writeKey, body: [], expectStatus: 400, expectCode: 'INVALID_PATCH' },
  { ...patch, name: '400 for the root pointer', token: f => f.writeKey, body: [{ op: 'replace', path: '', value: {} }], expectStatus: 400, expectCode: 'INVALID_PATCH', expectOperation: 0 },
  { ...patch, name: '400 for a malformed pointer', token: f => f.writeKey, body: [{ op: 'add', path: '/a~2', value: 1 }], expectStatus: 400, expectCode: 'INVALID_PATCH', expectOperation: 0 },
  { ...patch, name: '400 for a key §2 refuses', token: f => f.writeKey, body: [{ op: 'add', path: '/$where', value: 1 }], expectStatus: 400, expectCode: 'INVALID_PATH', expectOperation: 0 },
  { ...patch, name: '400 for 101 operations', token: f => f.writeKey, body: Array(101).fill({ op: 'test', path: '/price', value: 10 }), expectStatus: 400, expectCode: 'INVALID_PATCH' },
  { ...patch, name: '415 for application/json', headers: { 'content-type': 'application/json' }, token: f => f.writeKey, body: [{ op: 'add', path: '/a', value: 1 }], expectStatus: 415, expectCode: 'UNSUPPORTED_MEDIA_TYPE' },
  { ...patch, name: '415 for application/merge-patch+json', headers: { 'content-type': 'application/merge-patch+json' }, token: f => f.writeKey, body: [{ op: 'add', path: '/a', value: 1 }], expectStatus: 415, expectCode: 'UNSUPPORTED_MEDIA_TYPE' },
  { ...patch, name: '401 without authentication', token: () => undefined, body: [{ op: 'add', path: '/a', value: 1 }], expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { ...patch, name: '403 for a read-only key', token: f => f.readKey, body: [{ op: 'add', path: '/a', value: 1 }], expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' },
  { ...patch, name: '404 for an unknown project', url: '/api/@alice/nope/content', token: f => f.writeKey, body: [{ op: 'add', path: '/a', value: 1 }], expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' },
  { ...patch, name: '412 with a stale If-Match', headers: (_f, v) => ({ 'content-type': 'application/json-patch+json', 'if-match': `"${v - 1}"` }), token: f => f.writeKey, body: [{ op: 'add', path: '/a', value: 1 }], expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }
]

describe('transaction API scenarios', () => {
  let app: TestApp
  let fixture: ContentFixture
  beforeAll(async () => {
    ({ app, fixture } = await startContentApp({ CONTENT_LIMIT: '4096' }))
  })
  afterAll(async () => { await app.close() })

  const target = ownerTarget(() => app.url, () => fixture, BASE)
  const groups: Array<[string, Row[]]> = [['POST …/content/batch', BATCH], ['PATCH …/content', PATCH]]
  for (const [name, rows] of groups) {
    describe(name, () => {
      for (const row of rows) it(row.name, async () => { await runScenario(target, row) })
    })
  }
})

describe('what batches, patches and Idempotency-Key do', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp() })
  afterAll(async () => { await app.close() })

  it('logs a batch and a patch as one entry each, with their operations and the actor', async () => {
    const { key, keyId, path } = await ownerWithProject(app.url, 'bea')
    expect((await call(app.url, 'POST', `${path}/content/batch`, { token: key, body: { operations: [{ op: 'set', path: 'a', value: { l: [] } }, { op: 'push', path: 'a.l', value: 1 }, { op: 'test', path: 'a.l.0', value: 1 }] } })).status).toBe(200)
    const patchAnswer = await call(app.url, 'PATCH', `${path}/content`, { token: key, headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'add', path: '/a/l/-', value: 2, comment: 'ignored' }] })
    expect(patchAnswer.status).toBe(200)
    expect(patchAnswer.body).toEqual({ message: 'Patch applied successfully', version: 2 })
    expect(patchAnswer.headers.get('etag')).toBe('"2"')
    const page = await call(app.url, 'GET', `${path}/content/changes`, { token: key })
    const actor = { type: 'key', id: keyId, name: 'writer' }
    expect(page.body.changes).toEqual([
      { project: '@bea/demo', version: 1, op: 'batch', operations: [{ op: 'set', path: 'a', value: { l: [] } }, { op: 'push', path: 'a.l', value: 1 }, { op: 'test', path: 'a.l.0', value: 1 }], at: expect.any(String), actor },
      { project: '@bea/demo', version: 2, op: 'patch', operations: [{ op: 'add', path: '/a/l/-', value: 2 }], at: expect.any(String), actor }
    ])
    expect((await call(app.url, 'GET', `${path}/content`, { token: key })).body).toEqual({ a: { l: [1, 2] } })
  })

  it('replays the first answer to a retry with the same key, and applies it once', async () => {
    const { key, path } = await ownerWithProject(app.url, 'cid')
    const send = (body: unknown, idempotencyKey = 'order-1') => call(app.url, 'POST', `${path}/content/increment`, { token: key, headers: { 'idempotency-key': idempotencyKey }, body })
    const first = await send({ path: 'n', value: 5 })
    expect(first.status).toBe(200)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    // The same request, members in another order: the same as JSON.
    const retry = await send({ value: 5, path: 'n' })
    expect(retry.status).toBe(200)
    expect(retry.text).toBe(first.text)
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'))
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect((await send({ path: 'n', value: 6 })).body.code).toBe('IDEMPOTENCY_KEY_REUSED')
    const content = await call(app.url, 'GET', `${path}/content`, { token: key })
    expect(content.body).toEqual({ n: 5 })
    expect(content.headers.get('etag')).toBe('"1"')
    // A failure of the write itself is kept too: a retry gets the same 400 without running.
    const failed = await send({ path: 'n.x' }, 'order-2')
    expect(failed.status).toBe(400)
    const failedAgain = await send({ path: 'n.x' }, 'order-2')
    expect([failedAgain.status, failedAgain.text, failedAgain.headers.get('idempotent-replayed')]).toEqual([400, failed.text, 'true'])
  })

  it('keeps keys per caller, and does not keep 403s: a retry runs again', async () => {
    const owner = await ownerWithProject(app.url, 'dot')
    const other = await call(app.url, 'POST', '/api/keys', { token: owner.session, body: { name: 'second', permission: 'write' } })
    const headers = { 'idempotency-key': 'same' }
    expect((await call(app.url, 'POST', `${owner.path}/content/increment`, { token: owner.key, headers, body: { path: 'n' } })).status).toBe(200)
    const second = await call(app.url, 'POST', `${owner.path}/content/increment`, { token: other.body.key, headers, body: { path: 'n' } })
    expect([second.status, second.headers.get('idempotent-replayed')]).toEqual([200, null])
    expect((await call(app.url, 'GET', `${owner.path}/content`, { token: owner.key })).body).toEqual({ n: 2 })
    const stranger = await ownerWithProject(app.url, 'eli')
    const denied = await call(app.url, 'POST', `${owner.path}/content/increment`, { token: stranger.session, headers, body: { path: 'n' } })
    expect(denied.status).toBe(403)
    expect((await call(app.url, 'PUT', `${owner.path}/members/eli`, { token: owner.session, body: { role: 'editor' } })).status).toBe(200)
    const allowed = await call(app.url, 'POST', `${owner.path}/content/increment`, { token: stranger.session, headers, body: { path: 'n' } })
    expect([allowed.status, allowed.headers.get('idempotent-replayed')]).toEqual([200, null])
  })

  it('honours the key on every content write: update, set, batch, patch, revert', async () => {
    const { key, path } = await ownerWithProject(app.url, 'fay')
    const writes: Array<[string, string, unknown, Record<string, string>?]> = [
      ['POST', '/content', { a: 1 }],
      ['POST', '/content/set', { path: 'b', value: 2 }],
      ['POST', '/content/batch', { operations: [{ op: 'increment', path: 'a' }] }],
      ['PATCH', '/content', [{ op: 'add', path: '/c', value: 3 }], { 'content-type': 'application/json-patch+json' }],
      ['POST', '/content/revert', { version: 1 }]
    ]
    for (const [i, [method, suffix, body, headers]] of writes.entries()) {
      const options = { token: key, headers: { ...headers, 'idempotency-key': `write-${i}` }, body }
      const first = await call(app.url, method, path + suffix, options)
      expect(first.status, first.text).toBe(200)
      const again = await call(app.url, method, path + suffix, options)
      expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, first.text, 'true'])
    }
    const content = await call(app.url, 'GET', `${path}/content`, { token: key })
    expect([content.body, content.headers.get('etag')]).toEqual([{ a: 1 }, '"5"'])
  })

  it('100 concurrent batches of 10 increments sum exactly', async () => {
    const { key, path } = await ownerWithProject(app.url, 'gus')
    const operations = Array.from({ length: 10 }, (_, i) => ({ op: 'increment', path: `n${i % 2}` }))
    const answers = await Promise.all(Array.from({ length: 100 }, () => call(app.url, 'POST', `${path}/content/batch`, { token: key, body: { operations } })))
    expect(answers.map(a => a.status)).toEqual(Array(100).fill(200))
    expect(new Set(answers.map(a => a.body.version)).size).toBe(100)
    const content = await call(app.url, 'GET', `${path}/content`, { token: key })
    expect([content.body, content.headers.get('etag')]).toEqual([{ n0: 500, n1: 500 }, '"100"'])
  })

  it('50 concurrent retries under one key apply once; the others replay or are told it is in progress', async () => {
    const { key, path } = await ownerWithProject(app.url, 'hal')
    const answers = await Promise.all(Array.from({ length: 50 }, () => call(app.url, 'POST', `${path}/content/batch`, {
      token: key, headers: { 'idempotency-key': 'pay-42' }, body: { operations: [{ op: 'increment', path: 'paid', value: 42 }] }
    })))
    const applied = answers.filter(a => a.status === 200 && a.headers.get('idempotent-replayed') === null)
    expect(applied).toHaveLength(1)
    for (const a of answers) {
      if (a === applied[0]) continue
      if (a.status === 200) expect([a.text, a.headers.get('idempotent-replayed')]).toEqual([applied[0]?.text, 'true'])
      else expect([a.status, a.body.code]).toEqual([409, 'IDEMPOTENCY_IN_PROGRESS'])
    }
    const content = await call(app.url, 'GET', `${path}/content`, { token: key })
    expect([content.body, content.headers.get('etag')]).toEqual([{ paid: 42 }, '"1"'])
  })
})
