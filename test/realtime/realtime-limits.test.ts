// Finding "Socket.IO is outside every limit" (SECURITY.md), black-box against the real
// server process with small limits: Engine.IO handshakes per IP and Socket.IO events per
// user draw from the same RATE_LIMIT budget as HTTP; re-subscribing cannot amplify traffic;
// a connection that does not read is dropped once its backlog passes SOCKET_SEND_BUFFER.
import type { Socket } from 'socket.io-client'
import { describe, expect, it } from 'vitest'
import type { SubscribeAck } from '../../shared/events.js'
import { call, ownerWithProject } from '../support/http.js'
import { metricValue } from '../support/metrics.js'
import { serverPerTest } from '../support/server-per-test.js'
import { callFrom } from '../limits/from-address.js'
import { connect, connected, openSocket, Recorder, subscribe } from './client.js'
import { ackOf, connectPacket, eventPacket, RawWebSocket } from './raw-socket.js'

const METRICS_TOKEN = 'metrics-token-for-the-limit-tests'
const HANDSHAKE = '/socket.io/?EIO=4&transport=polling'

const { start, track } = serverPerTest({ METRICS_TOKEN })

function expectRateLimitedAck (ack: any, longestWait = 60) {
  expect(ack).toEqual({ ok: false, code: 'RATE_LIMITED', message: expect.any(String), retryAfter: expect.any(Number) })
  expect(ack.retryAfter).toBeGreaterThanOrEqual(1)
  expect(ack.retryAfter).toBeLessThanOrEqual(longestWait)
}

describe('Engine.IO handshakes count per IP', () => {
  it('past RATE_LIMIT handshakes from one address are refused 429 before a session exists (polling and WebSocket); another address is not affected', async () => {
    const { url, port } = await start({ RATE_LIMIT: '20' })
    const answers = await Promise.all(Array.from({ length: 200 }, () => callFrom('127.0.0.1', url, 'GET', HANDSHAKE)))
    expect(answers.filter(a => a.status === 200)).toHaveLength(20)
    const refused = answers.filter(a => a.status !== 200)
    expect(refused).toHaveLength(180)
    for (const r of refused) {
      expect(r.status).toBe(429)
      expect(r.body).toEqual({ message: expect.any(String), code: 'RATE_LIMITED' })
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    }
    const upgrade = await RawWebSocket.open(port, { localAddress: '127.0.0.1' })
    expect(upgrade).toMatchObject({ status: 429, headers: { 'retry-after': expect.any(String) } })
    expect(JSON.parse((upgrade as { body: string }).body)).toMatchObject({ code: 'RATE_LIMITED' })
    // The same budget as anonymous HTTP requests from that address.
    expect((await callFrom('127.0.0.1', url, 'GET', '/api/me')).status).toBe(429)
    expect((await callFrom('127.0.0.2', url, 'GET', HANDSHAKE)).status).toBe(200)
  })
})

describe('handshakes behind a proxy (TRUST_PROXY)', () => {
  const handshakeFor = (url: string, client: string) => call(url, 'GET', HANDSHAKE, { headers: { 'x-forwarded-for': client } })

  it('1: the forwarded address is the client, as for HTTP, so clients behind one proxy have budgets of their own', async () => {
    const { url } = await start({ RATE_LIMIT: '2', TRUST_PROXY: '1' })
    expect((await handshakeFor(url, '203.0.113.1')).status).toBe(200)
    expect((await handshakeFor(url, '203.0.113.1')).status).toBe(200)
    expect((await handshakeFor(url, '203.0.113.1')).status).toBe(429)
    expect((await handshakeFor(url, '203.0.113.2')).status).toBe(200)
  })

  it('off (the default): a forged X-Forwarded-For does not buy a fresh budget', async () => {
    const { url } = await start({ RATE_LIMIT: '2' })
    expect((await handshakeFor(url, '203.0.113.1')).status).toBe(200)
    expect((await handshakeFor(url, '203.0.113.2')).status).toBe(200)
    expect((await handshakeFor(url, '203.0.113.3')).status).toBe(429)
  })
})

