// One source for API shapes (issue 27): the response schemas of shared/api/ are the OpenAPI
// document's components, and the real answers of a running app match them. A scenario table
// walks every documented operation with a JSON answer, in an order that builds what the next
// row needs (an account, a project, a key, a schema, content, a webhook with a delivery), and:
// - every answer is checked against the served /openapi.json by openapi-check.ts (status
//   listed, body valid under the operation's response schema, headers declared), and that
//   document itself against the independent OpenAPI validator;
// - every 2xx JSON answer is also checked against its shared/api schema closed to undocumented
//   members (the document leaves response objects open, so clients tolerate additions; a
//   member the server sends but no schema names is drift all the same);
// - the table covers every documented operation that answers JSON: a new endpoint without a
//   row here fails.
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { z } from 'zod'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RESPONSE_SCHEMAS, type ResponseSchemaName } from '../../shared/api/index.js'
import { PATCH_MEDIA_TYPE } from '../../shared/json-patch.js'
import { PATH_OPERATION_NAMES, type PathOperationName } from '../../shared/operation-table.js'
import { API_OPERATIONS } from '../../server/openapi/operations.js'
import { call, type CallResult } from '../support/http.js'
import { startWebhookApp, type WebhookApp } from '../support/webhook-app.js'
import { eventually } from '../webhooks/receiver.js'
import { checkEveryResponseAgainstOpenApi, matchPath } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

interface State {
  session: string
  bobSession: string
  key: string
  keyId: string
  webhookId: string
  version: number
}

interface Row {
  name: string
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'
  path: string | ((s: State) => string)
  token?: (s: State) => string
  body?: unknown | ((s: State) => unknown)
  headers?: Record<string, string>
  status: number
  /** Keeps what later rows need from the answer. */
  keep?: (r: CallResult, s: State) => void
  /** Waits for something before the request (a webhook delivery). */
  before?: (s: State) => Promise<void>
}

const P = '/api/@alice/demo'
const C = `${P}/content`
const session = (s: State) => s.session
const key = (s: State) => s.key

const PATH_OPERATION_BODIES: Record<PathOperationName, unknown> = {
  increment: { path: 'stats.visits', value: 2 },
  decrement: { path: 'stats.visits', value: 1 },
  set: { path: 'title', value: 'Hello' },
  delete: { path: 'draft' },
  push: { path: 'items', value: { name: 'pushed' } },
  insert: { path: 'items', value: 'first', index: 0 }
}

