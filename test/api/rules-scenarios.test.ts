// App users and rules over HTTP (docs/design.md §17), one table per concern, every status each
// endpoint answers: reads and writes of app users decided by the rules (200, 403 RULES_DENIED
// with the path, the operation's own 400s, 404, 412), tokens that must not verify (401
// INVALID_TOKEN), and the owner's …/auth, …/rules and …/rules/check endpoints. Tokens are real
// HS256 JWTs signed with jose; owners, members and keys keep working as before. App users'
// path reads and subscriptions on every transport (HTTP, Socket.IO, SSE) are one table of their
// own: test/rules/read-table.ts, run by test/realtime/rules-transports.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BATCH_MESSAGE } from '../../shared/batch.js'
import { PATCH_MESSAGE } from '../../shared/json-patch.js'
import { SUCCESS_MESSAGES } from '../../shared/operation-table.js'
import { APP_AUDIENCE, APP_ISSUER, APP_SECRET, hs256Token, tampered, unsignedToken } from '../support/app-tokens.js'
import { call } from '../support/http.js'
import type { TestApp } from '../support/temp-app.js'
import { startContentApp, PROJECT, type ContentFixture } from './fixture.js'
import { ownerTarget, runScenario, type Scenario } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

interface Fixture extends ContentFixture {
  u1: string
  u2: string
  u3: string
  admin: string
  expired: string
  withinLeeway: string
  notYet: string
  wrongIssuer: string
  wrongAudience: string
  otherSecret: string
  badSignature: string
  algNone: string
  noSub: string
}

type Row = Scenario<Fixture>

const RULES = {
  rules: {
    users: { $uid: { '.read': 'auth.sub == uid', '.write': 'auth.sub == uid' } },
    leaderboard: { '.read': true, $player: { score: { '.write': 'auth.sub == player && (data == null || newData > data)' } } },
    admin: { '.read': 'auth.role == "admin"', '.write': 'auth.role == "admin"' },
    public: { '.read': 'true' }
  }
}
const BASE = { users: { u1: { name: 'A' }, u2: { name: 'B' } }, leaderboard: { u1: { score: 5 }, u2: { score: 3 } }, admin: { flag: true }, public: { motd: 'hi' } }
const AUTH_URL = `${PROJECT}/auth`
const RULES_URL = `${PROJECT}/rules`
const HS256 = { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET }
const op = (name: string) => `${PROJECT}/content/${name}`
const read = (path: string) => `${PROJECT}/content?path=${encodeURIComponent(path)}`
const with_ = (patch: (c: typeof BASE) => void) => { const c = structuredClone(BASE); patch(c); return c }

/** The project trusting the app's HS256 sign-in, with RULES. */
const withRules = async (url: string, f: Fixture) => {
  const auth = await call(url, 'PUT', AUTH_URL, { token: f.ownerSession, body: HS256 })
  if (auth.status !== 200) throw new Error(`auth: ${auth.status} ${auth.text}`)
  const rules = await call(url, 'PUT', RULES_URL, { token: f.ownerSession, body: RULES })
  if (rules.status !== 200) throw new Error(`rules: ${rules.status} ${rules.text}`)
}
const withoutRules = async (url: string, f: Fixture) => {
  await withRules(url, f)
  const r = await call(url, 'DELETE', RULES_URL, { token: f.ownerSession })
  if (r.status !== 200) throw new Error(`remove rules: ${r.status} ${r.text}`)
}
const withoutAuth = async (url: string, f: Fixture) => {
  await withRules(url, f)
  const r = await call(url, 'DELETE', AUTH_URL, { token: f.ownerSession })
  if (r.status !== 200) throw new Error(`remove auth: ${r.status} ${r.text}`)
}

