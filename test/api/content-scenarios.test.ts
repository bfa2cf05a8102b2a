// Every status of the spec's error table (§7) for each of the five operations, the success
// messages, insert/get/update, ETags and the order of checks of docs/design.md §4 — one table,
// one runner. A failing row leaves the content and the version as they were.
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { SUCCESS_MESSAGES } from '../../shared/operation-table.js'
import type { TestApp } from '../support/temp-app.js'
import { startContentApp, PROJECT, type ContentFixture } from './fixture.js'
import { ownerTarget, runScenario, type Scenario } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

type Row = Scenario<ContentFixture>
type Op = 'increment' | 'decrement' | 'set' | 'delete' | 'push'

const BASE = { data: { count: 5, list: [1, 2], text: 'hi', obj: { a: 1 }, nothing: null } }
const withData = (data: Record<string, unknown>) => ({ data: { ...BASE.data, ...data } })

const MESSAGES = SUCCESS_MESSAGES
const EMPTY_GZIP = new Uint8Array(gzipSync(''))

/** A body that would succeed for the operation, so the rows below vary one thing at a time. */
const GOOD_BODY: Record<Op, Record<string, unknown>> = {
  increment: { path: 'data.count', value: 2 },
  decrement: { path: 'data.count', value: 2 },
  set: { path: 'data.count', value: 'new' },
  delete: { path: 'data.count' },
  push: { path: 'data.list', value: 3 }
}

const GOOD_RESULT: Record<Op, unknown> = {
  increment: withData({ count: 7 }),
  decrement: withData({ count: 3 }),
  set: withData({ count: 'new' }),
  delete: { data: { list: [1, 2], text: 'hi', obj: { a: 1 }, nothing: null } },
  push: withData({ list: [1, 2, 3] })
}

const withoutPath = (op: Op) => { const { path: _path, ...rest } = GOOD_BODY[op]; return rest }

