// Input an attacker or a broken client would send: prototype keys, deep nesting, huge or
// malformed bodies, wrong JSON types, odd encodings. Each must be a catalogued 4xx that
// changes nothing, and the server must stay healthy and unpolluted.
import { gzipSync } from 'node:zlib'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { PATH_OPERATION_NAMES, type PathOperationName } from '../../shared/operation-table.js'
import { call, ownerWithProject, type CallResult } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { expectErrorShape } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

const OPS = PATH_OPERATION_NAMES

/** A body with the members `op` accepts (any other is 400 INVALID_BODY), around `path`. */
const bodyFor = (op: PathOperationName, path: unknown) =>
  ({ path, ...(op === 'delete' ? {} : { value: 1 }), ...(op === 'insert' ? { index: 0 } : {}) })
const BASE = { keep: { n: 1, list: [1] } }

function nested (levels: number): unknown {
  let value: unknown = 1
  for (let i = 0; i < levels; i++) value = { k: value }
  return value
}

function expectPristine (): void {
  const probe = {} as Record<string, unknown>
  expect(probe.polluted).toBeUndefined()
  expect(probe.x).toBeUndefined()
  expect(probe.b).toBeUndefined()
  expect(Object.prototype).not.toHaveProperty('polluted')
  expect(Object.keys(Object.prototype)).toEqual([])
}

