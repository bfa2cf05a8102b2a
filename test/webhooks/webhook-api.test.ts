// The webhooks management API (docs/design.md §11), row by row with every status it answers,
// on an app WITHOUT WEBHOOK_ALLOW_PRIVATE: refused targets are refused at creation, before
// anything is sent. No row makes the server contact anything (successful creations name a
// public address, example.com's, that nothing ever sends to here: this app delivers nothing
// and no row pings it; the documentation ranges are refused since docs/design.md §13b).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SecretBox } from '../../server/webhooks/secret-box.js'
import { startContentApp, PROJECT, type ContentFixture } from '../api/fixture.js'
import { expectErrorShape } from '../api/scenario.js'
import { call } from '../support/http.js'
import type { TestApp } from '../support/temp-app.js'

const PUBLIC_URL = 'https://93.184.215.14/hook'
const HOOKS = `${PROJECT}/webhooks`

interface Fixture extends ContentFixture { hookId: string, strangerHookId: string }

interface Row {
  name: string
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  url: string | ((f: Fixture) => string)
  token: (f: Fixture) => string | undefined
  body?: unknown
  raw?: string
  expectStatus: number
  expectCode?: string
  expectBody?: (f: Fixture) => unknown
}

const owner = (f: Fixture) => f.ownerSession
const create = (name: string, body: unknown, expectStatus: number, expectCode?: string): Row =>
  ({ name, method: 'POST', url: HOOKS, token: owner, body, expectStatus, ...(expectCode ? { expectCode } : {}) })
const forbidden = (url: string, why: string): Row => create(`400 WEBHOOK_URL_FORBIDDEN for ${why} (${url})`, { url }, 400, 'WEBHOOK_URL_FORBIDDEN')