/** The rows of the spec's error table that apply to every operation, plus success. */
function commonRows (op: Op): Row[] {
  const url = `${PROJECT}/content/${op}`
  const body = GOOD_BODY[op]
  const post = { method: 'POST' as const, url, body }
  return [
    { ...post, name: 'succeeds with a write key', token: f => f.writeKey, expectStatus: 200, expectBody: { message: MESSAGES[op] }, expectContent: GOOD_RESULT[op], expectHeaders: { etag: /^"\d+"$/, 'content-type': /^application\/json/ } },
    { ...post, name: 'succeeds with the owner session', token: f => f.ownerSession, expectStatus: 200, expectBody: { message: MESSAGES[op] }, expectContent: GOOD_RESULT[op] },
    { ...post, name: 'succeeds for an editor', token: f => f.editorSession, expectStatus: 200, expectBody: { message: MESSAGES[op] }, expectContent: GOOD_RESULT[op] },
    { ...post, name: '400 when path is missing', token: f => f.writeKey, body: withoutPath(op), expectStatus: 400, expectCode: 'INVALID_PATH' },
    { ...post, name: '400 when path is a number', token: f => f.writeKey, body: { ...body, path: 5 }, expectStatus: 400, expectCode: 'INVALID_PATH' },
    { ...post, name: '400 when path is null', token: f => f.writeKey, body: { ...body, path: null }, expectStatus: 400, expectCode: 'INVALID_PATH' },
    { ...post, name: '400 when path is an array', token: f => f.writeKey, body: { ...body, path: ['data', 'count'] }, expectStatus: 400, expectCode: 'INVALID_PATH' },
    { ...post, name: '400 when path is malformed (a..b)', token: f => f.writeKey, body: { ...body, path: 'data..count' }, expectStatus: 400, expectCode: 'INVALID_PATH' },
    { ...post, name: '400 when path is empty', token: f => f.writeKey, body: { ...body, path: '' }, expectStatus: 400, expectCode: 'INVALID_PATH' },
    { ...post, name: '401 without authentication', token: () => undefined, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
    { ...post, name: '401 with a malformed Authorization header', token: () => undefined, headers: { authorization: 'Basic YWxpY2U6eA==' }, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
    { ...post, name: '401 with an invalid API key', token: () => 'cdk_thisKeyWasNeverIssued', expectStatus: 401, expectCode: 'INVALID_TOKEN' },
    { ...post, name: '401 with a string that is no credential at all', token: () => 'hello', expectStatus: 401, expectCode: 'INVALID_TOKEN' },
    { ...post, name: '401 with an expired API key', token: f => f.expiredKey, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
    { ...post, name: '401 with a revoked API key', token: f => f.revokedKey, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
    { ...post, name: '403 for a user without access', token: f => f.strangerSession, expectStatus: 403, expectCode: 'FORBIDDEN' },
    { ...post, name: '403 for the key of a user without access', token: f => f.strangerKey, expectStatus: 403, expectCode: 'FORBIDDEN' },
    { ...post, name: '403 for a viewer', token: f => f.viewerSession, expectStatus: 403, expectCode: 'FORBIDDEN' },
    { ...post, name: '403 for a read-only key', token: f => f.readKey, expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' },
    { ...post, name: '403 for a key scoped to another project', token: f => f.otherProjectKey, expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' },
    { ...post, name: '404 for an unknown project', url: `/api/@alice/nope/content/${op}`, token: f => f.writeKey, expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' },
    { ...post, name: '404 for an unknown user', url: `/api/@nobody/demo/content/${op}`, token: f => f.writeKey, expectStatus: 404, expectCode: 'USER_NOT_FOUND' },
    { ...post, name: '400 when the username lacks "@"', url: `/api/alice/demo/content/${op}`, token: f => f.writeKey, expectStatus: 400, expectCode: 'INVALID_USERNAME' },
    { ...post, name: '400 for a username without "@" even when the user is unknown', url: `/api/nobody/demo/content/${op}`, token: f => f.writeKey, expectStatus: 400, expectCode: 'INVALID_USERNAME' },
    { ...post, name: '400 INVALID_BODY naming a member the operation does not know', token: f => f.writeKey, body: { ...body, amount: 3 }, expectStatus: 400, expectCode: 'INVALID_BODY', expectBody: { code: 'INVALID_BODY', message: 'The request body is not valid: unknown field "amount"' } },
    { ...post, name: '400 INVALID_BODY naming every unknown member, before a bad path', token: f => f.writeKey, body: { ...body, path: 'a..b', Path: 'x', index: 1 }, expectStatus: 400, expectCode: 'INVALID_BODY', expectBody: { code: 'INVALID_BODY', message: 'The request body is not valid: unknown fields "Path", "index"' } },
    { ...post, name: 'username in the URL is case-insensitive', url: `/api/@ALICE/demo/content/${op}`, token: f => f.writeKey, expectStatus: 200, expectBody: { message: MESSAGES[op] }, expectContent: GOOD_RESULT[op] }
  ]
}

const url = (op: string) => `${PROJECT}/content/${op}`
const post = (op: string, name: string, body: unknown, rest: Omit<Row, 'name' | 'method' | 'url' | 'token'>): Row =>
  ({ name, method: 'POST', url: url(op), token: f => f.writeKey, body, ...rest })

const NOT_A_NUMBER = ['data.text', 'data.obj', 'data.list', 'data.nothing'] as const

const SPECIFIC: Record<Op, Row[]> = {
  increment: [
    ...NOT_A_NUMBER.map(path => post('increment', `400 when the target (${path}) is not a number`, { path, value: 1 }, { expectStatus: 400, expectCode: 'NOT_A_NUMBER' })),
    post('increment', 'adds 1 when value is omitted', { path: 'data.count' }, { expectStatus: 200, expectContent: withData({ count: 6 }) }),
    post('increment', 'creates a missing target (and its parents) as value', { path: 'stats.views', value: 3 }, { expectStatus: 200, expectContent: { ...BASE, stats: { views: 3 } } }),
    post('increment', 'accepts negative and fractional amounts', { path: 'data.count', value: -0.5 }, { expectStatus: 200, expectContent: withData({ count: 4.5 }) }),
    post('increment', '400 when value is a string', { path: 'data.count', value: '2' }, { expectStatus: 400, expectCode: 'INVALID_VALUE' }),
    post('increment', '400 when value is null', { path: 'data.count', value: null }, { expectStatus: 400, expectCode: 'INVALID_VALUE' }),
    post('increment', '400 when the result overflows', { path: 'data.count', value: Number.MAX_VALUE }, { before: withData({ count: Number.MAX_VALUE }), expectStatus: 400, expectCode: 'NON_FINITE_RESULT' }),
    post('increment', '400 when the path runs through a scalar', { path: 'data.text.x' }, { expectStatus: 400, expectCode: 'PATH_CONFLICT' }),
    post('increment', 'walks into arrays by index', { path: 'data.list.1', value: 10 }, { expectStatus: 200, expectContent: withData({ list: [1, 12] }) }),
    post('increment', '400 for a non-canonical array index', { path: 'data.list.01' }, { expectStatus: 400, expectCode: 'INVALID_ARRAY_INDEX' })
  ],
  decrement: [
    ...NOT_A_NUMBER.map(path => post('decrement', `400 when the target (${path}) is not a number`, { path, value: 1 }, { expectStatus: 400, expectCode: 'NOT_A_NUMBER' })),
    post('decrement', 'subtracts 1 when value is omitted', { path: 'data.count' }, { expectStatus: 200, expectContent: withData({ count: 4 }) }),
    post('decrement', 'creates a missing target as -value', { path: 'stats.left', value: 3 }, { expectStatus: 200, expectContent: { ...BASE, stats: { left: -3 } } }),
    post('decrement', '400 when value is a boolean', { path: 'data.count', value: true }, { expectStatus: 400, expectCode: 'INVALID_VALUE' }),
    // A missing target past the end of an array cannot be created (as for set; the reference lists it).
    post('increment', '400 past the end of an array', { path: 'data.list.5', value: 1 }, { expectStatus: 400, expectCode: 'INDEX_OUT_OF_RANGE' }),
    post('decrement', '400 past the end of an array', { path: 'data.list.5', value: 1 }, { expectStatus: 400, expectCode: 'INDEX_OUT_OF_RANGE' }),
    post('push', '400 past the end of an array', { path: 'data.list.5', value: 1 }, { expectStatus: 400, expectCode: 'INDEX_OUT_OF_RANGE' })
  ],
  set: [
    post('set', 'creates a missing path', { path: 'a.b.c', value: { d: [1] } }, { expectStatus: 200, expectContent: { ...BASE, a: { b: { c: { d: [1] } } } } }),
    post('set', 'replaces a value of another type', { path: 'data.obj', value: 7 }, { expectStatus: 200, expectContent: withData({ obj: 7 }) }),
    post('set', 'writes null', { path: 'data.count', value: null }, { expectStatus: 200, expectContent: withData({ count: null }) }),
    post('set', '400 when value is missing', { path: 'data.count' }, { expectStatus: 400, expectCode: 'INVALID_VALUE' }),
    post('set', 'replaces an array element', { path: 'data.list.0', value: 'x' }, { expectStatus: 200, expectContent: withData({ list: ['x', 2] }) }),
    post('set', 'appends at index = length', { path: 'data.list.2', value: 'x' }, { expectStatus: 200, expectContent: withData({ list: [1, 2, 'x'] }) }),
    post('set', '400 past the end of an array', { path: 'data.list.5', value: 'x' }, { expectStatus: 400, expectCode: 'INDEX_OUT_OF_RANGE' }),
    post('set', '400 through a scalar', { path: 'data.count.x', value: 1 }, { expectStatus: 400, expectCode: 'PATH_CONFLICT' }),
    post('set', 'treats constructor as an ordinary key', { path: 'constructor', value: 1 }, { expectStatus: 200, expectContent: { ...BASE, constructor: 1 } })
  ],
  delete: [
    post('delete', '200 and nothing changes for a missing path', { path: 'no.such.thing' }, { expectStatus: 200, expectBody: { message: MESSAGES.delete }, expectContent: BASE }),
    post('delete', 'removes an array element and shifts the rest', { path: 'data.list.0' }, { expectStatus: 200, expectContent: withData({ list: [2] }) }),
    post('delete', '200 past the end of an array', { path: 'data.list.9' }, { expectStatus: 200, expectContent: BASE }),
    post('delete', 'removes a whole subtree', { path: 'data' }, { expectStatus: 200, expectContent: {} }),
    post('delete', 'accepts and ignores a value (the spec\'s body has path and value for every operation)', { path: 'data.count', value: 2 }, { expectStatus: 200, expectBody: { message: MESSAGES.delete }, expectContent: { data: { list: [1, 2], text: 'hi', obj: { a: 1 }, nothing: null } } }),
    post('delete', '400 INVALID_BODY for an index (only insert takes one)', { path: 'data.count', index: 0 }, { expectStatus: 400, expectCode: 'INVALID_BODY', expectBody: { code: 'INVALID_BODY', message: 'The request body is not valid: unknown field "index"' } })
  ],
  push: [
    post('push', '400 when the target is a number', { path: 'data.count', value: 1 }, { expectStatus: 400, expectCode: 'NOT_AN_ARRAY' }),
    post('push', '400 when the target is an object', { path: 'data.obj', value: 1 }, { expectStatus: 400, expectCode: 'NOT_AN_ARRAY' }),
    post('push', '400 when the target is a string', { path: 'data.text', value: 1 }, { expectStatus: 400, expectCode: 'NOT_AN_ARRAY' }),
    post('push', '400 when the target is null', { path: 'data.nothing', value: 1 }, { expectStatus: 400, expectCode: 'NOT_AN_ARRAY' }),
    post('push', 'creates a missing target as [value]', { path: 'log.entries', value: { n: 1 } }, { expectStatus: 200, expectContent: { ...BASE, log: { entries: [{ n: 1 }] } } }),
    post('push', 'pushes an array as one element', { path: 'data.list', value: [3, 4] }, { expectStatus: 200, expectContent: withData({ list: [1, 2, [3, 4]] }) }),
    post('push', 'pushes null', { path: 'data.list', value: null }, { expectStatus: 200, expectContent: withData({ list: [1, 2, null] }) }),
    post('push', '400 when value is missing', { path: 'data.list' }, { expectStatus: 400, expectCode: 'INVALID_VALUE' })
  ]
}

const INSERT: Row[] = [
  post('insert', 'inserts at the front', { path: 'data.list', value: 0, index: 0 }, { expectStatus: 200, expectBody: { message: MESSAGES.insert }, expectContent: withData({ list: [0, 1, 2] }) }),
  post('insert', 'inserts in the middle', { path: 'data.list', value: 'm', index: 1 }, { expectStatus: 200, expectContent: withData({ list: [1, 'm', 2] }) }),
  post('insert', 'inserts at index = length (append)', { path: 'data.list', value: 'z', index: 2 }, { expectStatus: 200, expectContent: withData({ list: [1, 2, 'z'] }) }),
  post('insert', '400 when index > length', { path: 'data.list', value: 'z', index: 3 }, { expectStatus: 400, expectCode: 'INDEX_OUT_OF_RANGE' }),
  post('insert', '400 when index is negative', { path: 'data.list', value: 'z', index: -1 }, { expectStatus: 400 }),
  post('insert', '400 when index is missing', { path: 'data.list', value: 'z' }, { expectStatus: 400, expectCode: 'INVALID_BODY' }),
  post('insert', '400 when index is a float', { path: 'data.list', value: 'z', index: 0.5 }, { expectStatus: 400, expectCode: 'INVALID_BODY' }),
  post('insert', '400 when index is a string', { path: 'data.list', value: 'z', index: '0' }, { expectStatus: 400, expectCode: 'INVALID_BODY' }),
  post('insert', 'creates a missing target as [value] at index 0', { path: 'q.items', value: 'a', index: 0 }, { expectStatus: 200, expectContent: { ...BASE, q: { items: ['a'] } } }),
  post('insert', '400 on a missing target at index 1', { path: 'q.items', value: 'a', index: 1 }, { expectStatus: 400, expectCode: 'INDEX_OUT_OF_RANGE' }),
  post('insert', '400 when the target is not an array', { path: 'data.obj', value: 'a', index: 0 }, { expectStatus: 400, expectCode: 'NOT_AN_ARRAY' }),
  post('insert', '400 when value is missing', { path: 'data.list', index: 0 }, { expectStatus: 400, expectCode: 'INVALID_VALUE' }),
  post('insert', '400 INVALID_BODY naming an unknown member', { path: 'data.list', value: 0, index: 0, position: 1 }, { expectStatus: 400, expectCode: 'INVALID_BODY', expectBody: { code: 'INVALID_BODY', message: 'The request body is not valid: unknown field "position"' } }),
  { ...post('insert', '403 for a read-only key', { path: 'data.list', value: 0, index: 0 }, { expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' }), token: f => f.readKey }
]

const content = `${PROJECT}/content`
const get = (name: string, rest: Omit<Row, 'name' | 'method' | 'url'> & { url?: string }): Row => ({ ...rest, name, method: 'GET', url: rest.url ?? content })

const GET_AND_UPDATE: Row[] = [
  get('get returns the whole content with its ETag', { token: f => f.readKey, expectStatus: 200, expectBody: BASE, expectHeaders: { etag: /^"\d+"$/, 'content-type': /^application\/json/ } }),
  get('get works for a viewer', { token: f => f.viewerSession, expectStatus: 200, expectBody: BASE }),
  get('get ?path= returns the value there', { url: `${content}?path=data.list`, token: f => f.readKey, expectStatus: 200, expectBody: [1, 2] }),
  get('get ?path= into an array', { url: `${content}?path=data.list.1`, token: f => f.readKey, expectStatus: 200, expectBody: 2 }),
  get('get ?path= of a null value returns null', { url: `${content}?path=data.nothing`, token: f => f.readKey, expectStatus: 200, expectBody: null }),
  get('get ?path= of a missing path is 404', { url: `${content}?path=data.missing`, token: f => f.readKey, expectStatus: 404, expectCode: 'PATH_NOT_FOUND' }),
  get('get ?path= through a scalar is 404', { url: `${content}?path=data.count.x`, token: f => f.readKey, expectStatus: 404, expectCode: 'PATH_NOT_FOUND' }),
  get('get ?path= invalid is 400', { url: `${content}?path=a..b`, token: f => f.readKey, expectStatus: 400, expectCode: 'INVALID_PATH' }),
  get('get with a matching If-None-Match is 304', { token: f => f.readKey, headers: (_f, v) => ({ 'if-none-match': `"${v}"` }), expectStatus: 304 }),
  get('get with a stale If-None-Match is 200', { token: f => f.readKey, headers: (_f, v) => ({ 'if-none-match': `"${v - 1}"` }), expectStatus: 200, expectBody: BASE }),
  get('get without auth is 401', { token: () => undefined, expectStatus: 401, expectCode: 'AUTH_REQUIRED' }),
  get('get by a stranger is 403', { token: f => f.strangerSession, expectStatus: 403, expectCode: 'FORBIDDEN' }),
  get('get with a key scoped elsewhere is 403', { token: f => f.otherProjectKey, expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' }),
  get('get of an unknown project is 404', { url: '/api/@alice/nope/content', token: f => f.writeKey, expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' }),
  { name: 'update replaces the content', method: 'POST', url: content, token: f => f.writeKey, body: { fresh: [true] }, expectStatus: 200, expectBody: { message: MESSAGES.update }, expectContent: { fresh: [true] }, expectHeaders: { etag: /^"\d+"$/ } },
  { name: 'update takes any member names: the content is free-form, not a request schema', method: 'POST', url: content, token: f => f.writeKey, body: { path: 'a', amount: 3, value: 1 }, expectStatus: 200, expectBody: { message: MESSAGES.update }, expectContent: { path: 'a', amount: 3, value: 1 } },
  { name: 'update with {} empties the content', method: 'POST', url: content, token: f => f.editorSession, body: {}, expectStatus: 200, expectContent: {} },
  ...([['an array', [1]], ['a string', 'x'], ['a number', 3], ['null', null]] as const).map(([what, body]): Row =>
    ({ name: `update with ${what} is 400`, method: 'POST', url: content, token: f => f.writeKey, raw: JSON.stringify(body), expectStatus: 400, expectCode: 'INVALID_BODY' })),
  { name: 'update by a read-only key is 403', method: 'POST', url: content, token: f => f.readKey, body: {}, expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' },
  { name: 'update by a viewer is 403', method: 'POST', url: content, token: f => f.viewerSession, body: {}, expectStatus: 403, expectCode: 'FORBIDDEN' }
]

const CONDITIONAL: Row[] = [
  { ...post('increment', 'If-Match with the current version succeeds', { path: 'data.count' }, { expectStatus: 200, expectContent: withData({ count: 6 }) }), headers: (_f, v) => ({ 'if-match': `"${v}"` }) },
  { ...post('increment', 'If-Match with a stale version is 412', { path: 'data.count' }, { expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }), headers: (_f, v) => ({ 'if-match': `"${v - 1}"` }) },
  { ...post('set', 'If-Match listing the current version succeeds', { path: 'x', value: 1 }, { expectStatus: 200, expectContent: { ...BASE, x: 1 } }), headers: (_f, v) => ({ 'if-match': `"${v + 5}", W/"${v}"` }) },
  { ...post('set', 'If-Match: * succeeds', { path: 'x', value: 1 }, { expectStatus: 200, expectContent: { ...BASE, x: 1 } }), headers: { 'if-match': '*' } },
  { ...post('set', 'If-Match that is no version never matches', { path: 'x', value: 1 }, { expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }), headers: { 'if-match': 'garbage' } },
  { name: 'update with a stale If-Match is 412', method: 'POST', url: content, token: f => f.writeKey, body: { gone: true }, headers: (_f, v) => ({ 'if-match': `"${v + 1}"` }), expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }
]

// docs/design.md §13b "Conditional requests": RFC 9110 §13 on every method. If-Match is
// evaluated first (§13.2.2), then If-None-Match; a write that fails either changes nothing.
const PRECONDITIONS: Row[] = [
  get('get with a stale If-Match is 412', { token: f => f.readKey, headers: (_f, v) => ({ 'if-match': `"${v - 1}"` }), expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }),
  get('get with a matching If-Match is 200', { token: f => f.readKey, headers: (_f, v) => ({ 'if-match': `"${v}"` }), expectStatus: 200, expectBody: BASE }),
  get('get ?path= with a stale If-Match is 412', { url: `${content}?path=data.list`, token: f => f.readKey, headers: (_f, v) => ({ 'if-match': `"${v + 1}"` }), expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }),
  get('get with a stale If-Match and a matching If-None-Match is 412 (If-Match first)', { token: f => f.readKey, headers: (_f, v) => ({ 'if-match': `"${v - 1}"`, 'if-none-match': `"${v}"` }), expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }),
  get('get of the change log with a matching If-None-Match is 304', { url: `${content}/changes`, token: f => f.ownerSession, headers: (_f, v) => ({ 'if-none-match': `"${v}"` }), expectStatus: 304 }),
  get('get of the change log with a stale If-Match is 412', { url: `${content}/changes`, token: f => f.ownerSession, headers: (_f, v) => ({ 'if-match': `"${v - 1}"` }), expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }),
  { ...post('increment', 'a write with If-None-Match naming the current version is 412', { path: 'data.count' }, { expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }), headers: (_f, v) => ({ 'if-none-match': `"${v}"` }) },
  { ...post('set', 'a write with If-None-Match: * is 412 (the content always exists)', { path: 'x', value: 1 }, { expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }), headers: { 'if-none-match': '*' } },
  { name: 'update with If-None-Match: * is 412 and replaces nothing', method: 'POST', url: content, token: f => f.writeKey, body: { replaced: true }, headers: { 'if-none-match': '*' }, expectStatus: 412, expectCode: 'PRECONDITION_FAILED' },
  { name: 'a batch with If-None-Match naming the current version is 412', method: 'POST', url: url('batch'), token: f => f.writeKey, body: { operations: [{ op: 'increment', path: 'data.count' }] }, headers: (_f, v) => ({ 'if-none-match': `W/"${v}"` }), expectStatus: 412, expectCode: 'PRECONDITION_FAILED' },
  { name: 'a patch with If-None-Match: * is 412', method: 'PATCH', url: content, token: f => f.writeKey, raw: '[{"op":"add","path":"/x","value":1}]', headers: { 'content-type': 'application/json-patch+json', 'if-none-match': '*' }, expectStatus: 412, expectCode: 'PRECONDITION_FAILED' },
  { name: 'a revert with If-None-Match naming the current version is 412', method: 'POST', url: url('revert'), token: f => f.writeKey, bodyAt: v => ({ version: v - 1 }), headers: (_f, v) => ({ 'if-none-match': `"${v}"` }), expectStatus: 412, expectCode: 'PRECONDITION_FAILED' },
  { ...post('increment', 'a write with a stale If-None-Match succeeds', { path: 'data.count' }, { expectStatus: 200, expectContent: withData({ count: 6 }) }), headers: (_f, v) => ({ 'if-none-match': `"${v - 1}"` }) },
  { ...post('increment', 'a matching If-Match with a matching If-None-Match is 412', { path: 'data.count' }, { expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }), headers: (_f, v) => ({ 'if-match': `"${v}"`, 'if-none-match': `"${v}"` }) },
  { ...post('increment', 'If-None-Match is checked after the body: a bad path is still 400', { path: 'a..b' }, { expectStatus: 400, expectCode: 'INVALID_PATH' }), headers: { 'if-none-match': '*' } }
]

// docs/design.md §13b "Bodies": an empty body is 400 INVALID_JSON on every content write —
// never the empty object, which made an empty update wipe the content.
const EMPTY_BODIES: Row[] = [
  { name: 'update with an empty body is 400 INVALID_JSON and keeps the content', method: 'POST', url: content, token: f => f.writeKey, raw: '', expectStatus: 400, expectCode: 'INVALID_JSON' },
  ...(['increment', 'decrement', 'set', 'delete', 'push', 'insert', 'batch', 'revert'] as const).map((op): Row =>
    ({ name: `${op} with an empty body is 400 INVALID_JSON`, method: 'POST', url: url(op), token: f => f.writeKey, raw: '', expectStatus: 400, expectCode: 'INVALID_JSON' })),
  { name: 'a JSON Patch with an empty body is 400 INVALID_JSON', method: 'PATCH', url: content, token: f => f.writeKey, raw: '', headers: { 'content-type': 'application/json-patch+json' }, expectStatus: 400, expectCode: 'INVALID_JSON' },
  { name: 'a gzip body that decodes to nothing is 400 INVALID_JSON', method: 'POST', url: content, token: f => f.writeKey, raw: EMPTY_GZIP, headers: { 'content-encoding': 'gzip' }, expectStatus: 400, expectCode: 'INVALID_JSON' },
  { name: 'update with a Content-Encoding of zstd is 415 and keeps the content', method: 'POST', url: content, token: f => f.writeKey, raw: '{"replaced":true}', headers: { 'content-encoding': 'zstd' }, expectStatus: 415, expectCode: 'UNSUPPORTED_MEDIA_TYPE', expectHeaders: { 'accept-encoding': 'gzip, deflate, br, identity' } },
  { name: 'PATCH with application/json is 415 with Accept-Patch', method: 'PATCH', url: content, token: f => f.writeKey, raw: '[{"op":"add","path":"/x","value":1}]', expectStatus: 415, expectCode: 'UNSUPPORTED_MEDIA_TYPE', expectHeaders: { 'accept-patch': 'application/json-patch+json' } }
]

// docs/design.md §13b "Routing is strict": a trailing slash is another path, 404, nothing changes
// (a URL template with an empty operation made `…/content/` an update of the whole content).
const TRAILING_SLASH: Row[] = [
  { name: 'POST …/content/ with an operation body is 404 and replaces nothing', method: 'POST', url: `${content}/`, token: f => f.writeKey, body: { path: 'data.count', value: 9 }, expectStatus: 404, expectCode: 'NOT_FOUND' },
  { name: 'POST …/content/set/ is 404', method: 'POST', url: `${url('set')}/`, token: f => f.writeKey, body: { path: 'data.count', value: 9 }, expectStatus: 404, expectCode: 'NOT_FOUND' },
  { name: 'PATCH …/content/ is 404', method: 'PATCH', url: `${content}/`, token: f => f.writeKey, raw: '[{"op":"add","path":"/x","value":1}]', headers: { 'content-type': 'application/json-patch+json' }, expectStatus: 404, expectCode: 'NOT_FOUND' },
  get('GET …/content/ is 404', { url: `${content}/`, token: f => f.readKey, expectStatus: 404, expectCode: 'NOT_FOUND' })
]

// docs/design.md §13: a path the API knows, with a method it does not serve, is 405 with Allow,
// whoever calls (no credential, a stranger's, the owner's): the table of routes is public.
// A path it does not know is 404, also before authentication.
const METHODS: Row[] = [
  ...([['a write key', (f: ContentFixture) => f.writeKey], ['no credential', () => undefined], ['a stranger', (f: ContentFixture) => f.strangerSession]] as const).flatMap(([who, token]): Row[] => [
    { name: `GET …/content/increment with ${who} → 405 Allow: POST`, method: 'GET', url: url('increment'), token, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED', expectHeaders: { allow: 'POST' } },
    { name: `PUT …/content with ${who} → 405 Allow: GET, HEAD, PATCH, POST`, method: 'PUT', url: content, token, body: { replaced: true }, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED', expectHeaders: { allow: 'GET, HEAD, PATCH, POST' } }
  ]),
  { name: 'DELETE …/content/set → 405 Allow: POST', method: 'DELETE', url: url('set'), token: f => f.writeKey, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED', expectHeaders: { allow: 'POST' }, expectBody: { code: 'METHOD_NOT_ALLOWED', message: 'This endpoint does not accept that method: DELETE is not one of POST' } },
  { name: 'PUT …/content/push of an unknown project → 405 (the path is known, whatever the project)', method: 'PUT', url: '/api/@alice/nope/content/push', token: f => f.writeKey, body: { path: 'a', value: 1 }, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED', expectHeaders: { allow: 'POST' } },
  { name: 'an unknown operation is 404 NOT_FOUND', method: 'POST', url: url('multiply'), token: f => f.writeKey, body: { path: 'data.count' }, expectStatus: 404, expectCode: 'NOT_FOUND' },
  { name: 'an unknown operation is 404 without a credential too', method: 'POST', url: url('multiply'), token: () => undefined, body: { path: 'data.count' }, expectStatus: 404, expectCode: 'NOT_FOUND' }
]

// The exact text of refusals: the catalogue message once, then the detail.
const exact = (code: string, message: string) => ({ expectStatus: 400, expectCode: code, expectBody: { code, message } })
const MESSAGES_EXACT: Row[] = [
  post('increment', 'path a..b', { path: 'a..b' }, exact('INVALID_PATH', 'The path is not valid: segment 2 is empty')),
  post('set', 'path .a', { path: '.a', value: 1 }, exact('INVALID_PATH', 'The path is not valid: segment 1 is empty')),
  post('push', 'path a.', { path: 'a.', value: 1 }, exact('INVALID_PATH', 'The path is not valid: segment 2 is empty')),
  post('delete', 'an empty path', { path: '' }, exact('INVALID_PATH', 'The path is not valid: path is empty')),
  post('set', 'a segment starting with $', { path: 'a.$set', value: 1 }, exact('INVALID_PATH', 'The path is not valid: segment 2 starts with "$"')),
  post('insert', 'a __proto__ segment', { path: 'x.__proto__', value: 1, index: 0 }, exact('INVALID_PATH', 'The path is not valid: segment 2 is "__proto__"')),
  post('decrement', 'a missing path', {}, exact('INVALID_PATH', 'The path is not valid: path is required and must be a string')),
  post('increment', 'a path that is a number', { path: 7 }, exact('INVALID_PATH', 'The path is not valid: path is required and must be a string')),
  post('increment', 'an amount that is a string', { path: 'data.count', value: '2' }, exact('INVALID_VALUE', 'The value is not valid: value must be a finite number')),
  post('set', 'a missing value', { path: 'data.count' }, exact('INVALID_VALUE', 'The value is not valid: value is required')),
  post('set', 'a value key starting with $', { path: 'a', value: { ok: { $where: 1 } } }, exact('INVALID_VALUE', 'The value is not valid: key "$where" at "a.ok" starts with "$"')),
  post('push', 'an empty value key', { path: 'data.list', value: { '': 1 } }, exact('INVALID_VALUE', 'The value is not valid: key "" at "data.list" is empty')),
  post('insert', 'an index that is a string', { path: 'data.list', value: 1, index: '0' }, exact('INVALID_BODY', 'The request body is not valid: index is required and must be an integer')),
  post('increment', 'a target that is not a number', { path: 'data.text' }, exact('NOT_A_NUMBER', 'The value at the path is not a number: "data.text" is a string')),
  get('get ?path=a..b', { url: `${content}?path=a..b`, token: f => f.readKey, ...exact('INVALID_PATH', 'The path is not valid: segment 2 is empty') }),
  { name: 'update with an array', method: 'POST', url: content, token: f => f.writeKey, body: [1], ...exact('INVALID_BODY', 'The request body is not valid: the content must be a JSON object') }
]

// docs/design.md §4: with several faults at once, the earliest check decides.
const ORDER: Row[] = [
  { name: 'no auth + invalid body → 401', method: 'POST', url: url('increment'), token: () => undefined, raw: '{not json', expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { name: 'invalid key + unknown project → 401', method: 'POST', url: '/api/@nobody/x/content/set', token: () => 'cdk_bogus', body: { path: 'a', value: 1 }, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: 'expired key + username without "@" → 401', method: 'POST', url: '/api/alice/demo/content/set', token: f => f.expiredKey, body: {}, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: 'username without "@" + invalid JSON → 400 INVALID_USERNAME', method: 'POST', url: '/api/alice/demo/content/set', token: f => f.writeKey, raw: '{', expectStatus: 400, expectCode: 'INVALID_USERNAME' },
  { name: 'unknown project + invalid body → 404', method: 'POST', url: '/api/@alice/nope/content/push', token: f => f.writeKey, raw: '[1,2', expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' },
  { name: 'unknown user + path missing → 404', method: 'POST', url: '/api/@nobody/demo/content/increment', token: f => f.writeKey, body: {}, expectStatus: 404, expectCode: 'USER_NOT_FOUND' },
  { name: 'stranger + bad path → 403', method: 'POST', url: url('set'), token: f => f.strangerSession, body: { path: 'a..b', value: 1 }, expectStatus: 403, expectCode: 'FORBIDDEN' },
  { name: 'read-only key + invalid JSON → 403', method: 'POST', url: url('set'), token: f => f.readKey, raw: '{"path":', expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' },
  { name: 'read-only key + target not a number → 403', method: 'POST', url: url('increment'), token: f => f.readKey, body: { path: 'data.text' }, expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' },
  // docs/design.md §13b: a declared length over BODY_LIMIT is refused from the headers, before
  // authentication, so neither a stranger nor anyone else makes the server read the body.
  { name: 'stranger + declared length over the limit → 413 (body unread, before authentication)', method: 'POST', url: url('set'), token: f => f.strangerKey, raw: JSON.stringify({ path: 'a', value: 'x'.repeat(1_100_000) }), expectStatus: 413, expectCode: 'BODY_TOO_LARGE' },
  { name: 'no credential + declared length over the limit → 413', method: 'POST', url: url('set'), token: () => undefined, raw: JSON.stringify({ path: 'a', value: 'x'.repeat(1_100_000) }), expectStatus: 413, expectCode: 'BODY_TOO_LARGE' },
  { ...post('increment', 'bad path + stale If-Match → 400', { path: 'a..b' }, { expectStatus: 400, expectCode: 'INVALID_PATH' }), headers: (_f, v) => ({ 'if-match': `"${v - 1}"` }) },
  { ...post('increment', 'target not a number + stale If-Match → 412', { path: 'data.text' }, { expectStatus: 412, expectCode: 'PRECONDITION_FAILED' }), headers: (_f, v) => ({ 'if-match': `"${v - 1}"` }) }
]

describe('content API scenarios', () => {
  let app: TestApp
  let fixture: ContentFixture
  beforeAll(async () => {
    ({ app, fixture } = await startContentApp())
  })
  afterAll(async () => { await app.close() })

  const target = ownerTarget(() => app.url, () => fixture, BASE)

  for (const op of ['increment', 'decrement', 'set', 'delete', 'push'] as const) {
    describe(op, () => {
      for (const row of [...commonRows(op), ...SPECIFIC[op]]) {
        it(row.name, async () => { await runScenario(target, row) })
      }
    })
  }

  const groups: Array<[string, Row[]]> = [['insert', INSERT], ['get and update', GET_AND_UPDATE], ['If-Match', CONDITIONAL], ['preconditions on every method', PRECONDITIONS], ['empty bodies and codings', EMPTY_BODIES], ['trailing slash', TRAILING_SLASH], ['methods', METHODS], ['exact messages', MESSAGES_EXACT], ['order of checks', ORDER]]
  for (const [name, rows] of groups) {
    describe(name, () => {
      for (const row of rows) it(row.name, async () => { await runScenario(target, row) })
    })
  }
})