describe('hostile input', () => {
  let app: TestApp
  let key: string
  let session: string
  let project: string
  beforeAll(async () => {
    app = await startTestApp()
    const owner = await ownerWithProject(app.url, 'mallory')
    key = owner.key
    session = owner.session
    project = owner.path
  })
  afterAll(async () => { await app.close() })

  const send = (op: string | null, options: { body?: unknown, raw?: string | Uint8Array, headers?: Record<string, string> }) =>
    call(app.url, 'POST', op === null ? `${project}/content` : `${project}/content/${op}`, { token: key, ...options })
  const content = async () => {
    const r = await call(app.url, 'GET', `${project}/content`, { token: key })
    return { body: r.body as unknown, version: r.headers.get('etag') }
  }
  /** Resets the content, runs the request, and checks it failed as expected with no change. */
  const expectRejected = async (request: () => Promise<CallResult>, status: number, code?: string) => {
    expect((await send(null, { body: BASE })).status).toBe(200)
    const before = await content()
    const r = await request()
    expect(r.status, r.text).toBe(status)
    expectErrorShape(r, code)
    expect(await content()).toEqual(before)
    return r
  }

  afterEach(async () => {
    expectPristine()
    expect((await call(app.url, 'GET', '/healthz')).status).toBe(200)
  })

  describe('prototype pollution', () => {
    it.each(['__proto__', '__proto__.x', 'a.__proto__.b', 'a.b.__proto__', 'constructor.__proto__.x'])('path %s is 400 INVALID_PATH for every operation', async (path) => {
      for (const op of OPS) {
        await expectRejected(() => send(op, { body: bodyFor(op, path) }), 400, 'INVALID_PATH')
      }
      await expectRejected(() => call(app.url, 'GET', `${project}/content?path=${encodeURIComponent(path)}`, { token: key }), 400, 'INVALID_PATH')
    })

    // docs/design.md §2: constructor and prototype are ordinary keys; they are stored as data
    // and never reach a real prototype.
    it('constructor.prototype.x is stored as plain data', async () => {
      await send(null, { body: {} })
      expect((await send('set', { body: { path: 'constructor.prototype.x', value: 1 } })).status).toBe(200)
      expect((await send('increment', { body: { path: 'toString' } })).status).toBe(200)
      expect((await send('push', { body: { path: 'hasOwnProperty', value: 1 } })).status).toBe(200)
      expect((await content()).body).toEqual({ constructor: { prototype: { x: 1 } }, toString: 1, hasOwnProperty: [1] })
    })

    it('reading constructor or toString from empty content is 404, not a function', async () => {
      await send(null, { body: {} })
      for (const path of ['constructor', 'toString', 'constructor.prototype', 'valueOf']) {
        const r = await call(app.url, 'GET', `${project}/content?path=${path}`, { token: key })
        expect(r.status).toBe(404)
        expectErrorShape(r, 'PATH_NOT_FOUND')
      }
      for (const op of ['increment', 'push'] as const) {
        await send(null, { body: {} })
        expect((await send(op, { body: { path: 'constructor', value: 2 } })).status).toBe(200)
        expect((await content()).body).toEqual({ constructor: op === 'push' ? [2] : 2 })
      }
    })

    const POISON = '{"__proto__":{"polluted":1}}'
    it.each([
      ['set value', 'set', `{"path":"a","value":${POISON}}`],
      ['set value, nested', 'set', `{"path":"a","value":{"ok":[1,${POISON}]}}`],
      ['push value', 'push', `{"path":"keep.list","value":${POISON}}`],
      ['insert value', 'insert', `{"path":"keep.list","index":0,"value":${POISON}}`],
      ['update body', null, POISON],
      ['update body, nested', null, `{"a":{"b":${POISON}}}`],
      ['set value with a constructor.prototype chain and __proto__', 'set', `{"path":"a","value":{"constructor":{"prototype":${POISON}}}}`]
    ])('a "__proto__" key in the %s is 400 INVALID_VALUE', async (_where, op, raw) => {
      await expectRejected(() => send(op, { raw, headers: { 'content-type': 'application/json' } }), 400, 'INVALID_VALUE')
    })

    it('an own "__proto__" key beside a valid path-operation body never pollutes', async () => {
      for (const op of ['increment', 'set'] as const) {
        await send(null, { body: {} })
        const r = await send(op, { raw: `{"__proto__":{"polluted":1},"path":"n","value":3}`, headers: { 'content-type': 'application/json' } })
        expect(r.status).toBeLessThan(500)
        const stored = (await content()).body as Record<string, unknown>
        expect(Object.keys(stored).every(k => k === 'n')).toBe(true)
      }
    })
  })

  describe('size and depth', () => {
    it('100 levels of nesting are 400 for set, push, insert and update', async () => {
      const value = nested(100)
      await expectRejected(() => send('set', { body: { path: 'deep', value } }), 400, 'INVALID_VALUE')
      await expectRejected(() => send('push', { body: { path: 'keep.list', value } }), 400, 'INVALID_VALUE')
      await expectRejected(() => send('insert', { body: { path: 'keep.list', index: 0, value } }), 400, 'INVALID_VALUE')
      await expectRejected(() => send(null, { body: value }), 400, 'INVALID_VALUE')
    })

    it('64 levels are accepted, 65 are not', async () => {
      await send(null, { body: {} })
      expect((await send('set', { body: { path: 'd', value: nested(64) } })).status).toBe(200)
      await expectRejected(() => send('set', { body: { path: 'd', value: nested(65) } }), 400, 'INVALID_VALUE')
    })

    it('100 000 levels of array nesting are a 4xx, not a crash', async () => {
      const raw = `{"path":"x","value":${'['.repeat(100_000)}${']'.repeat(100_000)}}`
      const r = await expectRejected(() => send('set', { raw, headers: { 'content-type': 'application/json' } }), 400)
      expect(['INVALID_VALUE', 'INVALID_JSON']).toContain(r.body.code)
    })

    it('a 2 MiB body is 413 BODY_TOO_LARGE', async () => {
      const raw = JSON.stringify({ path: 'big', value: 'x'.repeat(2 * 1024 * 1024) })
      await expectRejected(() => send('set', { raw, headers: { 'content-type': 'application/json' } }), 413, 'BODY_TOO_LARGE')
      await expectRejected(() => send(null, { raw: JSON.stringify({ big: 'x'.repeat(2 * 1024 * 1024) }) }), 413, 'BODY_TOO_LARGE')
    })
  })

  describe('malformed bodies', () => {
    it.each(['{', '{"path":', 'not json', '{"path":"a",}', "{'path':'a'}", '\u0000'])('invalid JSON %j is 400 INVALID_JSON', async (raw) => {
      await expectRejected(() => send('set', { raw, headers: { 'content-type': 'application/json' } }), 400, 'INVALID_JSON')
    })

    it('a body without Content-Type is still read as JSON', async () => {
      await send(null, { body: {} })
      expect((await send('increment', { raw: '{"path":"n"}' })).status).toBe(200)
      expect((await content()).body).toEqual({ n: 1 })
    })

    it('an empty body is 400 INVALID_JSON, for every operation and for update (never {})', async () => {
      for (const op of [...OPS, null]) await expectRejected(() => send(op, { raw: '' }), 400, 'INVALID_JSON')
    })

    it('an unsupported charset is 400', async () => {
      await expectRejected(() => send('set', { raw: '{"path":"a","value":1}', headers: { 'content-type': 'application/json; charset=latin1' } }), 400, 'INVALID_BODY')
    })

    it('a corrupt gzip body is a 4xx; a valid one works', async () => {
      const r = await expectRejected(() => send('set', { raw: 'definitely not gzip', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }), 400)
      expect(r.body.code).toMatch(/^INVALID_/)
      await send(null, { body: {} })
      const ok = await send('set', { raw: new Uint8Array(gzipSync('{"path":"z","value":1}')), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } })
      expect(ok.status).toBe(200)
    })

    it.each(['br2', 'zstd', 'compress', 'gzip, br'])('a Content-Encoding of %j is 415 UNSUPPORTED_MEDIA_TYPE naming the codings taken', async (coding) => {
      const r = await expectRejected(() => send('set', { raw: '{"path":"a","value":1}', headers: { 'content-encoding': coding } }), 415, 'UNSUPPORTED_MEDIA_TYPE')
      expect(r.headers.get('accept-encoding')).toBe('gzip, deflate, br, identity')
      await expectRejected(() => send(null, { raw: '{"replaced":true}', headers: { 'content-encoding': coding } }), 415, 'UNSUPPORTED_MEDIA_TYPE')
    })
  })

  describe('wrong JSON types', () => {
    it.each([['a number', 5], ['an array', ['a']], ['an object', { a: 1 }], ['null', null], ['true', true]])('path as %s is 400 INVALID_PATH for every operation', async (_what, path) => {
      for (const op of OPS) await expectRejected(() => send(op, { body: bodyFor(op, path) }), 400, 'INVALID_PATH')
    })

    it.each([['an array', '[{"path":"a"}]'], ['a string', '"a"'], ['a number', '3'], ['null', 'null'], ['true', 'true']])('a body that is %s is 400 INVALID_BODY for every operation', async (_what, raw) => {
      for (const op of OPS) await expectRejected(() => send(op, { raw, headers: { 'content-type': 'application/json' } }), 400, 'INVALID_BODY')
      await expectRejected(() => send(null, { raw, headers: { 'content-type': 'application/json' } }), 400, 'INVALID_BODY')
    })

    it.each([['a string', '1'], ['null', null], ['a boolean', true], ['an array', [1]], ['an object', { n: 1 }]])('increment/decrement value as %s is 400 INVALID_VALUE', async (_what, value) => {
      for (const op of ['increment', 'decrement']) await expectRejected(() => send(op, { body: { path: 'keep.n', value } }), 400, 'INVALID_VALUE')
    })

    it.each([['a string', '0'], ['a float', 0.5], ['null', null], ['an array', [0]], ['NaN-ish text', 'NaN'], ['1e300', 1e300]])('insert index as %s is 400', async (_what, index) => {
      await expectRejected(() => send('insert', { body: { path: 'keep.list', value: 1, index } }), 400)
    })

    it('Infinity cannot be sent: 1e999 parses to Infinity and is refused', async () => {
      await expectRejected(() => send('increment', { raw: '{"path":"keep.n","value":1e999}', headers: { 'content-type': 'application/json' } }), 400)
      await expectRejected(() => send('set', { raw: '{"path":"keep.n","value":-1e999}', headers: { 'content-type': 'application/json' } }), 400, 'INVALID_VALUE')
    })

    it.each([['a dot', { 'a.b': 1 }], ['a leading $', { $where: 1 }], ['an empty key', { '': 1 }], ['a control character', { 'a\u0001': 1 }], ['a 769-byte key', { ['é'.repeat(384) + 'x']: 1 }]])('a value key with %s is 400 INVALID_VALUE', async (_what, value) => {
      await expectRejected(() => send('set', { body: { path: 'v', value } }), 400, 'INVALID_VALUE')
      await expectRejected(() => send(null, { body: { wrapper: value } }), 400, 'INVALID_VALUE')
    })

    it('path segments starting with $ or holding control characters are 400', async () => {
      for (const path of ['$set', 'a.$inc', 'a\nb', 'a\u007fb', 'x'.repeat(1025), Array(33).fill('a').join('.')]) {
        await expectRejected(() => send('set', { body: { path, value: 1 } }), 400, 'INVALID_PATH')
      }
    })
  })

  describe('round trips', () => {
    it('huge numbers, -0, unicode keys and strings come back as sent', async () => {
      await send(null, { body: {} })
      const value = { max: Number.MAX_VALUE, min: Number.MIN_VALUE, neg: -1.5e300, big: 2 ** 53, 'ключ': 'значение', 'emoji🎉': '🎉\u2028', '日本': { 'é': ['\\', '"', '\u0000'] } }
      expect((await send('set', { body: { path: 'données.日本', value } })).status).toBe(200)
      expect((await send('set', { body: { path: 'zero', value: -0 } })).status).toBe(200)
      expect((await send('set', { body: { path: 'k', value: { ['é'.repeat(384)]: 1 } } })).status).toBe(200)
      const got = await call(app.url, 'GET', `${project}/content?path=${encodeURIComponent('données.日本')}`, { token: key })
      expect(got.status).toBe(200)
      expect(got.body).toEqual(value)
      const zero = await call(app.url, 'GET', `${project}/content?path=zero`, { token: key })
      // JSON has one zero on the wire: -0 is stored as a number and read back as 0.
      expect(zero.text).toMatch(/^-?0$/)
      expect((await content()).body).toMatchObject({ k: { ['é'.repeat(384)]: 1 } })
    })

    it('increment keeps doubles exact up to 2^53 and refuses overflow', async () => {
      await send(null, { body: { n: 2 ** 53 - 2 } })
      expect((await send('increment', { body: { path: 'n' } })).status).toBe(200)
      expect((await call(app.url, 'GET', `${project}/content?path=n`, { token: key })).body).toBe(2 ** 53 - 1)
      await send(null, { body: { n: -Number.MAX_VALUE } })
      const r = await send('decrement', { body: { path: 'n', value: Number.MAX_VALUE } })
      expect(r.status).toBe(400)
      expectErrorShape(r, 'NON_FINITE_RESULT')
      expect((await content()).body).toEqual({ n: -Number.MAX_VALUE })
    })
  })

  describe('hostile URLs', () => {
    it.each(['/api/@mallory/%E0%A4%A/content', '/api/%ZZ/demo/content/set', `/api/@mallory/demo%/content/increment`])('a URL parameter that is not valid percent-encoding (%s) is 404 JSON, not 500', async (path) => {
      await expectRejected(() => call(app.url, 'POST', path, { token: key, body: { path: 'keep.n' } }), 404, 'NOT_FOUND')
    })

    it('a key id that is not valid percent-encoding is 404', async () => {
      const r = await call(app.url, 'DELETE', '/api/keys/%ZZ', { token: session })
      expect(r.status).toBe(404)
      expectErrorShape(r, 'NOT_FOUND')
    })

    it('?path= given twice (an array) is 400, not a crash', async () => {
      const r = await call(app.url, 'GET', `${project}/content?path=a&path=b`, { token: key })
      expect(r.status).toBe(400)
      expectErrorShape(r, 'INVALID_PATH')
    })
  })

  describe('hostile headers', () => {
    it('absurd Authorization headers are 401', async () => {
      for (const authorization of ['Bearer', 'Bearer ', 'Bearer a b', `Bearer cdk_${'x'.repeat(8000)}`, 'bearer\tcds_x', 'Token cdk_x']) {
        const r = await call(app.url, 'GET', `${project}/content`, { headers: { authorization } })
        expect(r.status, authorization.slice(0, 20)).toBe(401)
        expectErrorShape(r)
      }
    })

    it('odd If-Match / If-None-Match values never crash', async () => {
      for (const tag of ['"', '""', '"-1"', '"1e3"', `"${'9'.repeat(400)}"`, ',,,', 'W/']) {
        const write = await send('set', { body: { path: 'a', value: 1 }, headers: { 'if-match': tag } })
        expect(write.status).toBe(412)
        const read = await call(app.url, 'GET', `${project}/content`, { token: session, headers: { 'if-none-match': tag } })
        expect(read.status).toBe(200)
      }
    })
  })
})