const denied = (path: string): Pick<Row, 'expectStatus' | 'expectCode' | 'expectBody'> => ({ expectStatus: 403, expectCode: 'RULES_DENIED', expectBody: { message: expect.stringMatching(/^The project's rules do not allow this: /), code: 'RULES_DENIED', path } })

const READS: Row[] = [
  { name: 'u1 reads their own subtree', method: 'GET', url: read('users.u1'), token: f => f.u1, expectStatus: 200, expectBody: { name: 'A' } },
  { name: 'u1 reads below their subtree', method: 'GET', url: read('users.u1.name'), token: f => f.u1, expectStatus: 200, expectBody: 'A' },
  { name: 'u1 may not read u2\'s subtree', method: 'GET', url: read('users.u2'), token: f => f.u1, ...denied('users.u2') },
  { name: 'u1 may not read below u2\'s subtree', method: 'GET', url: read('users.u2.name'), token: f => f.u1, ...denied('users.u2.name') },
  { name: 'u1 may not read users (no rule there)', method: 'GET', url: read('users'), token: f => f.u1, ...denied('users') },
  { name: 'u1 may not read the whole content (the root)', method: 'GET', url: `${PROJECT}/content`, token: f => f.u1, ...denied('') },
  { name: 'anyone reads the leaderboard', method: 'GET', url: read('leaderboard'), token: f => f.u2, expectStatus: 200, expectBody: BASE.leaderboard },
  { name: 'the leaderboard\'s read cascades down', method: 'GET', url: read('leaderboard.u2.score'), token: f => f.u1, expectStatus: 200, expectBody: 3 },
  { name: 'an admin claim reads admin', method: 'GET', url: read('admin'), token: f => f.admin, expectStatus: 200, expectBody: { flag: true } },
  { name: 'a user without the claim may not', method: 'GET', url: read('admin.flag'), token: f => f.u1, ...denied('admin.flag') },
  { name: 'a CEL string literal "true" allows', method: 'GET', url: read('public.motd'), token: f => f.u3, expectStatus: 200, expectBody: 'hi' },
  { name: '404 for nothing at an allowed path', method: 'GET', url: read('users.u1.missing'), token: f => f.u1, expectStatus: 404, expectCode: 'PATH_NOT_FOUND' },
  { name: '403, not 404, for nothing at a refused path', method: 'GET', url: read('users.u2.missing'), token: f => f.u1, ...denied('users.u2.missing') },
  { name: '400 for an invalid path', method: 'GET', url: read('users..u1'), token: f => f.u1, expectStatus: 400, expectCode: 'INVALID_PATH' },
  { name: 'a past version at an allowed path', method: 'GET', url: (_f, v) => `${read('users.u1')}&version=${v}`, token: f => f.u1, expectStatus: 200, expectBody: { name: 'A' } },
  { name: 'a past version of the whole content needs the root', method: 'GET', url: (_f, v) => `${PROJECT}/content?version=${v}`, token: f => f.u1, ...denied('') },
  { name: 'the change log needs the root', method: 'GET', url: `${PROJECT}/content/changes`, token: f => f.u1, ...denied('') },
  { name: 'without rules, app users may not read', prepare: withoutRules, method: 'GET', url: read('public'), token: f => f.u1, ...denied('public') },
  { name: 'a matching If-None-Match is 304 at an allowed path', method: 'GET', url: read('users.u1'), token: f => f.u1, headers: (_f, v) => ({ 'if-none-match': `"${v}"` }), expectStatus: 304 },
  { name: 'owners read as before', method: 'GET', url: `${PROJECT}/content`, token: f => f.ownerSession, expectStatus: 200, expectBody: BASE },
  { name: 'API keys read as before', method: 'GET', url: read('users.u2'), token: f => f.readKey, expectStatus: 200, expectBody: { name: 'B' } },
  { name: 'viewers read as before', method: 'GET', url: read('admin'), token: f => f.viewerSession, expectStatus: 200, expectBody: { flag: true } }
]

const WRITES: Row[] = [
  { name: 'u1 sets in their subtree', method: 'POST', url: op('set'), token: f => f.u1, body: { path: 'users.u1.name', value: 'Z' }, expectStatus: 200, expectBody: { message: SUCCESS_MESSAGES.set }, expectContent: with_(c => { c.users.u1.name = 'Z' }) },
  { name: 'u1 sets with an Idempotency-Key of its own', method: 'POST', url: op('set'), token: f => f.u1, headers: { 'idempotency-key': `app-${Date.now()}` }, body: { path: 'users.u1.name', value: 'K' }, expectStatus: 200, expectContent: with_(c => { c.users.u1.name = 'K' }) },
  { name: 'u1 may not set in u2\'s', method: 'POST', url: op('set'), token: f => f.u1, body: { path: 'users.u2.name', value: 'Z' }, ...denied('users.u2.name') },
  { name: 'u1 may not set at users', method: 'POST', url: op('set'), token: f => f.u1, body: { path: 'users', value: {} }, ...denied('users') },
  { name: 'a new user creates their own subtree', method: 'POST', url: op('set'), token: f => f.u3, body: { path: 'users.u3', value: { name: 'C' } }, expectStatus: 200, expectContent: with_(c => { (c.users as Record<string, unknown>).u3 = { name: 'C' } }) },
  { name: 'u1 increments their score (newData > data)', method: 'POST', url: op('increment'), token: f => f.u1, body: { path: 'leaderboard.u1.score' }, expectStatus: 200, expectContent: with_(c => { c.leaderboard.u1.score = 6 }) },
  { name: 'u1 may not decrement their score', method: 'POST', url: op('decrement'), token: f => f.u1, body: { path: 'leaderboard.u1.score' }, ...denied('leaderboard.u1.score') },
  { name: 'u1 may not increment u2\'s score', method: 'POST', url: op('increment'), token: f => f.u1, body: { path: 'leaderboard.u2.score' }, ...denied('leaderboard.u2.score') },
  { name: 'u1 may set a higher score', method: 'POST', url: op('set'), token: f => f.u1, body: { path: 'leaderboard.u1.score', value: 10 }, expectStatus: 200, expectContent: with_(c => { c.leaderboard.u1.score = 10 }) },
  { name: 'u1 may not set a lower score', method: 'POST', url: op('set'), token: f => f.u1, body: { path: 'leaderboard.u1.score', value: 1 }, ...denied('leaderboard.u1.score') },
  { name: 'u1 may not delete their score (newData null)', method: 'POST', url: op('delete'), token: f => f.u1, body: { path: 'leaderboard.u1.score' }, ...denied('leaderboard.u1.score') },
  { name: 'a first score is allowed (data null)', method: 'POST', url: op('increment'), token: f => f.u3, body: { path: 'leaderboard.u3.score', value: 2 }, expectStatus: 200, expectContent: with_(c => { (c.leaderboard as Record<string, unknown>).u3 = { score: 2 } }) },
  { name: 'the leaderboard\'s read allows no write', method: 'POST', url: op('set'), token: f => f.u1, body: { path: 'leaderboard.u1.extra', value: 1 }, ...denied('leaderboard.u1.extra') },
  { name: 'u1 deletes in their subtree', method: 'POST', url: op('delete'), token: f => f.u1, body: { path: 'users.u1.name' }, expectStatus: 200, expectContent: with_(c => { c.users.u1 = {} as typeof c.users.u1 }) },
  { name: 'u1 may not delete u2', method: 'POST', url: op('delete'), token: f => f.u1, body: { path: 'users.u2' }, ...denied('users.u2') },
  { name: 'u1 pushes in their subtree', method: 'POST', url: op('push'), token: f => f.u1, body: { path: 'users.u1.items', value: 1 }, expectStatus: 200, expectContent: with_(c => { (c.users.u1 as Record<string, unknown>).items = [1] }) },
  { name: 'u1 inserts in their subtree', method: 'POST', url: op('insert'), token: f => f.u1, body: { path: 'users.u1.items', index: 0, value: 'x' }, expectStatus: 200, expectContent: with_(c => { (c.users.u1 as Record<string, unknown>).items = ['x'] }) },
  { name: 'u1 may not push into u2\'s', method: 'POST', url: op('push'), token: f => f.u1, body: { path: 'users.u2.items', value: 1 }, ...denied('users.u2.items') },
  { name: 'an admin writes admin', method: 'POST', url: op('set'), token: f => f.admin, body: { path: 'admin.flag', value: false }, expectStatus: 200, expectContent: with_(c => { c.admin.flag = false }) },
  { name: 'an admin may not write another user\'s subtree', method: 'POST', url: op('set'), token: f => f.admin, body: { path: 'users.u1.name', value: 'Q' }, ...denied('users.u1.name') },
  { name: 'public has no .write', method: 'POST', url: op('set'), token: f => f.u1, body: { path: 'public.motd', value: 'x' }, ...denied('public.motd') },
  { name: 'the operation\'s own 400 for an allowed caller', method: 'POST', url: op('increment'), token: f => f.u1, body: { path: 'users.u1.name' }, expectStatus: 400, expectCode: 'NOT_A_NUMBER' },
  { name: '403, not the operation\'s 400, for a refused caller', method: 'POST', url: op('increment'), token: f => f.u2, body: { path: 'users.u1.name' }, ...denied('users.u1.name') },
  { name: '400 for a body without a path', method: 'POST', url: op('set'), token: f => f.u1, body: { value: 1 }, expectStatus: 400, expectCode: 'INVALID_PATH' },
  { name: '412 for an If-Match that does not match', method: 'POST', url: op('set'), token: f => f.u1, headers: { 'if-match': '"999999"' }, body: { path: 'users.u1.name', value: 'Z' }, expectStatus: 412, expectCode: 'PRECONDITION_FAILED' },
  { name: 'update needs the root .write', method: 'POST', url: `${PROJECT}/content`, token: f => f.u1, body: { users: {} }, ...denied('') },
  { name: 'revert needs the root .write', method: 'POST', url: op('revert'), token: f => f.u1, bodyAt: v => ({ version: v }), ...denied('') },
  { name: 'without rules, app users may not write', prepare: withoutRules, method: 'POST', url: op('set'), token: f => f.u1, body: { path: 'users.u1.name', value: 'Z' }, ...denied('users.u1.name') },
  { name: 'a batch of allowed operations', method: 'POST', url: op('batch'), token: f => f.u1, body: { operations: [{ op: 'set', path: 'users.u1.name', value: 'Z' }, { op: 'increment', path: 'leaderboard.u1.score' }] }, expectStatus: 200, expectBody: { message: BATCH_MESSAGE, version: expect.any(Number) }, expectContent: with_(c => { c.users.u1.name = 'Z'; c.leaderboard.u1.score = 6 }) },
  { name: 'a batch with one refused operation: 403 naming it, nothing changed', method: 'POST', url: op('batch'), token: f => f.u1, body: { operations: [{ op: 'set', path: 'users.u1.name', value: 'Z' }, { op: 'set', path: 'users.u2.name', value: 'Z' }] }, expectStatus: 403, expectCode: 'RULES_DENIED', expectOperation: 1 },
  { name: 'a batch checks each operation with the state before it', method: 'POST', url: op('batch'), token: f => f.u1, body: { operations: [{ op: 'increment', path: 'leaderboard.u1.score', value: 3 }, { op: 'decrement', path: 'leaderboard.u1.score', value: 1 }] }, expectStatus: 403, expectCode: 'RULES_DENIED', expectOperation: 1 },
  { name: 'a batch\'s test needs .read', method: 'POST', url: op('batch'), token: f => f.u1, body: { operations: [{ op: 'test', path: 'users.u2.name', value: 'B' }, { op: 'set', path: 'users.u1.name', value: 'Z' }] }, expectStatus: 403, expectCode: 'RULES_DENIED', expectOperation: 0 },
  { name: 'a batch\'s test at a readable path', method: 'POST', url: op('batch'), token: f => f.u1, body: { operations: [{ op: 'test', path: 'leaderboard.u2.score', value: 3 }, { op: 'set', path: 'users.u1.name', value: 'Z' }] }, expectStatus: 200, expectContent: with_(c => { c.users.u1.name = 'Z' }) },
  { name: 'a patch replacing in their subtree', method: 'PATCH', url: `${PROJECT}/content`, token: f => f.u1, headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'replace', path: '/users/u1/name', value: 'P' }], expectStatus: 200, expectBody: { message: PATCH_MESSAGE, version: expect.any(Number) }, expectContent: with_(c => { c.users.u1.name = 'P' }) },
  { name: 'a patch moving out of u2\'s subtree: 403', method: 'PATCH', url: `${PROJECT}/content`, token: f => f.u1, headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'move', from: '/users/u2/name', path: '/users/u1/stolen' }], expectStatus: 403, expectCode: 'RULES_DENIED', expectOperation: 0 },
  { name: 'a patch copying from a readable path', method: 'PATCH', url: `${PROJECT}/content`, token: f => f.u1, headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'copy', from: '/leaderboard/u2', path: '/users/u1/seen' }], expectStatus: 200, expectContent: with_(c => { (c.users.u1 as Record<string, unknown>).seen = { score: 3 } }) },
  { name: 'a patch copying from an unreadable path: 403', method: 'PATCH', url: `${PROJECT}/content`, token: f => f.u1, headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'copy', from: '/users/u2', path: '/users/u1/seen' }], expectStatus: 403, expectCode: 'RULES_DENIED', expectOperation: 0 },
  { name: 'owners write as before', method: 'POST', url: op('set'), token: f => f.ownerSession, body: { path: 'users.u2.name', value: 'O' }, expectStatus: 200, expectContent: with_(c => { c.users.u2.name = 'O' }) },
  { name: 'editors write as before', method: 'POST', url: op('increment'), token: f => f.editorSession, body: { path: 'leaderboard.u2.score', value: -1 }, expectStatus: 200, expectContent: with_(c => { c.leaderboard.u2.score = 2 }) },
  { name: 'API keys write as before', method: 'POST', url: `${PROJECT}/content`, token: f => f.writeKey, body: { a: 1 }, expectStatus: 200, expectContent: { a: 1 } },
  { name: 'a read key still may not write', method: 'POST', url: op('set'), token: f => f.readKey, body: { path: 'a', value: 1 }, expectStatus: 403, expectCode: 'KEY_PERMISSION_DENIED' }
]

