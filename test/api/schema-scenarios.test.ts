// Content schemas and narrowed keys over HTTP and Socket.IO (docs/design.md §12), one table
// per concern, every status each endpoint answers: the schema endpoints, writes refused by a
// schema (422 with the violations), narrowed keys (403 KEY_SCOPE_DENIED) and their creation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BATCH_MESSAGE } from '../../shared/batch.js'
import { PATCH_MESSAGE } from '../../shared/json-patch.js'
import { SUCCESS_MESSAGES } from '../../shared/operation-table.js'
import { call, createKey } from '../support/http.js'
import type { TestApp } from '../support/temp-app.js'
import { connect, subscribe } from '../realtime/client.js'
import { startContentApp, PROJECT, type ContentFixture } from './fixture.js'
import { ownerTarget, runScenario, type Scenario } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

interface Fixture extends ContentFixture {
  /** increment only, at or below votes. */
  votesKey: string
  /** any operation, at or below data.public. */
  publicKey: string
  /** set only, anywhere. */
  setOnlyKey: string
  /** read, at or below data.public. */
  publicReadKey: string
}

type Row = Scenario<Fixture>

const INVENTORY = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    stock: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
    votes: { type: 'object', additionalProperties: { type: 'integer' } }
  },
  required: ['stock']
}
const BASE = { stock: { apples: 3, pears: 1 }, tags: ['fruit'], votes: { a: 0, b: 0 }, data: { public: { likes: 1 }, private: { n: 1 } } }
const SCHEMA_URL = `${PROJECT}/schema`
const content = (op: string) => `${PROJECT}/content/${op}`
const batch = { method: 'POST' as const, url: `${PROJECT}/content/batch` }
const patch = { method: 'PATCH' as const, url: `${PROJECT}/content`, headers: { 'content-type': 'application/json-patch+json' } }
const revert = { method: 'POST' as const, url: `${PROJECT}/content/revert` }

/** Leaves the project without a schema. */
const withoutSchema = async (url: string, f: Fixture) => {
  const r = await call(url, 'DELETE', SCHEMA_URL, { token: f.ownerSession })
  if (r.status !== 200 && r.status !== 404) throw new Error(`remove schema: ${r.status} ${r.text}`)
}

/** The project with `schema`, over content that satisfies it. */
const withSchemaOf = (schema: unknown) => async (url: string, f: Fixture) => {
  await withoutSchema(url, f)
  const reset = await call(url, 'POST', `${PROJECT}/content`, { token: f.ownerSession, body: BASE })
  if (reset.status !== 200) throw new Error(`reset: ${reset.status} ${reset.text}`)
  const r = await call(url, 'PUT', SCHEMA_URL, { token: f.ownerSession, body: schema })
  if (r.status !== 200) throw new Error(`set schema: ${r.status} ${r.text}`)
}
const withSchema = withSchemaOf(INVENTORY)
/** A pattern that takes the backtracking engine minutes on "aaaa…b"; the linear engine, microseconds. */
const CATASTROPHIC = { ...INVENTORY, properties: { ...INVENTORY.properties, title: { type: 'string', pattern: '^(a+)+$' } } }