const ROWS: Row[] = [
  { name: 'signup', method: 'POST', path: '/api/auth/signup', body: { username: 'alice', password: 'correct horse battery staple' }, status: 201, keep: (r, s) => { s.session = r.body.token } },
  { name: 'signup of a second user', method: 'POST', path: '/api/auth/signup', body: { username: 'bob', password: 'correct horse battery staple' }, status: 201, keep: (r, s) => { s.bobSession = r.body.token } },
  { name: 'login', method: 'POST', path: '/api/auth/login', body: { username: '@alice', password: 'correct horse battery staple' }, status: 200 },
  { name: 'me', method: 'GET', path: '/api/me', token: session, status: 200 },
  { name: 'create a project', method: 'POST', path: '/api/projects', token: session, body: { slug: 'demo', name: 'Demo' }, status: 201 },
  { name: 'create another project', method: 'POST', path: '/api/projects', token: session, body: { slug: 'gone' }, status: 201 },
  { name: 'list projects', method: 'GET', path: '/api/projects', token: session, status: 200 },
  { name: 'read a project', method: 'GET', path: P, token: session, status: 200 },
  // App users and rules (docs/rules.md): the owner's trust setting, rules document and simulator.
  { name: 'trust an app sign-in', method: 'PUT', path: `${P}/auth`, token: session, body: { issuer: 'https://app.example', hs256Secret: 'a-secret-of-at-least-thirty-two-bytes!!' }, status: 200 },
  { name: 'read the app sign-in', method: 'GET', path: `${P}/auth`, token: session, status: 200 },
  { name: 'set the rules', method: 'PUT', path: `${P}/rules`, token: session, body: { rules: { '.read': 'auth != null' } }, status: 200 },
  { name: 'read the rules', method: 'GET', path: `${P}/rules`, token: session, status: 200 },
  { name: 'check the rules', method: 'POST', path: `${P}/rules/check`, token: session, body: { auth: { sub: 'u1' }, op: 'read', path: 'stats' }, status: 200 },
  { name: 'remove the rules', method: 'DELETE', path: `${P}/rules`, token: session, status: 200 },
  { name: 'stop trusting the app sign-in', method: 'DELETE', path: `${P}/auth`, token: session, status: 200 },
  { name: 'add a member', method: 'PUT', path: `${P}/members/bob`, token: session, body: { role: 'editor' }, status: 200 },
  { name: 'list members', method: 'GET', path: `${P}/members`, token: session, status: 200 },
  { name: 'create a narrowed key', method: 'POST', path: '/api/keys', token: session, body: { name: 'narrow', permission: 'write', projects: ['@alice/demo'], paths: ['stats'], ops: ['increment'], expiresAt: new Date(Date.now() + 86_400_000).toISOString() }, status: 201 },
  { name: 'create a key', method: 'POST', path: '/api/keys', token: session, body: { name: 'writer', permission: 'write' }, status: 201, keep: (r, s) => { s.key = r.body.key; s.keyId = r.body.id } },
  { name: 'list keys', method: 'GET', path: '/api/keys', token: session, status: 200 },
  { name: 'set the schema', method: 'PUT', path: `${P}/schema`, token: session, body: { type: 'object' }, status: 200 },
  { name: 'read the schema', method: 'GET', path: `${P}/schema`, token: session, status: 200 },
  { name: 'replace the content', method: 'POST', path: C, token: key, body: { title: 'x', stats: { visits: 0 }, items: [], draft: true }, status: 200 },
  ...PATH_OPERATION_NAMES.map((op): Row => ({ name: `content ${op}`, method: 'POST', path: `${C}/${op}`, token: key, body: PATH_OPERATION_BODIES[op], status: 200 })),
  { name: 'batch', method: 'POST', path: `${C}/batch`, token: key, body: { operations: [{ op: 'test', path: 'title', value: 'Hello' }, { op: 'set', path: 'n', value: 1 }] }, status: 200 },
  { name: 'JSON Patch', method: 'PATCH', path: C, token: key, body: [{ op: 'replace', path: '/n', value: 2 }], headers: { 'content-type': PATCH_MEDIA_TYPE }, status: 200, keep: (r, s) => { s.version = r.body.version } },
  { name: 'read the content', method: 'GET', path: C, token: key, status: 200 },
  { name: 'read a value', method: 'GET', path: `${C}?path=stats.visits`, token: key, status: 200 },
  { name: 'read a past version', method: 'GET', path: `${C}?version=1`, token: key, status: 200 },
  { name: 'the change log, every kind of entry', method: 'GET', path: `${C}/changes`, token: session, status: 200 },
  { name: 'revert', method: 'POST', path: `${C}/revert`, token: session, body: (s: State) => ({ version: s.version - 1 }), status: 200 },
  { name: 'the change log with the revert', method: 'GET', path: (s: State) => `${C}/changes?since=${s.version}`, token: key, status: 200 },
  { name: 'add a webhook', method: 'POST', path: `${P}/webhooks`, token: session, body: () => ({ url: webhookApp.receiver.url, paths: ['stats'], ops: ['increment'], description: 'counts' }), status: 201, keep: (r, s) => { s.webhookId = r.body.id } },
  { name: 'ping the webhook', method: 'POST', path: (s: State) => `${P}/webhooks/${s.webhookId}/test`, token: session, status: 200 },
  { name: 'a change the webhook delivers', method: 'POST', path: `${C}/increment`, token: key, body: { path: 'stats.visits' }, status: 200 },
  {
    name: 'the webhook\'s deliveries',
    method: 'GET',
    path: (s: State) => `${P}/webhooks/${s.webhookId}/deliveries`,
    token: session,
    status: 200,
    before: async s => {
      await eventually(async () => {
        const r = await fetch(`${url()}${P}/webhooks/${s.webhookId}/deliveries`, { headers: { authorization: `Bearer ${s.session}` } })
        return ((await r.json()) as { deliveries: unknown[] }).deliveries.length > 0
      }, 'a delivery')
    }
  },
  { name: 'list webhooks', method: 'GET', path: `${P}/webhooks`, token: session, status: 200 },
  { name: 'delete the webhook', method: 'DELETE', path: (s: State) => `${P}/webhooks/${s.webhookId}`, token: session, status: 200 },
  { name: 'remove the schema', method: 'DELETE', path: `${P}/schema`, token: session, status: 200 },
  { name: 'remove a member', method: 'DELETE', path: `${P}/members/bob`, token: session, status: 200 },
  { name: 'revoke a key', method: 'DELETE', path: (s: State) => `/api/keys/${s.keyId}`, token: session, status: 200 },
  { name: 'delete a project', method: 'DELETE', path: '/api/@alice/gone', token: session, status: 200 },
  { name: 'liveness', method: 'GET', path: '/healthz', status: 200 },
  { name: 'readiness', method: 'GET', path: '/readyz', status: 200 },
  { name: 'the reference', method: 'GET', path: '/openapi.json', status: 200 },
  // Error answers: their body is the Error component (checked by openapi-check).
  { name: 'an unknown project', method: 'GET', path: '/api/@alice/nothing', token: session, status: 404 },
  { name: 'no credentials', method: 'GET', path: '/api/me', status: 401 },
  { name: 'a stranger to the project', method: 'GET', path: `${P}/members`, token: s => s.bobSession, status: 403 },
  { name: 'a bad body', method: 'POST', path: `${C}/set`, token: session, body: { path: 'x', extra: 1 }, status: 400 },
  { name: 'logout', method: 'POST', path: '/api/auth/logout', token: session, status: 200 }
]

