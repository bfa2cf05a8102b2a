// Property: whatever arrives over HTTP — random or malformed bodies, odd Authorization,
// Content-Type and If-Match headers, URL paths with encodings, dots, "@" and unicode — the
// answer is never a 5xx, every error has the {message, code} shape, and the process stays
// healthy (GET /healthz 200, the project's content still readable JSON).
import fc from 'fast-check'
import { Agent, request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { fuzzSeed, jsonValue, pathText } from './arbitraries.js'

const NUM_RUNS = 300
let app: TestApp
let key: string
let session: string
const agent = new Agent({ keepAlive: true, maxSockets: 4 })

beforeAll(async () => {
  app = await startTestApp({ BODY_LIMIT: '65536', CONTENT_LIMIT: '65536' })
  ;({ key, session } = await ownerWithProject(app.url, 'alice'))
})
afterAll(async () => {
  agent.destroy()
  await app?.close()
})

interface RawResponse { status: number, text: string, contentType: string | undefined }

/** node:http sends the path as given (no URL normalisation of "..", "%2e" or "@"). */
function send (method: string, path: string, headers: Record<string, string>, body: string | undefined): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(app.url + '/', { method, path, headers, agent }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, contentType: res.headers['content-type'] }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const PREFIXES = ['/api/@alice/demo/content', '/api/@alice/demo/content/', '/api/@alice/demo/content/', '/api/@alice/demo/content/', '/api/@alice/demo', '/api/alice/demo/content', '/api/@ALICE/demo/content/set',
  '/api/keys/', '/api/@alice/demo/members/', '/api/projects', '/api/auth/login', '/api/me', '/healthz', '/', '/api/@/']
const OPS = ['increment', 'decrement', 'set', 'delete', 'push', 'insert', 'update', '', 'constructor', '__proto__']
const PIECES = ['..', '.', '%2e%2e', '%2F', '%00', '%', '%ZZ', '@', '@@', '//', 'ü', '%C3%BC', '%F0%9F%98%80', '~', ';', '?path=a.b', '?path=__proto__', '?path=', '#x', '%E0%A4%A']

const urlPath = fc.tuple(fc.constantFrom(...PREFIXES), fc.constantFrom(...OPS), fc.oneof(
  { weight: 2, arbitrary: fc.constant([]) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 3 }) }
))
  .map(([prefix, op, pieces]) => prefix + (prefix.endsWith('/') ? op : '') + pieces.join(''))
  // Characters node:http refuses to put on the request line are sent percent-encoded.
  .map(p => p.replace(/[^\x21-\x7e]/g, c => encodeURIComponent(c)))

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map(c => String.fromCharCode(c)), maxLength: 40 })

const authorization = fc.oneof(
  fc.constant(undefined),
  { weight: 4, arbitrary: fc.constant('KEY') }, { weight: 2, arbitrary: fc.constant('SESSION') },
  fc.constantFrom('Bearer', 'Bearer ', 'bearer  KEY', 'Basic YWxpY2U6cHc=', 'Bearer cd_key_', 'Bearer KEY KEY', 'Bearer\tKEY'),
  printable.map(s => `Bearer ${s}`),
  printable
)

const body = fc.oneof(
  fc.constant(undefined),
  jsonValue.map(v => JSON.stringify(v)),
  fc.record({ path: pathText, value: jsonValue, index: fc.oneof(fc.integer(), fc.string(), fc.double()) }, { requiredKeys: [] }).map(v => JSON.stringify(v)),
  fc.string({ maxLength: 60 }),
  fc.constantFrom('{', '{"path":', 'null', '[]', '"x"', '{"path":"a","value":1e999}', '{"__proto__":{"polluted":1},"path":"a","value":1}', '['.repeat(5000) + ']'.repeat(5000), 'x'.repeat(70_000))
)

const headers = fc.record({
  authorization,
  contentType: fc.option(fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-16', 'application/json; charset=bogus', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded'), { nil: undefined }),
  contentEncoding: fc.option(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'bogus'), { nil: undefined }),
  ifMatch: fc.option(fc.oneof(fc.constantFrom('"1"', '*', 'W/"1"', '"abc"', ', ,', '"1", "2"', '""', '"99999999999999999999"'), printable), { nil: undefined })
})

describe('hostile HTTP', () => {
  it('never answers 5xx and stays healthy', async () => {
    const seed = fuzzSeed('http')
    const statuses = new Map<number, number>()
    await fc.assert(fc.asyncProperty(
      fc.constantFrom('GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH'), urlPath, headers, body,
      async (method, path, h, payload) => {
        const sent: Record<string, string> = {}
        if (h.authorization !== undefined) sent.authorization = h.authorization === 'KEY' || h.authorization === 'SESSION'
          ? `Bearer ${h.authorization === 'KEY' ? key : session}`
          : h.authorization.replace('KEY', key)
        if (h.contentType) sent['content-type'] = h.contentType
        if (h.contentEncoding) sent['content-encoding'] = h.contentEncoding
        if (h.ifMatch !== undefined) sent['if-match'] = h.ifMatch
        const sentBody = method === 'GET' ? undefined : payload
        if (sentBody !== undefined) sent['content-length'] = String(Buffer.byteLength(sentBody))
        const r = await send(method, path, sent, sentBody)
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
        expect(r.status, `${method} ${path} → ${r.status} ${r.text.slice(0, 200)}`).toBeLessThan(500)
        // Every error the app writes is {message, code}. (Node's own parser answers garbage
        // on the request line with a bare 400 and no body: nothing of ours ran.)
        if (r.status >= 400 && r.text !== '') {
          expect(r.contentType).toMatch(/^application\/json/)
          const parsed = JSON.parse(r.text) as { message?: unknown, code?: unknown }
          expect(typeof parsed.message).toBe('string')
          expect(typeof parsed.code).toBe('string')
        }
      }
    ), { seed, numRuns: NUM_RUNS })
    console.log(`http: ${NUM_RUNS} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`)

    expect((await call(app.url, 'GET', '/healthz')).status).toBe(200)
    // The fuzz may legitimately have deleted the project or logged out (it holds the
    // owner's credentials): the service must still work end to end for a new user.
    const fresh = await ownerWithProject(app.url, 'after-fuzz')
    expect((await call(app.url, 'POST', `${fresh.path}/content/set`, { token: fresh.key, body: { path: 'ok', value: true } })).status).toBe(200)
    const content = await call(app.url, 'GET', `${fresh.path}/content`, { token: fresh.key })
    expect(content.body).toEqual({ ok: true })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})
