// Rate limits at the boundary (DESIGN.md §8): N requests pass, request N+1 is 429 with
// Retry-After and {message, code: RATE_LIMITED}, and changes nothing. Per credential, per
// IP when anonymous; login and signup share a stricter per-IP limit; RATE_LIMIT=0 is off.
import { afterEach, describe, expect, it } from 'vitest'
import { call, createKey, createProject, PASSWORD, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { callFrom } from './from-address.js'

let app: TestApp | undefined
afterEach(async () => { await app?.close(); app = undefined })

function expectLimited (r: { status: number, body: any, headers: { get?: (n: string) => string | null } | Record<string, unknown> }) {
  expect(r.status).toBe(429)
  expect(r.body).toEqual({ message: 'Too many requests; retry later', code: 'RATE_LIMITED' })
  const retryAfter = typeof (r.headers as Headers).get === 'function' ? (r.headers as Headers).get('retry-after') : (r.headers as Record<string, string>)['retry-after']
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
  expect(Number(retryAfter)).toBeLessThanOrEqual(60)
}

describe('RATE_LIMIT per credential', () => {
  it('allows exactly RATE_LIMIT requests per minute per credential; the next is 429 and changes nothing', async () => {
    app = await startTestApp({ RATE_LIMIT: '6', AUTH_RATE_LIMIT: '100' })
    const session = await signup(app.url, 'alice')
    await createProject(app.url, session, 'demo')
    const { key } = await createKey(app.url, session, { name: 'w', permission: 'write' })
    const increment = () => call(app!.url, 'POST', '/api/@alice/demo/content/increment', { token: key, body: { path: 'n' } })
    for (let i = 1; i <= 6; i++) expect((await increment()).status, `request ${i}`).toBe(200)
    expectLimited(await increment())
    // The limited increment did not happen; the session is a different credential with its own budget.
    const content = await call(app.url, 'GET', '/api/@alice/demo/content', { token: session })
    expect(content.status).toBe(200)
    expect(content.body).toEqual({ n: 6 })
    expect(content.headers.get('etag')).toBe('"6"')
  })

  it('counts anonymous callers per IP: one address exhausted, another still served', async () => {
    app = await startTestApp({ RATE_LIMIT: '3' })
    for (let i = 1; i <= 3; i++) expect((await callFrom('127.0.0.1', app.url, 'GET', '/api/me')).status).toBe(401)
    expectLimited(await callFrom('127.0.0.1', app.url, 'GET', '/api/me'))
    expect((await callFrom('127.0.0.2', app.url, 'GET', '/api/me')).status).toBe(401)
  })

  it('counts invalid tokens against the IP, so guessing keys is limited too', async () => {
    app = await startTestApp({ RATE_LIMIT: '2' })
    for (let i = 0; i < 2; i++) expect((await call(app.url, 'GET', '/api/me', { token: `cd_key_guess${i}` })).status).toBe(401)
    expectLimited(await call(app.url, 'GET', '/api/me', { token: 'cd_key_guess-last' }))
  })
})

describe('AUTH_RATE_LIMIT on login and signup', () => {
  it('allows AUTH_RATE_LIMIT attempts per IP; the next is 429 even with the right password', async () => {
    app = await startTestApp({ RATE_LIMIT: '1000', AUTH_RATE_LIMIT: '4' })
    await signup(app.url, 'bob') // attempt 1
    for (let i = 2; i <= 4; i++) {
      const wrong = await call(app.url, 'POST', '/api/auth/login', { body: { username: 'bob', password: `wrong-password-${i}` } })
      expect(wrong.status, `attempt ${i}`).toBe(401)
    }
    const limited = await call(app.url, 'POST', '/api/auth/login', { body: { username: 'bob', password: PASSWORD } })
    expectLimited(limited)
    // A limited signup creates no account: once another address signs "carol" up, it is new.
    expectLimited(await call(app.url, 'POST', '/api/auth/signup', { body: { username: 'carol', password: PASSWORD } }))
    expect((await callFrom('127.0.0.2', app.url, 'POST', '/api/auth/signup', { username: 'carol', password: PASSWORD })).status).toBe(201)
    expect((await callFrom('127.0.0.2', app.url, 'POST', '/api/auth/login', { username: 'bob', password: PASSWORD })).status).toBe(200)
  })

  it('leaves other endpoints to the general limit', async () => {
    app = await startTestApp({ RATE_LIMIT: '1000', AUTH_RATE_LIMIT: '1' })
    const session = await signup(app.url, 'dave')
    for (let i = 0; i < 5; i++) expect((await call(app.url, 'GET', '/api/me', { token: session })).status).toBe(200)
  })

  it('is off, like every limit, when RATE_LIMIT=0', async () => {
    app = await startTestApp({ RATE_LIMIT: '0', AUTH_RATE_LIMIT: '2' })
    await signup(app.url, 'erin')
    for (let i = 0; i < 4; i++) {
      expect((await call(app.url, 'POST', '/api/auth/login', { body: { username: 'erin', password: 'not-the-password' } })).status).toBe(401)
    }
  })
})

describe('TRUST_PROXY', () => {
  const anonymousFrom = (url: string, forwardedFor: string) =>
    call(url, 'GET', '/api/me', { headers: { 'x-forwarded-for': forwardedFor } })

  it('off (the default): X-Forwarded-For is ignored, so a client cannot pick a fresh budget by forging it', async () => {
    app = await startTestApp({ RATE_LIMIT: '2' })
    expect((await anonymousFrom(app.url, '203.0.113.1')).status).toBe(401)
    expect((await anonymousFrom(app.url, '203.0.113.2')).status).toBe(401)
    expectLimited(await anonymousFrom(app.url, '203.0.113.3'))
  })

  it('1: the address the proxy forwarded is the client, so clients behind one proxy get their own budgets', async () => {
    app = await startTestApp({ RATE_LIMIT: '2', TRUST_PROXY: '1' })
    expect((await anonymousFrom(app.url, '203.0.113.1')).status).toBe(401)
    expect((await anonymousFrom(app.url, '203.0.113.1')).status).toBe(401)
    expectLimited(await anonymousFrom(app.url, '203.0.113.1'))
    expect((await anonymousFrom(app.url, '203.0.113.2')).status).toBe(401)
  })
})