let webhookApp: WebhookApp
let document: any
const url = () => webhookApp.app.url

beforeAll(async () => {
  webhookApp = await startWebhookApp()
  document = await (await fetch(`${url()}/openapi.json`)).json()
})

afterAll(async () => { await webhookApp?.close() })

const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
/** The shared/api schema as its output side, where zod closes objects: an undocumented member fails. */
const closed = new Map<ResponseSchemaName, ReturnType<typeof ajv.compile>>()
function closedValidator (name: ResponseSchemaName) {
  let validate = closed.get(name)
  if (!validate) {
    validate = ajv.compile(z.toJSONSchema(RESPONSE_SCHEMAS[name], { io: 'output', target: 'draft-2020-12', unrepresentable: 'any' }))
    closed.set(name, validate)
  }
  return validate
}

/** The documentation of "GET /api/{username}/{projectSlug}"-like keys. */
const DOCUMENTED = new Map(API_OPERATIONS.map(op => [`${op.method.toUpperCase()} ${op.path}`, op]))
const covered = new Set<string>()

describe('every documented response shape, against a running app', () => {
  const state = {} as State
  for (const row of ROWS) {
    it(`${row.name}: ${row.method} ${typeof row.path === 'string' ? row.path : '…'} → ${row.status}`, async () => {
      await row.before?.(state)
      const path = typeof row.path === 'function' ? row.path(state) : row.path
      const body = typeof row.body === 'function' ? (row.body as (s: State) => unknown)(state) : row.body
      // `call` checks the answer against /openapi.json (status, body, headers) before it returns.
      const r = await call(url(), row.method, path, { token: row.token?.(state), body, headers: row.headers })
      expect(r.status, r.text.slice(0, 500)).toBe(row.status)
      const template = matchPath(Object.keys(document.paths), new URL(path, 'http://x').pathname)
      const op = DOCUMENTED.get(`${row.method} ${template}`)
      expect(op, `${row.method} ${path} is documented`).toBeDefined()
      if (r.status === op?.success.status && op.success.schema) {
        covered.add(`${row.method} ${template}`)
        const validate = closedValidator(op.success.schema)
        expect(validate(r.body), `${op.success.schema}: ${ajv.errorsText(validate.errors)} in ${r.text.slice(0, 500)}`).toBe(true)
      }
      row.keep?.(r, state)
    })
  }

  it('covers every documented operation that answers JSON (a new one needs a row above)', () => {
    const served = new Set(Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) => Object.keys(item).map(method => `${method.toUpperCase()} ${path}`)))
    const wanted = API_OPERATIONS.filter(op => op.success.schema && served.has(`${op.method.toUpperCase()} ${op.path}`)).map(op => `${op.method.toUpperCase()} ${op.path}`)
    expect(wanted.length).toBeGreaterThan(30)
    expect(wanted.filter(k => !covered.has(k))).toEqual([])
  })

  it('the change log rows saw every kind of entry the table wrote, actors included', async () => {
    // The table ends with a logout: a new session reads the log.
    const login = await call(url(), 'POST', '/api/auth/login', { body: { username: 'alice', password: 'correct horse battery staple' } })
    const r = await call(url(), 'GET', `${C}/changes`, { token: login.body.token })
    const ops = new Set((r.body.changes as Array<{ op: string }>).map(c => c.op))
    expect([...ops].sort()).toEqual(['batch', 'decrement', 'delete', 'increment', 'insert', 'patch', 'push', 'revert', 'set', 'update'])
    expect(closedValidator('ChangesPage')(r.body)).toBe(true)
  })
})

describe('the document built from shared/api', () => {
  it('has every shared/api schema as a component, generated from it', () => {
    for (const name of Object.keys(RESPONSE_SCHEMAS)) expect(document.components.schemas, name).toHaveProperty(name)
    const { $schema: _s, ...expected } = z.toJSONSchema(RESPONSE_SCHEMAS.Me, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>
    expect(document.components.schemas.Me).toEqual(expected)
  })

  it('passes the independent OpenAPI validator', async () => {
    const result = await new Validator().validate(structuredClone(document))
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  it('a drift fails: an answer with an undocumented member, or missing one, is refused', () => {
    const me = { username: '@alice', createdAt: new Date().toISOString() }
    expect(closedValidator('Me')(me)).toBe(true)
    expect(closedValidator('Me')({ ...me, email: 'a@example.com' })).toBe(false)
    expect(closedValidator('Me')({ username: '@alice' })).toBe(false)
  })
})
