// Refusals are held back (RATE_LIMIT_DELAY, server/limits/tarpit.ts), black-box against the
// real server process: a client over its budget gets its 429, refused handshake or
// RATE_LIMITED ack only after the delay (or its retryAfter, if shorter), in the usual shape;
// no more than RATE_LIMIT_DELAY_HELD are held at once per user or IP, the rest are answered
// without waiting for the held ones; and clients inside their budget are not held at all.
// Times are asserted only from below ("held at least"), never as speed bounds.
import { describe, expect, it } from 'vitest'
import { call, ownerWithProject, signup, type CallResult } from '../support/http.js'
import { metricValue } from '../support/metrics.js'
import { serverPerTest } from '../support/server-per-test.js'
import { connect, subscribe } from '../realtime/client.js'
import { callFrom } from './from-address.js'

const METRICS_TOKEN = 'metrics-token-for-the-tarpit-tests'
const HANDSHAKE = '/socket.io/?EIO=4&transport=polling'
const HELD = 'contentd_rate_limit_held_refusals'
// Node's timers may fire up to a millisecond early; the client's clock starts before the server's.
const SLACK_MS = 50

const { start, track } = serverPerTest({ METRICS_TOKEN })

async function timed<T> (send: () => Promise<T>): Promise<{ answer: T, ms: number }> {
  const started = performance.now()
  const answer = await send()
  return { answer, ms: performance.now() - started }
}

function expectRefused (r: CallResult) {
  expect(r.status).toBe(429)
  expect(r.body).toEqual({ message: 'Too many requests; retry later', code: 'RATE_LIMITED' })
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
}