const CREATE: Row[] = [
  create('400 INVALID_BODY without url', {}, 400, 'INVALID_BODY'),
  create('400 INVALID_BODY for a url that is not a URL', { url: 'not a url' }, 400, 'INVALID_BODY'),
  create('400 INVALID_BODY for ftp:', { url: 'ftp://93.184.215.14/x' }, 400, 'INVALID_BODY'),
  create('400 INVALID_BODY for a url with credentials', { url: 'https://user:pw@93.184.215.14/x' }, 400, 'INVALID_BODY'),
  create('400 INVALID_BODY for an unknown member', { url: PUBLIC_URL, path: 'a' }, 400, 'INVALID_BODY'),
  create('400 INVALID_BODY for paths that is not an array', { url: PUBLIC_URL, paths: 'site' }, 400, 'INVALID_BODY'),
  create('400 INVALID_BODY for an empty paths', { url: PUBLIC_URL, paths: [] }, 400, 'INVALID_BODY'),
  create('400 INVALID_BODY for a malformed path', { url: PUBLIC_URL, paths: ['a..b'] }, 400, 'INVALID_BODY'),
  create('400 INVALID_BODY for an unknown op', { url: PUBLIC_URL, ops: ['explode'] }, 400, 'INVALID_BODY'),
  create('400 INVALID_BODY for a 501-character description', { url: PUBLIC_URL, description: 'd'.repeat(501) }, 400, 'INVALID_BODY'),
  { name: '400 INVALID_JSON', method: 'POST', url: HOOKS, token: owner, raw: '{"url":', expectStatus: 400, expectCode: 'INVALID_JSON' },
  { name: '413 BODY_TOO_LARGE', method: 'POST', url: HOOKS, token: owner, raw: JSON.stringify({ url: PUBLIC_URL, description: 'x'.repeat(1_100_000) }), expectStatus: 413, expectCode: 'BODY_TOO_LARGE' },
  forbidden('http://93.184.215.14/hook', 'plain http:'),
  forbidden('https://127.0.0.1/hook', 'loopback'),
  forbidden('https://127.8.9.10/hook', 'loopback'),
  forbidden('https://0x7f000001/hook', 'loopback written in hex'),
  forbidden('https://2130706433/hook', 'loopback written as one number'),
  forbidden('https://0.0.0.0/hook', 'the unspecified address'),
  forbidden('https://10.1.2.3/hook', 'RFC 1918 10/8'),
  forbidden('https://172.16.5.4/hook', 'RFC 1918 172.16/12'),
  forbidden('https://192.168.1.1/hook', 'RFC 1918 192.168/16'),
  forbidden('https://100.64.0.1/hook', 'CGNAT'),
  forbidden('https://100.100.100.200/latest/meta-data', 'Alibaba metadata (CGNAT)'),
  forbidden('https://169.254.169.254/latest/meta-data/', 'cloud metadata'),
  forbidden('https://169.254.10.1/hook', 'link-local'),
  forbidden('https://[::1]/hook', 'IPv6 loopback'),
  forbidden('https://[::ffff:127.0.0.1]/hook', 'IPv4-mapped loopback'),
  forbidden('https://[::ffff:169.254.169.254]/hook', 'IPv4-mapped metadata'),
  forbidden('https://[64:ff9b::a9fe:a9fe]/hook', 'NAT64 of the metadata address'),
  forbidden('https://[fd00:ec2::254]/hook', 'AWS IPv6 metadata (unique-local)'),
  forbidden('https://[fc00::1]/hook', 'unique-local'),
  forbidden('https://[fe80::1]/hook', 'IPv6 link-local'),
  // docs/design.md §13b: the review's forms, the documentation ranges, NAT64 local use.
  forbidden('https://[::ffff:0:127.0.0.1]/hook', 'IPv4-translated loopback'),
  forbidden('https://[64:ff9b:1::127.0.0.1]/hook', 'NAT64 local-use'),
  forbidden('https://[::ffff:0:8.8.8.8]/hook', 'IPv4-translated form of a public address'),
  forbidden('https://192.0.2.10/hook', 'TEST-NET-1'),
  forbidden('https://198.51.100.10/hook', 'TEST-NET-2'),
  forbidden('https://203.0.113.10/hook', 'TEST-NET-3'),
  forbidden('https://[2001:db8::10]/hook', 'IPv6 documentation'),
  forbidden('https://[2002:7f00:1::1]/hook', '6to4 of loopback'),
  forbidden('https://localhost/hook', 'localhost'),
  forbidden('https://api.localhost/hook', 'a .localhost name'),
  forbidden('https://metadata.google.internal/computeMetadata/v1/', 'the GCP metadata name'),
  { ...create('401 AUTH_REQUIRED without a token', { url: PUBLIC_URL }, 401, 'AUTH_REQUIRED'), token: () => undefined },
  { ...create('401 INVALID_TOKEN for an unknown token', { url: PUBLIC_URL }, 401, 'INVALID_TOKEN'), token: () => 'cds_no-such-session' },
  { ...create('403 FORBIDDEN for a stranger', { url: PUBLIC_URL }, 403, 'FORBIDDEN'), token: f => f.strangerSession },
  { ...create('403 SESSION_REQUIRED for the owner\'s API key', { url: PUBLIC_URL }, 403, 'SESSION_REQUIRED'), token: f => f.writeKey },
  { ...create('403 OWNER_REQUIRED for an editor', { url: PUBLIC_URL }, 403, 'OWNER_REQUIRED'), token: f => f.editorSession },
  { ...create('403 OWNER_REQUIRED for a viewer', { url: PUBLIC_URL }, 403, 'OWNER_REQUIRED'), token: f => f.viewerSession },
  { ...create('404 PROJECT_NOT_FOUND', { url: PUBLIC_URL }, 404, 'PROJECT_NOT_FOUND'), url: '/api/@alice/nope/webhooks' },
  { ...create('404 USER_NOT_FOUND', { url: PUBLIC_URL }, 404, 'USER_NOT_FOUND'), url: '/api/@nobody/demo/webhooks' },
  { ...create('400 INVALID_USERNAME without "@"', { url: PUBLIC_URL }, 400, 'INVALID_USERNAME'), url: '/api/alice/demo/webhooks' },
  { name: '405 for PUT', method: 'PUT', url: HOOKS, token: owner, body: {}, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED' }
]

const hook = (f: Fixture) => `${HOOKS}/${f.hookId}`
const OTHERS: Row[] = [
  { name: 'GET list: 200 without secrets', method: 'GET', url: HOOKS, token: owner, expectStatus: 200 },
  { name: 'GET list: 401', method: 'GET', url: HOOKS, token: () => undefined, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { name: 'GET list: 403 for a viewer', method: 'GET', url: HOOKS, token: f => f.viewerSession, expectStatus: 403, expectCode: 'OWNER_REQUIRED' },
  { name: 'GET list: 403 for a read key', method: 'GET', url: HOOKS, token: f => f.readKey, expectStatus: 403, expectCode: 'SESSION_REQUIRED' },
  { name: 'GET list: 404 for an unknown project', method: 'GET', url: '/api/@alice/nope/webhooks', token: owner, expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' },
  { name: 'GET deliveries: 200, none yet', method: 'GET', url: f => `${hook(f)}/deliveries`, token: owner, expectStatus: 200, expectBody: () => ({ deliveries: [] }) },
  { name: 'GET deliveries: 404 WEBHOOK_NOT_FOUND', method: 'GET', url: `${HOOKS}/whk_nope/deliveries`, token: owner, expectStatus: 404, expectCode: 'WEBHOOK_NOT_FOUND' },
  { name: 'GET deliveries: 404 for another project\'s webhook', method: 'GET', url: f => `${HOOKS}/${f.strangerHookId}/deliveries`, token: owner, expectStatus: 404, expectCode: 'WEBHOOK_NOT_FOUND' },
  { name: 'GET deliveries: 403 for an editor', method: 'GET', url: f => `${hook(f)}/deliveries`, token: f => f.editorSession, expectStatus: 403, expectCode: 'OWNER_REQUIRED' },
  { name: 'GET deliveries: 401', method: 'GET', url: f => `${hook(f)}/deliveries`, token: () => undefined, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { name: 'POST test: 404 WEBHOOK_NOT_FOUND', method: 'POST', url: `${HOOKS}/whk_nope/test`, token: owner, expectStatus: 404, expectCode: 'WEBHOOK_NOT_FOUND' },
  { name: 'POST test: 403 for a stranger', method: 'POST', url: f => `${hook(f)}/test`, token: f => f.strangerSession, expectStatus: 403, expectCode: 'FORBIDDEN' },
  { name: 'POST test: 403 SESSION_REQUIRED for a key', method: 'POST', url: f => `${hook(f)}/test`, token: f => f.writeKey, expectStatus: 403, expectCode: 'SESSION_REQUIRED' },
  { name: 'POST test: 401', method: 'POST', url: f => `${hook(f)}/test`, token: () => undefined, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { name: 'GET test: 405', method: 'GET', url: f => `${hook(f)}/test`, token: owner, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED' },
  { name: 'DELETE: 404 WEBHOOK_NOT_FOUND', method: 'DELETE', url: `${HOOKS}/whk_nope`, token: owner, expectStatus: 404, expectCode: 'WEBHOOK_NOT_FOUND' },
  { name: 'DELETE: 404 for another project\'s webhook', method: 'DELETE', url: f => `${HOOKS}/${f.strangerHookId}`, token: owner, expectStatus: 404, expectCode: 'WEBHOOK_NOT_FOUND' },
  { name: 'DELETE: 403 for an editor', method: 'DELETE', url: hook, token: f => f.editorSession, expectStatus: 403, expectCode: 'OWNER_REQUIRED' },
  { name: 'DELETE: 401', method: 'DELETE', url: hook, token: () => undefined, expectStatus: 401, expectCode: 'AUTH_REQUIRED' }
]

describe('webhooks API scenarios', () => {
  let app: TestApp
  let fixture: Fixture
  let projectId: string
  const hooksNow = async () => (await app.store.webhooks.list(projectId, { after: null, limit: 1000 })).map(w => w.id).sort()

  beforeAll(async () => {
    const started = await startContentApp()
    app = started.app
    const base = started.fixture
    const mine = await call(app.url, 'POST', HOOKS, { token: base.ownerSession, body: { url: PUBLIC_URL } })
    const theirs = await call(app.url, 'POST', '/api/@bob/demo/webhooks', { token: base.strangerSession, body: { url: PUBLIC_URL } })
    expect([mine.status, theirs.status]).toEqual([201, 201])
    fixture = { ...base, hookId: mine.body.id, strangerHookId: theirs.body.id }
    projectId = (await app.store.findProject('alice', 'demo'))!.id
  })
  afterAll(async () => { await app.close() })

  for (const row of [...CREATE, ...OTHERS]) {
    it(row.name, async () => {
      const before = await hooksNow()
      const token = row.token(fixture)
      const path = typeof row.url === 'function' ? row.url(fixture) : row.url
      const r = await call(app.url, row.method, path, {
        ...(token ? { token } : {}),
        ...(row.raw !== undefined ? { raw: row.raw, headers: { 'content-type': 'application/json' } } : row.body !== undefined ? { body: row.body } : {})
      })
      expect(r.status, r.text).toBe(row.expectStatus)
      if (r.status >= 400) {
        expectErrorShape(r, row.expectCode)
        expect(await hooksNow(), 'a refused request changes nothing').toEqual(before)
      }
      if (row.expectBody) expect(r.body).toEqual(row.expectBody(fixture))
      if (row.name.startsWith('GET list: 200')) {
        expect(r.body.webhooks).toEqual([{
          id: fixture.hookId, url: PUBLIC_URL, paths: null, ops: null, description: null, createdAt: expect.any(String),
          cursor: 0, enabled: true, disabledReason: null, failingSince: null, nextAttemptAt: null
        }])
      }
    })
  }

  it('201: creates with filters and a description, shows the secret once, lists it without', async () => {
    const r = await call(app.url, 'POST', HOOKS, { token: fixture.ownerSession, body: { url: PUBLIC_URL, paths: ['site', 'shop.stock'], ops: ['set', 'push'], description: 'rebuild the site' } })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({ id: expect.stringMatching(/^whk_/), url: PUBLIC_URL, paths: ['site', 'shop.stock'], ops: ['set', 'push'], secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/), createdAt: expect.any(String) })
    const list = await call(app.url, 'GET', HOOKS, { token: fixture.ownerSession })
    expect(list.text).not.toContain(r.body.secret)
    expect(list.text).not.toMatch(/secret/i)
    expect(list.body.webhooks.find((w: { id: string }) => w.id === r.body.id)).toMatchObject({ paths: ['site', 'shop.stock'], ops: ['set', 'push'], description: 'rebuild the site' })
    // Secrets at rest: not in the database file, and sealed under the key outside it.
    const record = await app.store.webhooks.find(r.body.id)
    const file = readFileSync(join(app.dataDir, 'contentd.sqlite'))
    expect(file.includes(Buffer.from(r.body.secret.slice('whsec_'.length)))).toBe(false)
    expect(record!.secretCiphertext).not.toContain(r.body.secret.slice(6, 20))
    expect(SecretBox.fromConfig(app.config).open(record!.secretCiphertext, r.body.id)).toBe(r.body.secret)
    expect(() => SecretBox.fromConfig({ dataDir: app.dataDir, webhooks: { secretKey: 'another key of at least 32 characters!' } }).open(record!.secretCiphertext, r.body.id)).toThrow(/cannot be decrypted/)
    expect(() => SecretBox.fromConfig(app.config).open(record!.secretCiphertext, fixture.hookId), 'bound to its webhook').toThrow(/cannot be decrypted/)
    // DELETE: 200, then it is gone.
    const del = await call(app.url, 'DELETE', `${HOOKS}/${r.body.id}`, { token: fixture.ownerSession })
    expect(del.status).toBe(200)
    expect(del.body).toEqual({ message: 'Webhook deleted' })
    expect(await hooksNow()).toEqual([fixture.hookId])
    expect((await call(app.url, 'GET', `${HOOKS}/${r.body.id}/deliveries`, { token: fixture.ownerSession })).status).toBe(404)
  })

  it('deleting the project deletes its webhooks', async () => {
    const bob = (await app.store.findProject('bob', 'demo'))!
    expect(await app.store.webhooks.list(bob.id, { after: null, limit: 1000 })).toHaveLength(1)
    expect((await call(app.url, 'DELETE', '/api/@bob/demo', { token: fixture.strangerSession })).status).toBe(200)
    expect(await app.store.webhooks.list(bob.id, { after: null, limit: 1000 })).toHaveLength(0)
    expect(await app.store.webhooks.find(fixture.strangerHookId)).toBeNull()
  })
})

// docs/design.md §13b: at most MAX_WEBHOOKS_PER_PROJECT per project (3 here), also when the
// creates race; a delete frees a slot.
describe('webhooks per project are limited (MAX_WEBHOOKS_PER_PROJECT)', () => {
  let app: TestApp
  let fixture: ContentFixture

  beforeAll(async () => {
    ({ app, fixture } = await startContentApp({ MAX_WEBHOOKS_PER_PROJECT: '3' }))
  })
  afterAll(async () => { await app.close() })

  const add = (token: string, project = HOOKS, url = PUBLIC_URL) => call(app.url, 'POST', project, { token, body: { url } })
  const count = async (token: string, project = HOOKS) => (await call(app.url, 'GET', project, { token })).body.webhooks.length as number

  it('403 QUOTA_EXCEEDED past the limit, adding nothing; a delete frees a slot', async () => {
    const made = []
    for (let i = 0; i < 3; i++) {
      const r = await add(fixture.ownerSession)
      expect(r.status, r.text).toBe(201)
      made.push(r.body.id as string)
    }
    const refused = await add(fixture.ownerSession)
    expect(refused.status).toBe(403)
    expectErrorShape(refused, 'QUOTA_EXCEEDED')
    expect(refused.body.message).toMatch(/at most 3 webhooks/)
    expect(await count(fixture.ownerSession)).toBe(3)
    expect((await call(app.url, 'DELETE', `${HOOKS}/${made[0]}`, { token: fixture.ownerSession })).status).toBe(200)
    expect((await add(fixture.ownerSession)).status).toBe(201)
    expect((await add(fixture.ownerSession)).status).toBe(403)
  })

  it('lets exactly 3 of 10 simultaneous creates through', async () => {
    const bob = '/api/@bob/demo/webhooks'
    const results = await Promise.all(Array.from({ length: 10 }, () => add(fixture.strangerSession, bob)))
    expect(results.map(r => r.status).sort()).toEqual([201, 201, 201, 403, 403, 403, 403, 403, 403, 403])
    expect(await count(fixture.strangerSession, bob)).toBe(3)
  })
})