describe('content limit', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp({ CONTENT_LIMIT: '2048' }) })
  afterAll(async () => { await app.close() })

  it('a change past CONTENT_LIMIT is 413 CONTENT_TOO_LARGE and changes nothing', async () => {
    const { key, path } = await ownerWithProject(app.url, 'limited')
    expect((await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'a', value: 'x'.repeat(1500) } })).status).toBe(200)
    const before = await call(app.url, 'GET', `${path}/content`, { token: key })
    for (const [op, body] of [
      ['set', { path: 'b', value: 'y'.repeat(1000) }],
      ['push', { path: 'list', value: 'y'.repeat(1000) }],
      ['insert', { path: 'list', index: 0, value: 'y'.repeat(1000) }]
    ] as const) {
      const r = await call(app.url, 'POST', `${path}/content/${op}`, { token: key, body })
      expect(r.status).toBe(413)
      expectErrorShape(r, 'CONTENT_TOO_LARGE')
    }
    const update = await call(app.url, 'POST', `${path}/content`, { token: key, body: { big: 'z'.repeat(3000) } })
    expect(update.status).toBe(413)
    expectErrorShape(update, 'CONTENT_TOO_LARGE')
    const after = await call(app.url, 'GET', `${path}/content`, { token: key })
    expect(after.body).toEqual(before.body)
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'))
    // Still usable: a small change fits, and shrinking always works.
    expect((await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'b', value: 'ok' } })).status).toBe(200)
    expect((await call(app.url, 'POST', `${path}/content/delete`, { token: key, body: { path: 'a' } })).status).toBe(200)
    expect((await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'b', value: 'y'.repeat(1000) } })).status).toBe(200)
  })
})