const TOKENS: Row[] = [
  { name: '401 for an expired token', method: 'GET', url: read('public'), token: f => f.expired, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: 'a token expired less than 60 s ago still works (leeway)', method: 'GET', url: read('public'), token: f => f.withinLeeway, expectStatus: 200, expectBody: { motd: 'hi' } },
  { name: '401 for a token not valid yet (nbf beyond the leeway)', method: 'GET', url: read('public'), token: f => f.notYet, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 for another issuer', method: 'GET', url: read('public'), token: f => f.wrongIssuer, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 for another audience', method: 'GET', url: read('public'), token: f => f.wrongAudience, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 for a token signed with another secret (another project\'s)', method: 'POST', url: op('set'), token: f => f.otherSecret, body: { path: 'users.u1.name', value: 'Z' }, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 for a bad signature', method: 'GET', url: read('public'), token: f => f.badSignature, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 for alg none', method: 'GET', url: read('public'), token: f => f.algNone, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 for a token without sub', method: 'GET', url: read('public'), token: f => f.noSub, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 on a project that trusts no app sign-in', method: 'GET', url: '/api/@alice/other/content?path=public', token: f => f.u1, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 on another user\'s project', method: 'GET', url: '/api/@bob/demo/content?path=public', token: f => f.u1, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 once the owner stops trusting the sign-in', prepare: withoutAuth, method: 'GET', url: read('public'), token: f => f.u1, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '404 for a missing project', method: 'GET', url: '/api/@alice/nothing-here/content', token: f => f.u1, expectStatus: 404, expectCode: 'PROJECT_NOT_FOUND' },
  { name: '404 for a missing user', method: 'GET', url: '/api/@nobody-here/demo/content', token: f => f.u1, expectStatus: 404, expectCode: 'USER_NOT_FOUND' },
  { name: '400 for a username without "@"', method: 'GET', url: '/api/alice/demo/content', token: f => f.u1, expectStatus: 400, expectCode: 'INVALID_USERNAME' },
  { name: '401 on /api/me (names no project)', method: 'GET', url: '/api/me', token: f => f.u1, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 on /api/projects', method: 'GET', url: '/api/projects', token: f => f.u1, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 on /api/keys', method: 'GET', url: '/api/keys', token: f => f.u1, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 on the owner\'s schema endpoint', method: 'GET', url: `${PROJECT}/schema`, token: f => f.u1, expectStatus: 401, expectCode: 'INVALID_TOKEN' },
  { name: '401 on the rules endpoint', method: 'GET', url: RULES_URL, token: f => f.u1, expectStatus: 401, expectCode: 'INVALID_TOKEN' }
]

const bigRules = { rules: { a: { '.read': `auth.sub == "${'x'.repeat(1500)}"` }, b: { '.read': `auth.sub == "${'y'.repeat(1500)}"` }, c: { '.read': `auth.sub == "${'z'.repeat(1500)}"` } } }

const OWNER: Row[] = [
  { name: 'PUT …/rules stores the document and answers it', method: 'PUT', url: RULES_URL, token: f => f.ownerSession, body: RULES, expectStatus: 200, expectBody: RULES },
  { name: 'GET …/rules answers the document', method: 'GET', url: RULES_URL, token: f => f.ownerSession, expectStatus: 200, expectBody: RULES, expectHeaders: { 'last-modified': /GMT$/ } },
  { name: 'DELETE …/rules', method: 'DELETE', url: RULES_URL, token: f => f.ownerSession, expectStatus: 200, expectBody: { message: 'Rules removed' } },
  { name: 'GET …/rules 404 without rules', prepare: withoutRules, method: 'GET', url: RULES_URL, token: f => f.ownerSession, expectStatus: 404, expectCode: 'RULES_NOT_FOUND' },
  { name: 'DELETE …/rules 404 without rules', prepare: withoutRules, method: 'DELETE', url: RULES_URL, token: f => f.ownerSession, expectStatus: 404, expectCode: 'RULES_NOT_FOUND' },
  { name: '400 INVALID_RULES for bad CEL, naming the rule', method: 'PUT', url: RULES_URL, token: f => f.ownerSession, body: { rules: { users: { $uid: { '.write': 'auth.sub ==' } } } }, expectStatus: 400, expectBody: { code: 'INVALID_RULES', message: expect.stringContaining('users.$uid/.write') } },
  { name: '400 INVALID_RULES for an unknown "." key', method: 'PUT', url: RULES_URL, token: f => f.ownerSession, body: { rules: { a: { '.validate': 'true' } } }, expectStatus: 400, expectCode: 'INVALID_RULES' },
  { name: '400 INVALID_RULES for an unknown variable', method: 'PUT', url: RULES_URL, token: f => f.ownerSession, body: { rules: { a: { '.read': 'uid == "x"' } } }, expectStatus: 400, expectCode: 'INVALID_RULES' },
  { name: '400 INVALID_RULES without "rules"', method: 'PUT', url: RULES_URL, token: f => f.ownerSession, body: { users: {} }, expectStatus: 400, expectCode: 'INVALID_RULES' },
  { name: '400 INVALID_RULES past RULES_LIMIT', method: 'PUT', url: RULES_URL, token: f => f.ownerSession, body: bigRules, expectStatus: 400, expectBody: { code: 'INVALID_RULES', message: expect.stringContaining('RULES_LIMIT') } },
  { name: '400 INVALID_JSON for a body that is not JSON', method: 'PUT', url: RULES_URL, token: f => f.ownerSession, raw: '{"rules":', expectStatus: 400, expectCode: 'INVALID_JSON' },
  { name: '401 without authentication', method: 'GET', url: RULES_URL, token: () => undefined, expectStatus: 401, expectCode: 'AUTH_REQUIRED' },
  { name: '403 for the owner\'s API key', method: 'PUT', url: RULES_URL, token: f => f.writeKey, body: RULES, expectStatus: 403, expectCode: 'SESSION_REQUIRED' },
  { name: '403 for an editor', method: 'PUT', url: RULES_URL, token: f => f.editorSession, body: RULES, expectStatus: 403, expectCode: 'OWNER_REQUIRED' },
  { name: '403 for a stranger', method: 'GET', url: AUTH_URL, token: f => f.strangerSession, expectStatus: 403, expectCode: 'FORBIDDEN' },
  { name: '405 for POST …/rules', method: 'POST', url: RULES_URL, token: f => f.ownerSession, body: RULES, expectStatus: 405, expectCode: 'METHOD_NOT_ALLOWED' },
  { name: 'PUT …/auth with an HS256 secret answers without it', method: 'PUT', url: AUTH_URL, token: f => f.ownerSession, body: HS256, expectStatus: 200, expectBody: { issuer: APP_ISSUER, audience: APP_AUDIENCE, kind: 'hs256Secret', setBy: '@alice', setAt: expect.any(String) } },
  { name: 'GET …/auth never shows the secret', method: 'GET', url: AUTH_URL, token: f => f.ownerSession, expectStatus: 200, expectBody: { issuer: APP_ISSUER, audience: APP_AUDIENCE, kind: 'hs256Secret', setBy: '@alice', setAt: expect.any(String) } },
  { name: 'DELETE …/auth', method: 'DELETE', url: AUTH_URL, token: f => f.ownerSession, expectStatus: 200, expectBody: { message: 'App sign-in removed' } },
  { name: 'GET …/auth 404 without one', prepare: withoutAuth, method: 'GET', url: AUTH_URL, token: f => f.ownerSession, expectStatus: 404, expectCode: 'AUTH_CONFIG_NOT_FOUND' },
  { name: 'DELETE …/auth 404 without one', prepare: withoutAuth, method: 'DELETE', url: AUTH_URL, token: f => f.ownerSession, expectStatus: 404, expectCode: 'AUTH_CONFIG_NOT_FOUND' },
  { name: '400 for a secret under 32 bytes', method: 'PUT', url: AUTH_URL, token: f => f.ownerSession, body: { issuer: APP_ISSUER, hs256Secret: 'short' }, expectStatus: 400, expectCode: 'INVALID_AUTH_CONFIG' },
  { name: '400 for two ways at once', method: 'PUT', url: AUTH_URL, token: f => f.ownerSession, body: { ...HS256, jwksUrl: 'https://example.com/jwks.json' }, expectStatus: 400, expectCode: 'INVALID_AUTH_CONFIG' },
  { name: '400 for no way at all', method: 'PUT', url: AUTH_URL, token: f => f.ownerSession, body: { issuer: APP_ISSUER }, expectStatus: 400, expectCode: 'INVALID_AUTH_CONFIG' },
  { name: '400 for a JWK set that does not parse', method: 'PUT', url: AUTH_URL, token: f => f.ownerSession, body: { issuer: APP_ISSUER, jwks: { keys: [{ kty: 'nonsense' }] } }, expectStatus: 400, expectCode: 'INVALID_AUTH_CONFIG' },
  { name: '400 for a JWK set with a shared key', method: 'PUT', url: AUTH_URL, token: f => f.ownerSession, body: { issuer: APP_ISSUER, jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }, expectStatus: 400, expectCode: 'INVALID_AUTH_CONFIG' },
  { name: '400 WEBHOOK_URL_FORBIDDEN for a JWKS URL on loopback', method: 'PUT', url: AUTH_URL, token: f => f.ownerSession, body: { issuer: APP_ISSUER, jwksUrl: 'https://127.0.0.1/jwks.json' }, expectStatus: 400, expectCode: 'WEBHOOK_URL_FORBIDDEN' },
  { name: '400 WEBHOOK_URL_FORBIDDEN for a plain http JWKS URL', method: 'PUT', url: AUTH_URL, token: f => f.ownerSession, body: { issuer: APP_ISSUER, jwksUrl: 'http://example.com/jwks.json' }, expectStatus: 400, expectCode: 'WEBHOOK_URL_FORBIDDEN' },
  { name: '400 for an unknown member', method: 'PUT', url: AUTH_URL, token: f => f.ownerSession, body: { ...HS256, algorithm: 'none' }, expectStatus: 400, expectCode: 'INVALID_BODY' },
  { name: 'check: u1 may write their subtree, by users.$uid/.write', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: { sub: 'u1' }, op: 'write', path: 'users.u1.name', value: 'Z' }, expectStatus: 200, expectBody: { allowed: true, rule: 'users.$uid/.write' } },
  { name: 'check: u1 may not read u2\'s', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: { sub: 'u1' }, op: 'read', path: 'users.u2' }, expectStatus: 200, expectBody: { allowed: false } },
  { name: 'check: anyone reads the leaderboard', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: null, op: 'read', path: 'leaderboard.u1' }, expectStatus: 200, expectBody: { allowed: true, rule: 'leaderboard/.read' } },
  { name: 'check: a lower score is refused (newData from value)', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: { sub: 'u1' }, op: 'write', path: 'leaderboard.u1.score', value: 1 }, expectStatus: 200, expectBody: { allowed: false } },
  { name: 'check: a higher score is allowed', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: { sub: 'u1' }, op: 'write', path: 'leaderboard.u1.score', value: 9 }, expectStatus: 200, expectBody: { allowed: true, rule: 'leaderboard.$player.score/.write' } },
  { name: 'check: with its own rules, those decide (u1 denied what the saved rules allow)', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: { sub: 'u1' }, op: 'write', path: 'users.u1.name', value: 'Z', rules: { rules: { leaderboard: { '.read': true } } } }, expectStatus: 200, expectBody: { allowed: false } },
  { name: 'check: with its own rules, a read they allow', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: null, op: 'read', path: 'users.u2', rules: { rules: { '.read': 'true' } } }, expectStatus: 200, expectBody: { allowed: true, rule: '/.read' } },
  { name: 'check: 400 INVALID_RULES for its own rules that do not compile', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: null, op: 'read', path: 'a', rules: { rules: { a: { '.read': 'auth.sub ==' } } } }, expectStatus: 400, expectCode: 'INVALID_RULES' },
  { name: 'check: the saved rules are unchanged by a check with its own', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: { sub: 'u1' }, op: 'write', path: 'users.u1.name', value: 'Z' }, expectStatus: 200, expectBody: { allowed: true, rule: 'users.$uid/.write' } },
  { name: 'check: 400 for an invalid path', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: null, op: 'read', path: 'a..b' }, expectStatus: 400, expectCode: 'INVALID_PATH' },
  { name: 'check: 400 for an unknown op', method: 'POST', url: `${RULES_URL}/check`, token: f => f.ownerSession, body: { auth: null, op: 'delete', path: 'a' }, expectStatus: 400, expectCode: 'INVALID_BODY' },
  { name: 'check: 403 for an editor', method: 'POST', url: `${RULES_URL}/check`, token: f => f.editorSession, body: { auth: null, op: 'read', path: 'a' }, expectStatus: 403, expectCode: 'OWNER_REQUIRED' }
]