describe('Socket.IO events count per user, with HTTP', () => {
  it('events past the budget ack RATE_LIMITED with retryAfter; the user\'s HTTP requests and new handshakes are refused too', async () => {
    const { url } = await start({ RATE_LIMIT: '8' })
    const { session, key } = await ownerWithProject(url, 'flood') // the user's budget: 2 (project, key)
    const socket = track(await connect(url, key)) // 3: the CONNECT
    const acks = await Promise.all(Array.from({ length: 50 }, () => subscribe(socket, '@flood/demo'))) // 4…8 pass
    expect(acks.filter(a => a.ok)).toHaveLength(5)
    const refused = acks.filter(a => !a.ok)
    expect(refused).toHaveLength(45)
    for (const ack of refused) expectRateLimitedAck(ack)
    // Every other event too, whatever its name or payload.
    expectRateLimitedAck(await socket.timeout(5000).emitWithAck('unsubscribe', { project: '@flood/demo' }))
    expectRateLimitedAck(await socket.timeout(5000).emitWithAck('no-such-event'))
    // One budget with HTTP, for every credential of the user.
    expect((await call(url, 'GET', '/api/me', { token: session })).status).toBe(429)
    const error: any = await connected(track(openSocket(url, session))).then(() => null, e => e)
    expect(error?.data).toEqual({ message: expect.any(String), code: 'RATE_LIMITED', retryAfter: expect.any(Number) })
  })

  it('a bad token\'s CONNECT counts against the IP, like a bad token over HTTP', async () => {
    const { url } = await start({ RATE_LIMIT: '6' })
    // Each attempt costs two points of the address's budget: the Engine.IO handshake and the CONNECT.
    for (let i = 0; i < 3; i++) {
      const error: any = await connected(track(openSocket(url, `cdk_guess-${i}`))).then(() => null, e => e)
      expect(error?.data, `attempt ${i}`).toMatchObject({ code: 'INVALID_TOKEN' })
    }
    expect((await callFrom('127.0.0.1', url, 'GET', '/api/me')).status).toBe(429)
  })
})

describe('re-subscribing cannot amplify traffic', () => {
  // Refusals sent at once: held (RATE_LIMIT_DELAY, test/limits/tarpit.test.ts), one after
  // the other they would outlast the window these tests count within.
  const env = { SOCKET_RESUBSCRIBE_WINDOW: '3s', SOCKET_RESUBSCRIBE_BYTES: '100000', RATE_LIMIT_DELAY: '0' }

  async function largeProject (url: string, username: string) {
    const owner = await ownerWithProject(url, username)
    for (const part of ['a', 'b', 'c']) {
      const r = await call(url, 'POST', `${owner.path}/content/set`, { token: owner.key, body: { path: part, value: 'x'.repeat(100_000) } })
      expect(r.status).toBe(200)
    }
    return owner
  }

  it('20 re-subscribes to a large document, one after the other: one snapshot, then RATE_LIMITED until the window passes; the subscription stays', async () => {
    const { url } = await start(env)
    const owner = await largeProject(url, 'big')
    const socket = track(await connect(url, owner.key))
    const recorder = new Recorder(socket)
    const acks: SubscribeAck[] = []
    for (let i = 0; i < 20; i++) acks.push(await subscribe(socket, '@big/demo'))
    expect(acks.filter(a => a.ok)).toHaveLength(1)
    expect(acks[0]).toMatchObject({ ok: true, version: 3 })
    for (const ack of acks.slice(1)) expectRateLimitedAck(ack, 3)
    // Still subscribed: changes keep coming.
    await call(url, 'POST', `${owner.path}/content/increment`, { token: owner.key, body: { path: 'n' } })
    await recorder.untilVersion(4)
    // After the window, a re-subscribe is served again.
    await new Promise(resolve => setTimeout(resolve, 1000 * (acks[1] as { retryAfter: number }).retryAfter))
    expect(await subscribe(socket, '@big/demo')).toMatchObject({ ok: true, version: 4 })
  })

  it('20 at once: they share one answer, and only one of them carries the document', async () => {
    const { url } = await start(env)
    const owner = await largeProject(url, 'burst')
    const socket = track(await connect(url, owner.key))
    const acks = await Promise.all(Array.from({ length: 20 }, () => subscribe(socket, '@burst/demo')))
    expect(acks.filter(a => a.ok)).toHaveLength(1)
    for (const ack of acks.filter(a => !a.ok)) expectRateLimitedAck(ack, 3)
  })

  it('the allowance is the user\'s, across all their connections: more sockets (and other credentials) do not mean more snapshots; another user is not affected', async () => {
    const { url } = await start(env)
    const owner = await largeProject(url, 'many')
    const other = await largeProject(url, 'other')
    const sockets = await Promise.all([owner.key, owner.key, owner.key, owner.session].map(token => connect(url, token).then(track)))
    expect(await subscribe(sockets[0] as Socket, '@many/demo')).toMatchObject({ ok: true, version: 3 })
    // One after the other, on connections that never had a snapshot of it: refused.
    const later: SubscribeAck[] = []
    for (const socket of sockets.slice(1)) later.push(await subscribe(socket, '@many/demo'))
    for (const ack of later) expectRateLimitedAck(ack, 3)
    // Another user's allowance is their own.
    const theirs = track(await connect(url, other.key))
    expect(await subscribe(theirs, '@other/demo')).toMatchObject({ ok: true, version: 3 })
    // Once the window passes: all four at once get one snapshot between them.
    await new Promise(resolve => setTimeout(resolve, 1000 * (later[0] as { retryAfter: number }).retryAfter))
    const together = await Promise.all(sockets.map(socket => subscribe(socket, '@many/demo')))
    expect(together.filter(a => a.ok)).toHaveLength(1)
    for (const ack of together.filter(a => !a.ok)) expectRateLimitedAck(ack, 3)
  })

  it('a small document can be re-subscribed freely', async () => {
    const { url } = await start(env)
    const owner = await ownerWithProject(url, 'small')
    const socket = track(await connect(url, owner.key))
    for (let i = 0; i < 20; i++) expect(await subscribe(socket, '@small/demo')).toMatchObject({ ok: true, content: {} })
  })
})

