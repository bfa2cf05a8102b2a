// Every resource limit at its boundary: the limit itself is accepted, one past it is
// refused with the catalogued error and changes nothing. (Rate limits: rate-limit.test.ts;
// REQUEST_TIMEOUT: request-timeout.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

const BODY_LIMIT = 4096
const CONTENT_LIMIT = 2048
let app: TestApp
let key: string
let path: string

beforeAll(async () => {
  app = await startTestApp({ BODY_LIMIT: String(BODY_LIMIT), CONTENT_LIMIT: String(CONTENT_LIMIT) })
  ;({ key, path } = await ownerWithProject(app.url, 'limits'))
})
afterAll(async () => { await app?.close() })

async function content () {
  const r = await call(app.url, 'GET', `${path}/content`, { token: key })
  return { body: r.body, etag: r.headers.get('etag') }
}

/** An update body whose content serializes to exactly `bytes` bytes. */
function contentOfSize (bytes: number): Record<string, string> {
  const empty = JSON.stringify({ big: '' })
  return { big: 'y'.repeat(bytes - empty.length) }
}

const nested = (levels: number): unknown => levels === 0 ? 1 : [nested(levels - 1)]

describe('BODY_LIMIT', () => {
  it(`accepts a ${BODY_LIMIT}-byte body and refuses ${BODY_LIMIT + 1} bytes with 413, changing nothing`, async () => {
    // Storing a 4 KiB value would trip CONTENT_LIMIT instead, so the body at the limit is
    // one that is read and then refused for its path: PATH_CONFLICT proves it was parsed.
    await call(app.url, 'POST', `${path}/content`, { token: key, body: { n: 1 } })
    const conflict = (bytes: number) => JSON.stringify({ path: 'n.x', value: 'x'.repeat(bytes - JSON.stringify({ path: 'n.x', value: '' }).length) })
    expect(Buffer.byteLength(conflict(BODY_LIMIT))).toBe(BODY_LIMIT)
    const before = await content()
    const read = await call(app.url, 'POST', `${path}/content/set`, { token: key, raw: conflict(BODY_LIMIT), headers: { 'content-type': 'application/json' } })
    expect(read.status).toBe(400)
    expect(read.body.code).toBe('PATH_CONFLICT')
    const over = await call(app.url, 'POST', `${path}/content/set`, { token: key, raw: conflict(BODY_LIMIT + 1), headers: { 'content-type': 'application/json' } })
    expect(over.status).toBe(413)
    expect(over.body.code).toBe('BODY_TOO_LARGE')
    expect(await content()).toEqual(before)
  })
})

describe('CONTENT_LIMIT', () => {
  it(`stores content of exactly ${CONTENT_LIMIT} bytes and refuses a change to ${CONTENT_LIMIT + 1} with 413`, async () => {
    const exact = contentOfSize(CONTENT_LIMIT)
    expect(Buffer.byteLength(JSON.stringify(exact))).toBe(CONTENT_LIMIT)
    expect((await call(app.url, 'POST', `${path}/content`, { token: key, body: exact })).status).toBe(200)
    const before = await content()
    const over = await call(app.url, 'POST', `${path}/content`, { token: key, body: contentOfSize(CONTENT_LIMIT + 1) })
    expect(over.status).toBe(413)
    expect(over.body.code).toBe('CONTENT_TOO_LARGE')
    // Growth by an operation is held to the same limit.
    const push = await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'one', value: 1 } })
    expect(push.status).toBe(413)
    expect(await content()).toEqual(before)
  })
})

describe('paths', () => {
  it('accepts 32 segments and refuses 33', async () => {
    await call(app.url, 'POST', `${path}/content`, { token: key, body: {} })
    const segments = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`).join('.')
    expect((await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: segments(32), value: 1 } })).status).toBe(200)
    const over = await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: segments(33), value: 1 } })
    expect(over.status).toBe(400)
    expect(over.body.code).toBe('INVALID_PATH')
  })

  it('accepts 1024 characters and refuses 1025', async () => {
    await call(app.url, 'POST', `${path}/content`, { token: key, body: {} })
    const long = (n: number) => ['a'.repeat(700), 'b'.repeat(n - 701)].join('.')
    expect(long(1024)).toHaveLength(1024)
    expect((await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: long(1024), value: 1 } })).status).toBe(200)
    const over = await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: long(1025), value: 1 } })
    expect(over.status).toBe(400)
    expect(over.body.code).toBe('INVALID_PATH')
  })
})

describe('values', () => {
  it('accepts nesting of 64 levels and refuses 65, naming the problem', async () => {
    await call(app.url, 'POST', `${path}/content`, { token: key, body: {} })
    expect((await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'deep', value: nested(64) } })).status).toBe(200)
    const before = await content()
    const over = await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'deeper', value: nested(65) } })
    expect(over.status).toBe(400)
    expect(over.body.code).toBe('INVALID_VALUE')
    expect(over.body.message).toContain('64')
    expect(await content()).toEqual(before)
  })

  it('accepts keys of 768 UTF-8 bytes and refuses 769', async () => {
    await call(app.url, 'POST', `${path}/content`, { token: key, body: {} })
    const key768 = 'é'.repeat(384) // 2 bytes each
    expect((await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'k', value: { [key768]: 1 } } })).status).toBe(200)
    const over = await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'k', value: { [key768 + 'x']: 1 } } })
    expect(over.status).toBe(400)
    expect(over.body.code).toBe('INVALID_VALUE')
  })
})