describe('app users and rules over HTTP (docs/design.md §17)', () => {
  let app: TestApp
  let fixture: Fixture
  beforeAll(async () => {
    const started = await startContentApp({ RULES_LIMIT: '4096' })
    app = started.app
    const base = started.fixture
    fixture = {
      ...base,
      u1: await hs256Token({ sub: 'u1' }),
      u2: await hs256Token({ sub: 'u2' }),
      u3: await hs256Token({ sub: 'u3' }),
      admin: await hs256Token({ sub: 'boss', role: 'admin' }),
      expired: await hs256Token({ sub: 'u1' }, { expiresIn: -120 }),
      withinLeeway: await hs256Token({ sub: 'u1' }, { expiresIn: -20 }),
      notYet: await hs256Token({ sub: 'u1' }, { notBeforeIn: 600 }),
      wrongIssuer: await hs256Token({ sub: 'u1' }, { issuer: 'https://evil.example/' }),
      wrongAudience: await hs256Token({ sub: 'u1' }, { audience: 'another-app' }),
      otherSecret: await hs256Token({ sub: 'u1' }, { secret: 'another-projects-secret-also-32-bytes-long' }),
      badSignature: tampered(await hs256Token({ sub: 'u1' })),
      algNone: unsignedToken(),
      noSub: await hs256Token({}, { sub: null })
    }
    // @bob/demo trusts another secret: a token of @alice/demo's app is not one of its.
    const bob = await call(app.url, 'PUT', '/api/@bob/demo/auth', { token: fixture.strangerSession, body: { issuer: APP_ISSUER, hs256Secret: 'another-projects-secret-also-32-bytes-long' } })
    expect(bob.status).toBe(200)
  })
  afterAll(async () => { await app.close() })

  const target = ownerTarget(() => app.url, () => fixture, BASE)

  const groups: Array<[string, Row[]]> = [['reads', READS], ['writes', WRITES], ['tokens', TOKENS], ['owner endpoints', OWNER]]
  for (const [name, rows] of groups) {
    describe(name, () => {
      // Each row starts from the project trusting the app with RULES, unless it says otherwise.
      for (const row of rows) it(row.name, async () => { await runScenario(target, { ...row, prepare: row.prepare ?? withRules }) })
    })
  }

  it('records an app user\'s change with actor {type: "app", sub}', async () => {
    await withRules(app.url, fixture)
    const set = await call(app.url, 'POST', op('set'), { token: fixture.u2, body: { path: 'users.u2.name', value: 'logged' } })
    expect(set.status).toBe(200)
    const version = Number(JSON.parse(set.headers.get('etag') ?? '0'))
    const log = await call(app.url, 'GET', `${PROJECT}/content/changes?since=${version - 1}`, { token: fixture.ownerSession })
    expect(log.body.changes[0]).toMatchObject({ version, op: 'set', path: 'users.u2.name', actor: { type: 'app', sub: 'u2' } })
  })
})