describe('per-connection send buffer (SOCKET_SEND_BUFFER)', () => {
  it('drops a connection that stops reading once its backlog passes the cap; a reading one on the same project keeps everything', async () => {
    const { url, port } = await start({ CONTENT_LIMIT: '262144', SOCKET_SEND_BUFFER: '1048576' })
    const owner = await ownerWithProject(url, 'slow')
    const reader = track(await connect(url, owner.key))
    const recorder = new Recorder(reader)
    expect(await subscribe(reader, '@slow/demo')).toMatchObject({ ok: true })
    const stalled = await RawWebSocket.engineIo(port)
    try {
      stalled.send(connectPacket(owner.key))
      await stalled.next(m => m.startsWith('40{'), 'the CONNECT answer')
      stalled.send(eventPacket(1, 'subscribe', { project: '@slow/demo' }))
      expect(await ackOf(stalled, 1)).toMatchObject({ ok: true })
      expect(await metricValue(url, METRICS_TOKEN, 'contentd_active_sockets')).toBe(2)
      stalled.pause()
      // 100 KB changes until the server gives up on the stalled client (the kernel's socket
      // buffers absorb a few MiB first); bounded, so a server that never drops it fails.
      let version = 0
      for (let i = 0; i < 600 && await metricValue(url, METRICS_TOKEN, 'contentd_realtime_slow_consumers_total') === 0; i++) {
        const r = await call(url, 'POST', `${owner.path}/content/set`, { token: owner.key, body: { path: 'blob', value: `${i}`.padEnd(100_000, '.') } })
        expect(r.status).toBe(200)
        version = Number(JSON.parse(r.headers.get('etag') ?? '0'))
      }
      expect(await metricValue(url, METRICS_TOKEN, 'contentd_realtime_slow_consumers_total')).toBe(1)
      expect(await metricValue(url, METRICS_TOKEN, 'contentd_active_sockets')).toBe(1)
      await recorder.untilVersion(version)
      expect(recorder.changes.map(c => c.version)).toEqual(Array.from({ length: version }, (_, i) => i + 1))
      expect(reader.connected).toBe(true)
    } finally {
      stalled.destroy()
    }
  })
})