/** Polls until `condition` holds (bounded): for states the test cannot await directly. */
async function eventually (condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await condition()) return
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting until ${what}`)
}

describe('RATE_LIMIT_DELAY: refusals are held back', () => {
  it('an HTTP request, a Socket.IO event and an Engine.IO handshake over the budget are refused as before, after the delay', async () => {
    // 6 a minute: a point comes back every 10 s, so each refusal's retryAfter exceeds the delay.
    const { url } = await start({ RATE_LIMIT: '6', RATE_LIMIT_DELAY: '2s' })
    const alice = await signup(url, 'alice') // the IP's budget
    const socket = await connect(url, alice) // the CONNECT: 1 of alice's 6
    track(socket)
    for (let i = 0; i < 5; i++) expect((await call(url, 'GET', '/api/me', { token: alice })).status).toBe(200)

    const request = await timed(() => call(url, 'GET', '/api/me', { token: alice }))
    expectRefused(request.answer)
    expect(request.ms).toBeGreaterThanOrEqual(2000 - SLACK_MS)

    const event = await timed(() => subscribe(socket, '@alice/none'))
    expect(event.answer).toEqual({ ok: false, code: 'RATE_LIMITED', message: expect.any(String), retryAfter: expect.any(Number) })
    expect(event.ms).toBeGreaterThanOrEqual(2000 - SLACK_MS)

    // Handshakes draw from the address's budget: another address, emptied by handshakes.
    for (let i = 0; i < 6; i++) expect((await callFrom('127.0.0.2', url, 'GET', HANDSHAKE)).status).toBe(200)
    const handshake = await timed(() => callFrom('127.0.0.2', url, 'GET', HANDSHAKE))
    expect(handshake.answer.status).toBe(429)
    expect(handshake.answer.body).toEqual({ message: expect.any(String), code: 'RATE_LIMITED' })
    expect(Number(handshake.answer.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(handshake.ms).toBeGreaterThanOrEqual(2000 - SLACK_MS)
  })

  it('a re-subscribe past the snapshot budget is held too, no longer than the retryAfter it is told', async () => {
    // A 2 s window and a 5 s delay: held for the window's rest (retryAfter ≥ 1 s), not 5 s.
    const { url } = await start({ RATE_LIMIT_DELAY: '5s', SOCKET_RESUBSCRIBE_WINDOW: '2s', SOCKET_RESUBSCRIBE_BYTES: '1024' })
    const owner = await ownerWithProject(url, 'big')
    expect((await call(url, 'POST', `${owner.path}/content/set`, { token: owner.key, body: { path: 'text', value: 'x'.repeat(10_000) } })).status).toBe(200)
    const socket = await connect(url, owner.key)
    track(socket)
    expect(await subscribe(socket, '@big/demo')).toMatchObject({ ok: true, version: 1 })
    const again = await timed(() => subscribe(socket, '@big/demo'))
    expect(again.answer).toEqual({ ok: false, code: 'RATE_LIMITED', message: expect.any(String), retryAfter: expect.any(Number) })
    const retryAfter = (again.answer as { retryAfter: number }).retryAfter
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(2)
    expect(again.ms).toBeGreaterThanOrEqual(1000 - SLACK_MS)
    // The subscription in place stays: once the window has passed, a re-subscribe is served.
    await new Promise(resolve => setTimeout(resolve, 2000))
    expect(await subscribe(socket, '@big/demo')).toMatchObject({ ok: true, version: 1 })
  })

  it(`holds at most RATE_LIMIT_DELAY_HELD refusals per user at once: the rest are answered without waiting for them; other subjects are held within their own bound`, async () => {
    const { url } = await start({ RATE_LIMIT: '6', RATE_LIMIT_DELAY: '8s', RATE_LIMIT_DELAY_HELD: '2' })
    const alice = await signup(url, 'alice')
    for (let i = 0; i < 6; i++) expect((await call(url, 'GET', '/api/me', { token: alice })).status).toBe(200)
    expect(await metricValue(url, METRICS_TOKEN, HELD)).toBe(0)

    const answered: CallResult[] = []
    const all = Array.from({ length: 6 }, () => timed(() => call(url, 'GET', '/api/me', { token: alice }).then(r => { answered.push(r); return r })))
    // Four are answered while two are held: the bound, not the delay, decided their answer.
    await eventually(() => answered.length >= 4, 'four refusals are answered')
    expect(answered).toHaveLength(4)
    for (const r of answered) expectRefused(r)
    expect(await metricValue(url, METRICS_TOKEN, HELD)).toBe(2)
    // Another subject (here the address, for an anonymous request) is held within its own bound.
    for (let i = 0; i < 6; i++) expect((await callFrom('127.0.0.3', url, 'GET', '/api/me')).status).toBe(401)
    const anonymous = timed(() => callFrom('127.0.0.3', url, 'GET', '/api/me'))
    await eventually(async () => await metricValue(url, METRICS_TOKEN, HELD) === 3, 'the anonymous refusal is held too')
    expect(answered).toHaveLength(4)

    const results = await Promise.all(all)
    for (const { answer } of results) expectRefused(answer)
    const held = results.map(r => r.ms).sort((a, b) => b - a).slice(0, 2)
    for (const ms of held) expect(ms).toBeGreaterThanOrEqual(8000 - SLACK_MS)
    expect((await anonymous).answer.status).toBe(429)
    expect(await metricValue(url, METRICS_TOKEN, HELD)).toBe(0)
  })

  it('clients inside their budget are never held: another user is served, over HTTP and Socket.IO, while a flooder\'s refusals are held', async () => {
    // 6 a minute: an emptied bucket's next point is 10 s away, so refusals are held the whole delay.
    const { url } = await start({ RATE_LIMIT: '6', RATE_LIMIT_DELAY: '10s' })
    const bob = await ownerWithProject(url, 'bob') // 2 of bob's 6 (the project, the key)
    const aliceToken = await signup(url, 'alice')
    // Alice empties her bucket, then two of her requests are held.
    for (let i = 0; i < 6; i++) expect((await call(url, 'GET', '/api/me', { token: aliceToken })).status).toBe(200)
    const flood = Promise.all([1, 2].map(() => call(url, 'GET', '/api/me', { token: aliceToken })))
    let floodAnswered = false
    void flood.then(() => { floodAnswered = true })
    await eventually(async () => await metricValue(url, METRICS_TOKEN, HELD) === 2, 'both refusals are held')

    for (let i = 0; i < 2; i++) {
      const r = await call(url, 'POST', `${bob.path}/content/increment`, { token: bob.key, body: { path: 'n' } })
      expect(r.status).toBe(200)
    }
    const socket = await connect(url, bob.key)
    track(socket)
    expect(await subscribe(socket, '@bob/demo')).toMatchObject({ ok: true, version: 2 })
    // All of that while alice's refusals were still held: bob never waited behind them.
    expect(floodAnswered).toBe(false)
    expect(await metricValue(url, METRICS_TOKEN, HELD)).toBe(2)
    for (const r of await flood) expectRefused(r)
  })
})
