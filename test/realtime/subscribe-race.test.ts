// Finding "concurrent subscribes get a false 403" (SECURITY.md): subscribe is idempotent and
// race-free. Black-box against the real server process, with socket.io-client.
import type { Socket } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { connect, Recorder, subscribe } from './client.js'
import { ackOf, connectPacket, eventPacket, RawWebSocket } from './raw-socket.js'

let server: ServerProcess
let owner: { session: string, key: string, path: string }
const sockets: Socket[] = []
const open = async (token: string) => { const s = await connect(server.url, token); sockets.push(s); return s }

beforeAll(async () => {
  server = await startServerProcess()
  owner = await ownerWithProject(server.url, 'racer')
  await call(server.url, 'POST', `${owner.path}/content/set`, { token: owner.key, body: { path: 'title', value: 'hello' } })
})
afterAll(async () => { await server.stop() })
afterEach(() => { while (sockets.length) sockets.pop()?.disconnect() })

describe('concurrent subscribes on one socket', () => {
  it('ten at once for the same project: every one succeeds with the same snapshot (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const socket = await open(round % 2 ? owner.session : owner.key)
      const acks = await Promise.all(Array.from({ length: 10 }, () => subscribe(socket, '@racer/demo')))
      for (const ack of acks) expect(ack, `round ${round}`).toEqual({ ok: true, project: '@racer/demo', version: 1, content: { title: 'hello' } })
      socket.disconnect()
    }
  })

  it('after them the socket holds one subscription: each change arrives once', async () => {
    const socket = await open(owner.session)
    const recorder = new Recorder(socket)
    const acks = await Promise.all(Array.from({ length: 10 }, () => subscribe(socket, '@racer/demo')))
    const version = (acks[0] as { version: number }).version
    const write = await call(server.url, 'POST', `${owner.path}/content/increment`, { token: owner.key, body: { path: 'n' } })
    expect(write.status).toBe(200)
    await recorder.untilVersion(version + 1)
    // One more write; then every change seen must have come exactly once.
    await call(server.url, 'POST', `${owner.path}/content/increment`, { token: owner.key, body: { path: 'n' } })
    await recorder.untilVersion(version + 2)
    expect(recorder.changes.map(c => c.version)).toEqual([version + 1, version + 2])
  })

  it('an unsubscribe while a subscribe is being answered cancels it with SUBSCRIPTION_CANCELLED, never a 403', async () => {
    // Both packets in one TCP write: the server reads the unsubscribe while the subscribe
    // is still checking access.
    const ws = await RawWebSocket.engineIo(server.port)
    try {
      ws.send(connectPacket(owner.key))
      await ws.next(m => m.startsWith('40{'), 'the CONNECT answer')
      ws.send(eventPacket(1, 'subscribe', { project: '@racer/demo' }), eventPacket(2, 'unsubscribe', { project: '@racer/demo' }))
      expect(await ackOf(ws, 2)).toEqual({ ok: true })
      expect(await ackOf(ws, 1)).toEqual({ ok: false, code: 'SUBSCRIPTION_CANCELLED', message: expect.any(String) })
      // The subscription is gone, and a new subscribe works.
      ws.send(eventPacket(3, 'subscribe', { project: '@racer/demo' }))
      expect(await ackOf(ws, 3)).toMatchObject({ ok: true, project: '@racer/demo' })
    } finally {
      ws.destroy()
    }
  })
})