const violation = (errors: Array<{ path: string, message: string | RegExp }>) => ({
  message: expect.stringMatching(/^The content would not match the project's schema: /),
  code: 'SCHEMA_VIOLATION',
  errors: errors.map(e => ({ path: e.path, message: typeof e.message === 'string' ? e.message : expect.stringMatching(e.message) }))
})

/**
 * A history for reverts: content that breaks INVENTORY, then BASE, then the schema. The
 * scenario's reset writes BASE once more, so at the request the version V has BASE, V - 1
 * BASE, V - 2 the breaking content.
 */
const withHistoryThenSchema = async (url: string, f: Fixture) => {
  await withoutSchema(url, f)
  for (const body of [{ stock: { apples: 'lots' } }, BASE]) {
    const r = await call(url, 'POST', `${PROJECT}/content`, { token: f.ownerSession, body })
    if (r.status !== 200) throw new Error(`history: ${r.status} ${r.text}`)
  }
  const r = await call(url, 'PUT', SCHEMA_URL, { token: f.ownerSession, body: INVENTORY })
  if (r.status !== 200) throw new Error(`set schema: ${r.status} ${r.text}`)
}

/** A schema whose JSON nests `depth` levels: {"not": {"not": … true}}. */
function nested (depth: number): unknown {
  let schema: unknown = true
  for (let i = 0; i < depth; i++) schema = { not: schema }
  return schema
}

const SCHEMA_ENDPOINTS: Row[] = [
  { name: 'PUT sets the schema: 200 with who and when', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: INVENTORY, expectStatus: 200, expectBody: { message: 'Schema set', setBy: '@alice', setAt: expect.stringMatching(/^\d{4}-/) } },
  { name: 'PUT replaces a schema', prepare: withSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: { type: 'object' }, expectStatus: 200, expectBody: { message: 'Schema set', setBy: '@alice', setAt: expect.any(String) } },
  { name: 'PUT accepts the boolean schema true', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: true, expectStatus: 200 },
  { name: 'GET returns the schema itself', prepare: withSchema, method: 'GET', url: SCHEMA_URL, token: f => f.ownerSession, expectStatus: 200, expectBody: INVENTORY, expectHeaders: { 'last-modified': /GMT$/ } },
  { name: 'DELETE removes it', prepare: withSchema, method: 'DELETE', url: SCHEMA_URL, token: f => f.ownerSession, expectStatus: 200, expectBody: { message: 'Schema removed' } },
  { name: '400 for an unknown type', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: { type: 'nonsense' }, expectStatus: 400, expectCode: 'INVALID_SCHEMA' },
  { name: '400 for an unknown keyword', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: { type: 'object', requird: ['x'] }, expectStatus: 400, expectCode: 'INVALID_SCHEMA' },
  { name: '400 for a remote $ref (never fetched)', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: { $ref: 'https://example.com/schema.json' }, expectStatus: 400, expectCode: 'INVALID_SCHEMA' },
  { name: '400 for another draft', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: { $schema: 'http://json-schema.org/draft-07/schema#' }, expectStatus: 400, expectCode: 'INVALID_SCHEMA' },
  { name: '400 for a schema nested deeper than 128 levels of JSON', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: nested(129), expectStatus: 400, expectCode: 'INVALID_SCHEMA' },
  { name: '400, not a crash, for a schema nested 10,000 levels deep', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, raw: '{"not":'.repeat(10_000) + 'true' + '}'.repeat(10_000), expectStatus: 400, expectCode: 'INVALID_SCHEMA' },
  { name: 'PUT accepts a schema 128 levels deep', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: nested(128), expectStatus: 200 },
  { name: '400 for a pattern that needs backtracking (a backreference)', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: { properties: { a: { type: 'string', pattern: '^(a)\\1$' } } }, expectStatus: 400, expectCode: 'INVALID_SCHEMA' },
  { name: '400 for a patternProperties key that is not a regular expression', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: { patternProperties: { '(': true } }, expectStatus: 400, expectCode: 'INVALID_SCHEMA' },
  { name: '400 for a number', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: 5, expectStatus: 400, expectCode: 'INVALID_SCHEMA' },
  // docs/design.md §13b: an empty body is not the empty schema {} (which accepts everything).
  { name: '400 INVALID_JSON for an empty body (Content-Length: 0)', prepare: withSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, raw: '', expectStatus: 400, expectCode: 'INVALID_JSON' },
  { name: '404 for PUT …/schema/ (a trailing slash)', prepare: withoutSchema, method: 'PUT', url: `${SCHEMA_URL}/`, token: f => f.ownerSession, body: INVENTORY, expectStatus: 404, expectCode: 'NOT_FOUND' },
  { name: '400 for a body that is not JSON', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, raw: '{"type":', expectStatus: 400, expectCode: 'INVALID_JSON' },
  { name: '400 for a username without "@"', method: 'PUT', url: '/api/alice/demo/schema', token: f => f.ownerSession, body: INVENTORY, expectStatus: 400, expectCode: 'INVALID_USERNAME' },
  { name: '401 without authentication', method: 'PUT', url: SCHEMA_URL, token: () => undefined, body: INVENTORY, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { name: '401 with a revoked key', method: 'GET', url: SCHEMA_URL, token: f => f.revokedKey, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '403 for a user without access', method: 'GET', url: SCHEMA_URL, token: f => f.strangerSession, expectStatus: 403, expectCode: 'FORBIDDEN' },
  { name: '403 for the owner\'s API key (a session is needed)', method: 'PUT', url: SCHEMA_URL, token: f => f.writeKey, body: INVENTORY, expectStatus: 403, expectCode: 'SESSION_REQUIRED' },
  { name: '403 for an editor', method: 'DELETE', url: SCHEMA_URL, token: f => f.editorSession, expectStatus: 403, expectCode: 'OWNER_REQUIRED' },
  { name: '403 for a viewer reading it', method: 'GET', url: SCHEMA_URL, token: f => f.viewerSession, expectStatus: 403, expectCode: 'OWNER_REQUIRED' },
  { name: '404 for a missing project', method: 'GET', url: '/api/@alice/nothing-here/schema', token: f => f.ownerSession, expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' },
  { name: '404 for a missing user', method: 'PUT', url: '/api/@nobody-here/demo/schema', token: f => f.ownerSession, body: INVENTORY, expectStatus: 404, expectCode: 'USER_NOT_FOUND' },
  { name: 'GET 404 when there is no schema', prepare: withoutSchema, method: 'GET', url: SCHEMA_URL, token: f => f.ownerSession, expectStatus: 404, expectCode: 'SCHEMA_NOT_FOUND' },
  { name: 'DELETE 404 when there is no schema', prepare: withoutSchema, method: 'DELETE', url: SCHEMA_URL, token: f => f.ownerSession, expectStatus: 404, expectCode: 'SCHEMA_NOT_FOUND' },
  { name: '405 for POST', method: 'POST', url: SCHEMA_URL, token: f => f.ownerSession, body: INVENTORY, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED', expectHeaders: { allow: 'DELETE, GET, HEAD, PUT' } },
  {
    name: '409 when the current content breaks it, with the violations; nothing stored',
    prepare: withoutSchema,
    before: { stock: { apples: 'lots' } },
    method: 'PUT',
    url: SCHEMA_URL,
    token: f => f.ownerSession,
    body: INVENTORY,
    expectStatus: 409,
    expectBody: violation([{ path: 'stock.apples', message: 'must be integer' }])
  },
  { name: '409 with path "" for a missing required member', prepare: withoutSchema, before: { other: 1 }, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, body: INVENTORY, expectStatus: 409, expectBody: violation([{ path: '', message: "must have required property 'stock'" }]) },
  { name: '413 for a schema over the body limit', prepare: withoutSchema, method: 'PUT', url: SCHEMA_URL, token: f => f.ownerSession, raw: JSON.stringify({ description: 'x'.repeat(1_100_000) }), expectStatus: 413, expectCode: 'BODY_TOO_LARGE' }
]

const post = (op: string, name: string, body: unknown, expected: Partial<Row>): Row =>
  ({ name, prepare: withSchema, method: 'POST', url: content(op), token: f => f.writeKey, body, expectStatus: 200, ...expected })

const WRITES_WITH_SCHEMA: Row[] = [
  post('increment', 'increment within the schema: 200', { path: 'stock.apples', value: 2 }, { expectBody: { message: SUCCESS_MESSAGES.increment }, expectContent: { ...BASE, stock: { apples: 5, pears: 1 } } }),
  post('set', 'set of a new valid member: 200', { path: 'stock.plums', value: 4 }, { expectContent: { ...BASE, stock: { apples: 3, pears: 1, plums: 4 } } }),
  post('set', 'set outside the schema\'s properties: 200', { path: 'data.private.n', value: 'anything' }, { expectContent: { ...BASE, data: { ...BASE.data, private: { n: 'anything' } } } }),
  post('push', 'push of a string: 200', { path: 'tags', value: 'red' }, { expectContent: { ...BASE, tags: ['fruit', 'red'] } }),
  post('set', 'set "lots" where an integer belongs: 422', { path: 'stock.apples', value: 'lots' }, { expectStatus: 422, expectBody: violation([{ path: 'stock.apples', message: 'must be integer' }]) }),
  post('decrement', 'decrement below the minimum: 422', { path: 'stock.pears', value: 2 }, { expectStatus: 422, expectBody: violation([{ path: 'stock.pears', message: 'must be >= 0' }]) }),
  post('increment', 'increment by a fraction of an integer: 422', { path: 'votes.a', value: 0.5 }, { expectStatus: 422, expectBody: violation([{ path: 'votes.a', message: 'must be integer' }]) }),
  post('push', 'push of a number into strings: 422', { path: 'tags', value: 7 }, { expectStatus: 422, expectBody: violation([{ path: 'tags.1', message: 'must be string' }]) }),
  post('insert', 'insert past maxItems: 422', { path: 'tags', index: 0, value: 'a' }, { before: { ...BASE, tags: ['x', 'y', 'z'] }, expectStatus: 422, expectBody: violation([{ path: 'tags', message: 'must NOT have more than 3 items' }]) }),
  post('delete', 'delete of a required member: 422 at the root', { path: 'stock' }, { expectStatus: 422, expectBody: violation([{ path: '', message: "must have required property 'stock'" }]) }),
  { name: 'update to content that breaks it: 422', prepare: withSchema, method: 'POST', url: `${PROJECT}/content`, token: f => f.writeKey, body: { tags: 'none' }, expectStatus: 422, expectCode: 'SCHEMA_VIOLATION' },
  { name: 'update to valid content: 200', prepare: withSchema, method: 'POST', url: `${PROJECT}/content`, token: f => f.ownerSession, body: { stock: {} }, expectStatus: 200, expectContent: { stock: {} } },
  { ...post('set', 'a bad path is still 400 first', { path: 'stock..apples', value: 'lots' }, { expectStatus: 400, expectCode: 'INVALID_PATH' }) },
  { ...post('set', 'a stale If-Match is 412 before the schema', { path: 'stock.apples', value: 'lots' }, { expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }), headers: (_f, v) => ({ 'if-match': `"${v - 1}"` }) },
  { ...post('set', 'a catastrophic pattern against a crafted string: 422 at once (linear-time patterns)', { path: 'title', value: `${'a'.repeat(5000)}b` }, { expectStatus: 422, expectBody: violation([{ path: 'title', message: 'must match pattern "^(a+)+$"' }]) }), prepare: withSchemaOf(CATASTROPHIC) },
  { ...post('set', 'the same pattern accepts a matching string', { path: 'title', value: 'a'.repeat(5000) }, { expectContent: { ...BASE, title: 'a'.repeat(5000) } }), prepare: withSchemaOf(CATASTROPHIC) },
  post('increment', 'a wrong type at the path is 400 before the schema', { path: 'tags', value: 1 }, { expectStatus: 400, expectCode: 'NOT_A_NUMBER' }),
  // Batches, patches and reverts: the result as a whole (docs/design.md §10, §12).
  { ...batch, name: 'batch within the schema: 200', prepare: withSchema, token: f => f.writeKey, body: { operations: [{ op: 'increment', path: 'stock.apples' }, { op: 'push', path: 'tags', value: 'red' }] }, expectStatus: 200, expectBody: { message: BATCH_MESSAGE, version: expect.any(Number) }, expectContent: { ...BASE, stock: { apples: 4, pears: 1 }, tags: ['fruit', 'red'] } },
  { ...batch, name: 'batch passing through a breaking state to a valid result: 200', prepare: withSchema, token: f => f.writeKey, body: { operations: [{ op: 'decrement', path: 'stock.pears', value: 5 }, { op: 'increment', path: 'stock.pears', value: 4 }] }, expectStatus: 200, expectContent: { ...BASE, stock: { apples: 3, pears: 0 } } },
  { ...batch, name: 'batch whose result breaks it: 422 for the batch as a whole (no operation), nothing applied', prepare: withSchema, token: f => f.writeKey, body: { operations: [{ op: 'increment', path: 'stock.apples' }, { op: 'set', path: 'stock.pears', value: 'many' }] }, expectStatus: 422, expectBody: violation([{ path: 'stock.pears', message: 'must be integer' }]) },
  { ...batch, name: 'batch deleting a required member: 422 at the root', prepare: withSchema, token: f => f.writeKey, body: { operations: [{ op: 'test', path: 'stock.apples', value: 3 }, { op: 'delete', path: 'stock' }] }, expectStatus: 422, expectBody: violation([{ path: '', message: "must have required property 'stock'" }]) },
  { ...batch, name: 'batch: a failed test is 409 with its operation, before the schema', prepare: withSchema, token: f => f.writeKey, body: { operations: [{ op: 'set', path: 'stock.apples', value: 'lots' }, { op: 'test', path: 'stock.pears', value: 9 }] }, expectStatus: 409, expectCode: 'TEST_FAILED', expectOperation: 1 },
  { ...patch, name: 'JSON Patch within the schema: 200', prepare: withSchema, token: f => f.writeKey, body: [{ op: 'replace', path: '/stock/apples', value: 9 }], expectStatus: 200, expectBody: { message: PATCH_MESSAGE, version: expect.any(Number) }, expectContent: { ...BASE, stock: { apples: 9, pears: 1 } } },
  { ...patch, name: 'JSON Patch whose result breaks it: 422, nothing applied', prepare: withSchema, token: f => f.writeKey, body: [{ op: 'replace', path: '/stock/apples', value: 9 }, { op: 'add', path: '/tags/-', value: 7 }], expectStatus: 422, expectBody: violation([{ path: 'tags.1', message: 'must be string' }]) },
  { ...patch, name: 'JSON Patch removing a required member: 422 at the root', prepare: withSchema, token: f => f.writeKey, body: [{ op: 'remove', path: '/stock' }], expectStatus: 422, expectBody: violation([{ path: '', message: "must have required property 'stock'" }]) },
  { ...revert, name: 'revert to content the schema accepts: 200', prepare: withHistoryThenSchema, token: f => f.writeKey, bodyAt: v => ({ version: v - 1 }), expectStatus: 200, expectContent: BASE },
  { ...revert, name: 'revert to content the schema (set since) breaks: 422, nothing changed', prepare: withHistoryThenSchema, token: f => f.writeKey, bodyAt: v => ({ version: v - 2 }), expectStatus: 422, expectBody: violation([{ path: 'stock.apples', message: 'must be integer' }]) },
  { ...revert, name: 'revert to version 0 (empty content) breaks required: 422 at the root', prepare: withSchema, token: f => f.writeKey, body: { version: 0 }, expectStatus: 422, expectBody: violation([{ path: '', message: "must have required property 'stock'" }]) }
]

const scoped = (op: string, name: string, token: (f: Fixture) => string, body: unknown, expected: Partial<Row>): Row =>
  ({ name, prepare: withoutSchema, method: 'POST', url: content(op), token, body, expectStatus: 200, ...expected })

const NARROWED_KEYS: Row[] = [
  scoped('increment', 'increment votes.a with the votes key: 200', f => f.votesKey, { path: 'votes.a', value: 1 }, { expectContent: { ...BASE, votes: { a: 1, b: 0 } } }),
  scoped('increment', 'increment a new votes.c: 200', f => f.votesKey, { path: 'votes.c', value: 1 }, { expectContent: { ...BASE, votes: { a: 0, b: 0, c: 1 } } }),
  scoped('set', 'set with the increment-only key: 403', f => f.votesKey, { path: 'votes.a', value: 100 }, { expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' }),
  scoped('increment', 'increment outside its paths: 403', f => f.votesKey, { path: 'stock.apples', value: 1 }, { expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' }),
  scoped('increment', 'a path that only starts with the same letters: 403', f => f.votesKey, { path: 'votesX', value: 1 }, { expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' }),
  scoped('increment', 'an invalid path is 400 before the scope', f => f.votesKey, { path: 'votes..a', value: 1 }, { expectStatus: 400, expectCode: 'INVALID_PATH' }),
  scoped('increment', 'within scope, the operation\'s own 400 stays', f => f.votesKey, { path: 'votes', value: 1 }, { expectStatus: 400, expectCode: 'NOT_A_NUMBER' }),
  scoped('set', 'any operation at or below data.public: 200', f => f.publicKey, { path: 'data.public.title', value: 'hi' }, { expectContent: { ...BASE, data: { ...BASE.data, public: { likes: 1, title: 'hi' } } } }),
  scoped('delete', 'delete at its own path: 200', f => f.publicKey, { path: 'data.public' }, { expectContent: { ...BASE, data: { private: { n: 1 } } } }),
  scoped('set', 'set above its path: 403', f => f.publicKey, { path: 'data', value: {} }, { expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' }),
  scoped('set', 'set beside its path: 403', f => f.publicKey, { path: 'data.private.n', value: 2 }, { expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' }),
  scoped('set', 'an ops-only key sets anywhere: 200', f => f.setOnlyKey, { path: 'stock.apples', value: 9 }, { expectContent: { ...BASE, stock: { apples: 9, pears: 1 } } }),
  scoped('push', 'an ops-only key cannot push: 403', f => f.setOnlyKey, { path: 'tags', value: 'x' }, { expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' }),
  { name: 'update (whole content) with a narrowed key: 403', prepare: withoutSchema, method: 'POST', url: `${PROJECT}/content`, token: f => f.setOnlyKey, body: {}, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { name: 'GET of the whole content with a narrowed key: 403', method: 'GET', url: `${PROJECT}/content`, token: f => f.votesKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { name: 'GET ?path= inside its paths: 200', method: 'GET', url: `${PROJECT}/content?path=votes.a`, token: f => f.votesKey, expectStatus: 200, expectBody: 0 },
  { name: 'GET ?path= of its path itself: 200', method: 'GET', url: `${PROJECT}/content?path=data.public`, token: f => f.publicReadKey, expectStatus: 200, expectBody: { likes: 1 } },
  { name: 'GET ?path= outside its paths: 403', method: 'GET', url: `${PROJECT}/content?path=data.private`, token: f => f.publicReadKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  scoped('set', 'a narrowed read key cannot write, even at its path: 403 KEY_PERMISSION_DENIED', f => f.publicReadKey, { path: 'data.public.likes', value: 2 }, { expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' }),
  // Batches: every operation must be allowed; a test is a read at its path (docs/design.md §12).
  { ...batch, name: 'batch of allowed operations (a test inside its paths): 200', prepare: withoutSchema, token: f => f.votesKey, body: { operations: [{ op: 'test', path: 'votes.a', value: 0 }, { op: 'increment', path: 'votes.a' }, { op: 'increment', path: 'votes.b', value: 2 }] }, expectStatus: 200, expectContent: { ...BASE, votes: { a: 1, b: 2 } } },
  { ...batch, name: 'batch with one operation outside its paths: 403 naming it, nothing applied', prepare: withoutSchema, token: f => f.votesKey, body: { operations: [{ op: 'increment', path: 'votes.a' }, { op: 'increment', path: 'stock.apples' }] }, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED', expectOperation: 1 },
  { ...batch, name: 'batch with an op the key may not use: 403 naming it', prepare: withoutSchema, token: f => f.votesKey, body: { operations: [{ op: 'increment', path: 'votes.a' }, { op: 'increment', path: 'votes.b' }, { op: 'set', path: 'votes.a', value: 100 }] }, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED', expectOperation: 2 },
  { ...batch, name: 'batch with a test outside its paths: 403 (a test reads)', prepare: withoutSchema, token: f => f.votesKey, body: { operations: [{ op: 'test', path: 'stock.apples', value: 3 }, { op: 'increment', path: 'votes.a' }] }, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED', expectOperation: 0 },
  { ...batch, name: 'batch of an ops-only key: a test anywhere and its op: 200', prepare: withoutSchema, token: f => f.setOnlyKey, body: { operations: [{ op: 'test', path: 'stock.apples', value: 3 }, { op: 'set', path: 'stock.apples', value: 4 }] }, expectStatus: 200, expectContent: { ...BASE, stock: { apples: 4, pears: 1 } } },
  { ...batch, name: 'batch: a malformed operation is 400 before the scope', prepare: withoutSchema, token: f => f.votesKey, body: { operations: [{ op: 'increment', path: 'stock..apples' }] }, expectStatus: 400, expectCode: 'INVALID_PATH', expectOperation: 0 },
  // Whole-content writes and reads need an unnarrowed key.
  { ...patch, name: 'JSON Patch with a narrowed key, even inside its paths: 403', prepare: withoutSchema, token: f => f.votesKey, body: [{ op: 'replace', path: '/votes/a', value: 1 }], expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { ...patch, name: 'JSON Patch with an ops-only key: 403', prepare: withoutSchema, token: f => f.setOnlyKey, body: [{ op: 'replace', path: '/stock/apples', value: 1 }], expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { ...revert, name: 'revert with a path-narrowed key: 403', prepare: withoutSchema, token: f => f.publicKey, bodyAt: v => ({ version: v - 1 }), expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { ...revert, name: 'revert with an ops-only key: 403', prepare: withoutSchema, token: f => f.setOnlyKey, bodyAt: v => ({ version: v - 1 }), expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { ...revert, name: 'revert with an unnarrowed key: 200', prepare: withoutSchema, token: f => f.writeKey, bodyAt: v => ({ version: v }), expectStatus: 200, expectContent: BASE },
  { name: 'GET ?version= with a narrowed key: 403', method: 'GET', url: (_f, v) => `${PROJECT}/content?version=${v}`, token: f => f.votesKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { name: 'GET ?version=&path= inside its paths: still 403 (a past version is whole-content)', method: 'GET', url: (_f, v) => `${PROJECT}/content?version=${v}&path=votes.a`, token: f => f.votesKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { name: 'GET ?version= with an unnarrowed key: 200', method: 'GET', url: (_f, v) => `${PROJECT}/content?version=${v}`, token: f => f.readKey, expectStatus: 200, expectBody: BASE },
  { name: 'GET …/content/changes with a narrowed key: 403', method: 'GET', url: `${PROJECT}/content/changes`, token: f => f.votesKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { name: 'GET …/content/changes with a narrowed key: 403 before a bad since', method: 'GET', url: `${PROJECT}/content/changes?since=x`, token: f => f.publicReadKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { name: 'GET …/content/events with a narrowed key: 403 (plain JSON, no stream)', method: 'GET', url: `${PROJECT}/content/events`, token: f => f.setOnlyKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { name: 'GET …/content/events?since= with a narrowed key: 403', method: 'GET', url: (_f, v) => `${PROJECT}/content/events?since=${v}`, token: f => f.votesKey, expectStatus: 403, expectCode: 'KEY_SCOPE_DENIED' },
  { ...scoped('set', 'a narrowed key\'s write is still checked against the schema: 422', f => f.publicKey, { path: 'data.public.likes', value: 2 }, {}), prepare: withSchema, token: f => f.votesKey, url: content('increment'), body: { path: 'votes.a', value: 0.5 }, expectStatus: 422, expectCode: 'SCHEMA_VIOLATION' }
]

const KEY_CREATION: Row[] = [
  {
    name: 'POST /api/keys with paths and ops: 201 showing the narrowing',
    method: 'POST',
    url: '/api/keys',
    token: f => f.ownerSession,
    body: { name: 'widget', permission: 'write', paths: ['votes', 'data.public'], ops: ['increment'] },
    expectStatus: 201,
    expectBody: { id: expect.any(String), key: expect.stringMatching(/^cdk_/), prefix: expect.any(String), name: 'widget', permission: 'write', projects: null, paths: ['votes', 'data.public'], ops: ['increment'], expiresAt: null, createdAt: expect.any(String) }
  },
  { name: '400 for an invalid path in paths', method: 'POST', url: '/api/keys', token: f => f.ownerSession, body: { name: 'w', permission: 'write', paths: ['votes..a'] }, expectStatus: 400, expectCode: 'INVALID_PATH' },
  { name: '400 for a path starting with "$"', method: 'POST', url: '/api/keys', token: f => f.ownerSession, body: { name: 'w', permission: 'write', paths: ['$where'] }, expectStatus: 400, expectCode: 'INVALID_PATH' },
  { name: '400 for an empty path', method: 'POST', url: '/api/keys', token: f => f.ownerSession, body: { name: 'w', permission: 'write', paths: [''] }, expectStatus: 400, expectCode: 'INVALID_PATH' },
  { name: '400 for an unknown op', method: 'POST', url: '/api/keys', token: f => f.ownerSession, body: { name: 'w', permission: 'write', ops: ['explode'] }, expectStatus: 400, expectCode: 'INVALID_BODY' },
  { name: '400 for update in ops (a narrowed key never replaces the content)', method: 'POST', url: '/api/keys', token: f => f.ownerSession, body: { name: 'w', permission: 'write', ops: ['update'] }, expectStatus: 400, expectCode: 'INVALID_BODY' },
  { name: '400 for an empty ops list', method: 'POST', url: '/api/keys', token: f => f.ownerSession, body: { name: 'w', permission: 'write', ops: [] }, expectStatus: 400, expectCode: 'INVALID_BODY' },
  { name: '400 for paths that is not a list', method: 'POST', url: '/api/keys', token: f => f.ownerSession, body: { name: 'w', permission: 'write', paths: 'votes' }, expectStatus: 400, expectCode: 'INVALID_BODY' },
  { name: '403 with an API key (a session is needed)', method: 'POST', url: '/api/keys', token: f => f.writeKey, body: { name: 'w', permission: 'write', paths: ['votes'] }, expectStatus: 403, expectCode: 'SESSION_REQUIRED' }
]

describe('content schema and narrowed keys (docs/design.md §12)', () => {
  let app: TestApp
  let fixture: Fixture
  beforeAll(async () => {
    const started = await startContentApp({}, { realtime: true })
    app = started.app
    const base = started.fixture
    const key = async (spec: Record<string, unknown>) => (await createKey(app.url, base.ownerSession, { name: 'narrowed', ...spec })).key
    fixture = {
      ...base,
      votesKey: await key({ permission: 'write', paths: ['votes'], ops: ['increment'] }),
      publicKey: await key({ permission: 'write', paths: ['data.public'] }),
      setOnlyKey: await key({ permission: 'write', ops: ['set'] }),
      publicReadKey: await key({ permission: 'read', paths: ['data.public'] })
    }
  })
  afterAll(async () => { await app.close() })

  const target = ownerTarget(() => app.url, () => fixture, BASE)

  const groups: Array<[string, Row[]]> = [['schema endpoints', SCHEMA_ENDPOINTS], ['writes with a schema', WRITES_WITH_SCHEMA], ['narrowed keys', NARROWED_KEYS], ['creating narrowed keys', KEY_CREATION]]
  for (const [name, rows] of groups) {
    describe(name, () => {
      for (const row of rows) it(row.name, async () => { await runScenario(target, row) })
    })
  }

  it('an empty PUT keeps the schema that was set, and sets none where there was none', async () => {
    await withSchema(app.url, fixture)
    const empty = await call(app.url, 'PUT', SCHEMA_URL, { token: fixture.ownerSession, raw: '', headers: { 'content-type': 'application/json' } })
    expect(empty.status, empty.text).toBe(400)
    expect(empty.body.code).toBe('INVALID_JSON')
    expect((await call(app.url, 'GET', SCHEMA_URL, { token: fixture.ownerSession })).body).toEqual(INVENTORY)
    await withoutSchema(app.url, fixture)
    expect((await call(app.url, 'PUT', SCHEMA_URL, { token: fixture.ownerSession, raw: '' })).status).toBe(400)
    expect((await call(app.url, 'GET', SCHEMA_URL, { token: fixture.ownerSession })).status).toBe(404)
  })

  it('setting a schema changes neither the content nor its version', async () => {
    await withoutSchema(app.url, fixture)
    const before = await call(app.url, 'GET', `${PROJECT}/content`, { token: fixture.ownerSession })
    expect((await call(app.url, 'PUT', SCHEMA_URL, { token: fixture.ownerSession, body: INVENTORY })).status).toBe(200)
    const after = await call(app.url, 'GET', `${PROJECT}/content`, { token: fixture.ownerSession })
    expect(after.body).toEqual(before.body)
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'))
  })

  it('GET of the project says whether it has a schema (hasSchema), to every member, so no client asks for a 404', async () => {
    const hasSchema = async (token: string) => {
      const r = await call(app.url, 'GET', PROJECT, { token })
      expect(r.status).toBe(200)
      return r.body.hasSchema as unknown
    }
    await withoutSchema(app.url, fixture)
    expect(await hasSchema(fixture.ownerSession)).toBe(false)
    await withSchema(app.url, fixture)
    expect(await hasSchema(fixture.ownerSession)).toBe(true)
    expect(await hasSchema(fixture.viewerSession)).toBe(true)
    await withoutSchema(app.url, fixture)
    expect(await hasSchema(fixture.editorSession)).toBe(false)
    // The list stays as it was: one schema read per project would make it cost more.
    const list = await call(app.url, 'GET', '/api/projects', { token: fixture.ownerSession })
    expect((list.body.projects as Array<Record<string, unknown>>).every(p => !('hasSchema' in p))).toBe(true)
  })

  it('GET /api/keys lists each key\'s narrowing', async () => {
    const r = await call(app.url, 'GET', '/api/keys', { token: fixture.ownerSession })
    expect(r.status).toBe(200)
    const narrowing = (r.body.keys as Array<{ paths: unknown, ops: unknown, permission: string }>).map(k => ({ paths: k.paths, ops: k.ops, permission: k.permission }))
    expect(narrowing).toEqual(expect.arrayContaining([
      { paths: ['votes'], ops: ['increment'], permission: 'write' },
      { paths: ['data.public'], ops: null, permission: 'write' },
      { paths: null, ops: ['set'], permission: 'write' },
      { paths: null, ops: null, permission: 'write' }
    ]))
  })

  it('Socket.IO: a narrowed key cannot subscribe, with or without since (the whole content); an unnarrowed one can', async () => {
    const narrowed = await connect(app.url, fixture.votesKey)
    const unnarrowed = await connect(app.url, fixture.writeKey)
    try {
      expect(await subscribe(narrowed, '@alice/demo')).toEqual({ ok: false, code: 'KEY_SCOPE_DENIED', message: expect.any(String) })
      // Resuming from a version reads the change log, which is whole-content too.
      expect(await narrowed.timeout(10_000).emitWithAck('subscribe', { project: '@alice/demo', since: 0 })).toEqual({ ok: false, code: 'KEY_SCOPE_DENIED', message: expect.any(String) })
      expect(await subscribe(unnarrowed, '@alice/demo')).toMatchObject({ ok: true })
    } finally {
      narrowed.close()
      unnarrowed.close()
    }
  })
})
