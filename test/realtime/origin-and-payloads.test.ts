// The smaller realtime findings (SECURITY.md), black-box against the real server process:
// Socket.IO checks Origin against CORS_ORIGINS on both transports (a missing Origin, a
// non-browser client, is allowed), and every event with a missing or malformed payload is
// answered {ok: false, code, message}.
import { io, type Socket } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { EVENT_MEMBERS } from '../../shared/events.js'
import { call, ownerWithProject } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { connected, subscribe } from './client.js'
import { RawWebSocket } from './raw-socket.js'

const GOOD = 'https://good.example'
const EVIL = 'https://evil.example'

let server: ServerProcess
let key: string
const sockets: Socket[] = []

beforeAll(async () => {
  server = await startServerProcess({ env: { CORS_ORIGINS: GOOD } })
  ;({ key } = await ownerWithProject(server.url, 'origins'))
})
afterAll(async () => { await server.stop() })
afterEach(() => { while (sockets.length) sockets.pop()?.disconnect() })

const client = (transport: 'polling' | 'websocket', origin?: string) => {
  const socket = io(server.url, { auth: { token: key }, transports: [transport], reconnection: false, forceNew: true, ...(origin ? { extraHeaders: { origin } } : {}) })
  sockets.push(socket)
  return socket
}

describe('Origin is checked against CORS_ORIGINS', () => {
  for (const transport of ['polling', 'websocket'] as const) {
    it(`${transport}: a foreign Origin cannot connect; the allowed one and none at all can, and subscribe`, async () => {
      const refused = await connected(client(transport, EVIL)).then(() => null, (e: Error) => e)
      expect(refused).toBeInstanceOf(Error)
      for (const origin of [GOOD, undefined]) {
        const socket = await connected(client(transport, origin))
        expect(await subscribe(socket, '@origins/demo'), `origin ${origin}`).toMatchObject({ ok: true })
      }
    })
  }

  it('a page of the server itself (the dashboard) is same-origin and allowed on both transports', async () => {
    for (const transport of ['polling', 'websocket'] as const) {
      const socket = await connected(client(transport, server.url))
      expect(await subscribe(socket, '@origins/demo'), transport).toMatchObject({ ok: true })
    }
  })

  it('the refusal is 403 ORIGIN_NOT_ALLOWED, before any session exists (polling handshake, WebSocket upgrade)', async () => {
    const polling = await call(server.url, 'GET', '/socket.io/?EIO=4&transport=polling', { headers: { origin: EVIL } })
    expect(polling.status).toBe(403)
    expect(polling.body).toEqual({ message: expect.any(String), code: 'ORIGIN_NOT_ALLOWED' })
    const upgrade = await RawWebSocket.open(server.port, { origin: EVIL })
    expect(upgrade).toMatchObject({ status: 403 })
    expect(JSON.parse((upgrade as { body: string }).body)).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' })
    const allowed = await RawWebSocket.open(server.port, { origin: GOOD })
    expect(allowed).toBeInstanceOf(RawWebSocket)
    ;(allowed as RawWebSocket).destroy()
  })

  it('every request of a long-polling session is checked, not only its handshake', async () => {
    const open = await call(server.url, 'GET', '/socket.io/?EIO=4&transport=polling')
    expect(open.status).toBe(200)
    const { sid } = JSON.parse(open.text.slice(1)) as { sid: string }
    const send = await call(server.url, 'POST', `/socket.io/?EIO=4&transport=polling&sid=${sid}`, { raw: `40${JSON.stringify({ token: key })}`, headers: { origin: EVIL, 'content-type': 'text/plain' } })
    expect(send.status).toBe(403)
  })
})

describe('events with a missing or malformed payload', () => {
  let socket: Socket
  beforeAll(async () => {
    socket = await connected(io(server.url, { auth: { token: key }, transports: ['websocket'], reconnection: false, forceNew: true }))
  })
  afterAll(() => { socket.disconnect() })
  const ask = (event: string, ...payload: unknown[]) => socket.timeout(5000).emitWithAck(event, ...payload)

  function expectFailure (reply: unknown, code: string) {
    expect(reply).toEqual({ ok: false, code, message: expect.any(String) })
  }

  it('subscribe with no payload at all is answered INVALID_BODY', async () => {
    expectFailure(await ask('subscribe'), 'INVALID_BODY')
  })

  it('subscribe and unsubscribe with malformed payloads are answered INVALID_BODY', async () => {
    for (const payload of [null, 'origins/demo', 42, [], {}, { project: 5 }, { project: '' }, { project: 'no-slash' }, { project: '@origins/' }]) {
      expectFailure(await ask('subscribe', payload), 'INVALID_BODY')
      expectFailure(await ask('unsubscribe', payload), 'INVALID_BODY')
    }
    expectFailure(await ask('unsubscribe'), 'INVALID_BODY')
  })

  // docs/design.md §13: unknown members are refused naming them, as in HTTP bodies. Otherwise
  // an old server would answer a newer client's `subscribe { project, filter }` with the whole
  // document (as one before §15 did for `path`). Every event a client sends, from the one
  // table the server checks against.
  it('every event refuses members it does not know with INVALID_BODY naming them, even beside valid ones', async () => {
    const valid: Record<string, unknown> = { project: '@origins/demo', since: 0, state: {}, path: 'title' }
    expect(Object.keys(EVENT_MEMBERS).sort()).toEqual(['presence:leave', 'presence:list', 'presence:set', 'subscribe', 'unsubscribe'])
    for (const [event, members] of Object.entries(EVENT_MEMBERS)) {
      const payload = Object.fromEntries(members.map(member => [member, valid[member]]))
      const one = await ask(event, { ...payload, filter: 'title' }) as { message: string }
      expectFailure(one, 'INVALID_BODY')
      expect(one.message, event).toContain('unknown field "filter"')
      const two = await ask(event, { ...payload, extra: 1, [`x${'y'.repeat(200)}`]: 2 }) as { message: string }
      expectFailure(two, 'INVALID_BODY')
      expect(two.message, event).toContain('unknown fields "extra", ')
      expect(two.message.length, event).toBeLessThan(200)
    }
    expect(await subscribe(socket, '@origins/demo')).toMatchObject({ ok: true, content: expect.any(Object) })
    expect(await ask('subscribe', { project: '@origins/demo', since: 0 })).toMatchObject({ ok: true, changes: expect.any(Array) })
  })

  it('a reference without "@" is INVALID_USERNAME, as over HTTP', async () => {
    expectFailure(await ask('subscribe', { project: 'origins/demo' }), 'INVALID_USERNAME')
  })

  it('an event the server does not know is answered UNKNOWN_EVENT', async () => {
    expectFailure(await ask('subscribed', { project: '@origins/demo' }), 'UNKNOWN_EVENT')
    expectFailure(await ask('__proto__'), 'UNKNOWN_EVENT')
    expectFailure(await ask('constructor'), 'UNKNOWN_EVENT')
  })

  it('after all that the connection still works', async () => {
    expect(await subscribe(socket, '@origins/demo')).toMatchObject({ ok: true })
  })
})
