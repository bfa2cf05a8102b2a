// Rate limits at the boundary (docs/design.md §8): N requests pass, request N+1 is 429 with
// Retry-After and {message, code: RATE_LIMITED}, and changes nothing. Per user (all their
// sessions and keys), per IP when anonymous; login and signup share a stricter per-IP limit;
// RATE_LIMIT=0 is off. Login is also locked per username after failed attempts.
import { afterEach, describe, expect, it } from 'vitest'
import { call, createKey, createProject, PASSWORD, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { callFrom } from './from-address.js'
import { manualClock } from '../support/clock.js'
import { burstOf } from '../../server/limits/limiter.js'

let app: TestApp | undefined
afterEach(async () => { await app?.close(); app = undefined })

function expectLimited (r: { status: number, body: any, headers: { get?: (n: string) => string | null } | Record<string, unknown> }, longestWaitSeconds = 60) {
  expect(r.status).toBe(429)
  expect(r.body).toEqual({ message: 'Too many requests; retry later', code: 'RATE_LIMITED' })
  const retryAfter = typeof (r.headers as Headers).get === 'function' ? (r.headers as Headers).get('retry-after') : (r.headers as Record<string, string>)['retry-after']
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
  expect(Number(retryAfter)).toBeLessThanOrEqual(longestWaitSeconds)
}

describe('RATE_LIMIT per user', () => {
  it('a key page takes one more point per 100 scoped projects it names, so listing keys in a loop runs out as fast as the work it makes; a page of unscoped keys costs one', async () => {
    // A still clock: the bucket refills only as it moves. 630 a minute: a burst of 105.
    app = await startTestApp({ RATE_LIMIT: '630', AUTH_RATE_LIMIT: '100' }, { clock: manualClock() })
    const session = await signup(app.url, 'alice')
    const refs: string[] = []
    for (let i = 0; i < 100; i++) { await createProject(app.url, session, `p${i}`); refs.push(`@alice/p${i}`) } // 100
    for (const name of ['one', 'two']) await createKey(app.url, session, { name, permission: 'read', projects: refs }) // 102
    const page = await call(app.url, 'GET', '/api/keys', { token: session }) // 103, then 2 more for 200 scopes: 105
    expect(page.status).toBe(200)
    expect(page.body.keys).toHaveLength(2)
    expectLimited(await call(app.url, 'GET', '/api/me', { token: session }))
    // Without scopes a page is one request like any other.
    const bob = await signup(app.url, 'bob')
    for (let i = 0; i < 102; i++) expect((await call(app.url, 'GET', '/api/me', { token: bob })).status).toBe(200)
    expect((await call(app.url, 'GET', '/api/keys', { token: bob })).status).toBe(200) // 103
    expect((await call(app.url, 'GET', '/api/me', { token: bob })).status).toBe(200) // 104
    expect((await call(app.url, 'GET', '/api/me', { token: bob })).status).toBe(200) // 105
    expectLimited(await call(app.url, 'GET', '/api/me', { token: bob }))
  })

  it('all of a user\'s sessions and keys share one budget: a fresh key does not restart it; the refused request changes nothing', async () => {
    app = await startTestApp({ RATE_LIMIT: '6', AUTH_RATE_LIMIT: '100' })
    const session = await signup(app.url, 'alice') // anonymous: the IP's budget
    await createProject(app.url, session, 'demo') // 1
    const first = (await createKey(app.url, session, { name: 'one', permission: 'write' })).key // 2
    const fresh = (await createKey(app.url, session, { name: 'fresh', permission: 'write' })).key // 3
    const increment = (key: string) => call(app!.url, 'POST', '/api/@alice/demo/content/increment', { token: key, body: { path: 'n' } })
    expect((await increment(first)).status).toBe(200) // 4
    expect((await increment(first)).status).toBe(200) // 5
    expect((await call(app.url, 'GET', '/api/me', { token: session })).status).toBe(200) // 6
    expectLimited(await increment(fresh))
    expectLimited(await increment(first))
    expectLimited(await call(app.url, 'GET', '/api/me', { token: session }))
    expectLimited(await call(app.url, 'POST', '/api/keys', { token: session, body: { name: 'another', permission: 'write' } }))
    // Another user has a budget of their own.
    const bob = await signup(app.url, 'bob')
    expect((await call(app.url, 'GET', '/api/me', { token: bob })).status).toBe(200)
    // The refused increment did not happen.
    const project = await app.store.findProject('alice', 'demo')
    expect(await app.store.readContent(project!.id)).toMatchObject({ version: 2, content: { n: 2 } })
  })
})

describe('RATE_LIMIT is a token bucket', () => {
  it('holds ten seconds\' worth (at least 100, at most RATE_LIMIT)', () => {
    expect(burstOf(6000)).toBe(1000)
    expect(burstOf(1200)).toBe(200)
    expect(burstOf(300)).toBe(100)
    expect(burstOf(6)).toBe(6)
  })

  it('a small limit holds RATE_LIMIT points and refills them one by one over the minute, not all at once', async () => {
    const clock = manualClock()
    app = await startTestApp({ RATE_LIMIT: '6', AUTH_RATE_LIMIT: '100' }, { clock })
    const session = await signup(app.url, 'alice') // the IP's budget
    const me = () => call(app!.url, 'GET', '/api/me', { token: session })
    for (let i = 0; i < 6; i++) expect((await me()).status).toBe(200)
    const refused = await me()
    expectLimited(refused, 10)
    // One point comes back every 10 s (6 a minute): after 10 s exactly one more request.
    clock.advance(10_000)
    expect((await me()).status).toBe(200)
    expectLimited(await me(), 10)
    // A whole minute refills the bucket, and no more than it holds.
    clock.advance(600_000)
    for (let i = 0; i < 6; i++) expect((await me()).status).toBe(200)
    expectLimited(await me(), 10)
  })

  it('a costly key page goes into debt past an empty bucket: the caller waits the debt out', async () => {
    const clock = manualClock()
    // 1800 a minute: a burst of 300, then one point every 33⅓ ms of the (still) clock.
    app = await startTestApp({ RATE_LIMIT: '1800', AUTH_RATE_LIMIT: '100' }, { clock })
    const session = await signup(app.url, 'alice')
    const refs: string[] = []
    for (let i = 0; i < 100; i++) { await createProject(app.url, session, `p${i}`); refs.push(`@alice/p${i}`) }
    for (let i = 0; i < 2; i++) await createKey(app.url, session, { name: `k${i}`, permission: 'read', projects: refs }) // 102
    for (let i = 0; i < 197; i++) expect((await call(app.url, 'GET', '/api/me', { token: session })).status).toBe(200) // 299
    // The last point admits the page; the 200 projects it names take 2 more: 2 points of debt.
    expect((await call(app.url, 'GET', '/api/keys', { token: session })).status).toBe(200)
    // The next request needs 3 points' time (100 ms): the debt and its own point.
    expectLimited(await call(app.url, 'GET', '/api/me', { token: session }), 1)
    clock.advance(60)
    expectLimited(await call(app.url, 'GET', '/api/me', { token: session }), 1)
    clock.advance(40)
    expect((await call(app.url, 'GET', '/api/me', { token: session })).status).toBe(200)
  })
})

describe('RATE_LIMIT when anonymous', () => {
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

describe('login attempts per username (LOGIN_ATTEMPTS_PER_USERNAME)', () => {
  const login = (from: string, username: string, password: string) =>
    callFrom(from, app!.url, 'POST', '/api/auth/login', { username, password })

  it('after 10 failures that username answers 429 with Retry-After from any IP, even with the right password; existing or not, the answers are the same', async () => {
    app = await startTestApp({ RATE_LIMIT: '10000', AUTH_RATE_LIMIT: '10000' })
    await signup(app.url, 'bob')
    await signup(app.url, 'carol')
    const answers: Record<string, unknown[]> = { bob: [], ghost: [] }
    for (const username of ['bob', 'ghost']) {
      for (let i = 0; i < 10; i++) {
        const wrong = await login(`127.0.0.${1 + (i % 3)}`, username, `wrong-password-${i}`)
        expect(wrong.status, `${username} attempt ${i + 1}`).toBe(401)
        answers[username]!.push(wrong.body)
      }
      const locked = await login('127.0.0.4', username, PASSWORD)
      expectLimited(locked, 15 * 60)
      answers[username]!.push(locked.body)
    }
    // Nothing tells an existing username from a missing one.
    expect(answers.ghost).toEqual(answers.bob)
    // Other usernames are not affected, from the same addresses.
    expect((await login('127.0.0.1', 'carol', PASSWORD)).status).toBe(200)
  })

  it('counts attempts before checking the password: 20 concurrent guesses, exactly 10 are checked', async () => {
    app = await startTestApp({ RATE_LIMIT: '10000', AUTH_RATE_LIMIT: '10000' })
    await signup(app.url, 'dana')
    const statuses = (await Promise.all(Array.from({ length: 20 }, (_, i) => login('127.0.0.1', 'dana', `guess-number-${i}`)))).map(r => r.status)
    expect(statuses.filter(s => s === 401)).toHaveLength(10)
    expect(statuses.filter(s => s === 429)).toHaveLength(10)
  })

  it('is a soft lock: it expires with LOGIN_ATTEMPT_WINDOW', async () => {
    app = await startTestApp({ RATE_LIMIT: '10000', AUTH_RATE_LIMIT: '10000', LOGIN_ATTEMPTS_PER_USERNAME: '3', LOGIN_ATTEMPT_WINDOW: '2s' })
    await signup(app.url, 'erin')
    for (let i = 0; i < 3; i++) expect((await login('127.0.0.1', 'erin', 'not-the-password')).status).toBe(401)
    expectLimited(await login('127.0.0.2', 'erin', PASSWORD), 2)
    await new Promise(resolve => setTimeout(resolve, 2100))
    expect((await login('127.0.0.2', 'erin', PASSWORD)).status).toBe(200)
  })

  it('a successful login gives the attempts back', async () => {
    app = await startTestApp({ RATE_LIMIT: '10000', AUTH_RATE_LIMIT: '10000', LOGIN_ATTEMPTS_PER_USERNAME: '3' })
    await signup(app.url, 'finn')
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2; i++) expect((await login('127.0.0.1', 'finn', 'not-the-password')).status).toBe(401)
      expect((await login('127.0.0.1', 'finn', PASSWORD)).status, `round ${round}`).toBe(200)
    }
  })

  it('does not count a request the login route refuses as malformed (400)', async () => {
    app = await startTestApp({ RATE_LIMIT: '10000', AUTH_RATE_LIMIT: '10000', LOGIN_ATTEMPTS_PER_USERNAME: '2' })
    await signup(app.url, 'gus')
    for (let i = 0; i < 5; i++) expect((await login('127.0.0.1', 'gus', 'short')).status).toBe(400)
    expect((await login('127.0.0.1', 'gus', PASSWORD)).status).toBe(200)
  })

  it('LOGIN_ATTEMPTS_PER_USERNAME=0 turns it off', async () => {
    app = await startTestApp({ RATE_LIMIT: '10000', AUTH_RATE_LIMIT: '10000', LOGIN_ATTEMPTS_PER_USERNAME: '0' })
    await signup(app.url, 'hal')
    for (let i = 0; i < 12; i++) expect((await login('127.0.0.1', 'hal', 'not-the-password')).status).toBe(401)
    expect((await login('127.0.0.1', 'hal', PASSWORD)).status).toBe(200)
  })
})
