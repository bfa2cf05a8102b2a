// A broadcast change is written to every WebSocket connection as one buffer, the frame
// Socket.IO built once for the broadcast (server/realtime/write-batching.ts). Over real
// clients on both transports, with presence events and acknowledgements to the same
// connections in between: every client gets every change exactly once, in version order,
// equal to the change log. (A connection that stops reading is still dropped by
// SOCKET_SEND_BUFFER: realtime-limits.test.ts.)
import { io, type Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PresenceListAck, PresenceSetAck } from '../../shared/presence.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { connected, Recorder, subscribe } from './client.js'

const CHANGES = 60

let app: TestApp
beforeAll(async () => { app = await startTestApp({}, { realtime: true }) })
afterAll(async () => { await app.close() })

const clientOn = (transports: Array<'websocket' | 'polling'>, key: string): Promise<Socket> =>
  connected(io(app.url, { auth: { token: key }, transports, reconnection: false, forceNew: true }))

const presenceSet = (socket: Socket, project: string, state: unknown) =>
  socket.timeout(10_000).emitWithAck('presence:set', { project, state }) as Promise<PresenceSetAck>
const presenceList = (socket: Socket, project: string) =>
  socket.timeout(10_000).emitWithAck('presence:list', { project }) as Promise<PresenceListAck>

describe('broadcast frames', () => {
  it('WebSocket, long-polling and upgraded clients each get every change once and in order, between acks and presence events', async () => {
    const { key, path } = await ownerWithProject(app.url, 'frames')
    const sockets = await Promise.all([
      clientOn(['websocket'], key), clientOn(['websocket'], key), clientOn(['websocket'], key),
      clientOn(['polling'], key), clientOn(['polling'], key),
      clientOn(['polling', 'websocket'], key)
    ])
    const recorders = sockets.map(socket => new Recorder(socket))
    try {
      for (const socket of sockets) expect(await subscribe(socket, '@frames/demo')).toMatchObject({ ok: true })
      await recorders[5]?.until(() => (sockets[5]?.io.engine.transport.name) === 'websocket', 'the upgrade')

      // Changes in bursts, each burst alongside presence updates and presence:list acks on every connection.
      const acks: unknown[] = []
      for (let burst = 0; burst < CHANGES / 10; burst++) {
        const writes = Array.from({ length: 10 }, () => call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } }))
        const talk = sockets.flatMap((socket, i) => [presenceSet(socket, '@frames/demo', { burst, i }), presenceList(socket, '@frames/demo')])
        for (const r of await Promise.all(writes)) expect(r.status).toBe(200)
        acks.push(...await Promise.all(talk))
      }
      expect(acks.every(ack => (ack as { ok: boolean }).ok)).toBe(true)

      const logged = (await call(app.url, 'GET', `${path}/content/changes?limit=${CHANGES}`, { token: key })).body.changes
      expect(logged.map((c: { version: number }) => c.version)).toEqual(Array.from({ length: CHANGES }, (_, i) => i + 1))
      for (const recorder of recorders) {
        await recorder.untilVersion(CHANGES)
        // Presence events (joins, then updates) arrived on the same connection in between.
        await recorder.until(() => recorder.presence.length >= sockets.length * (CHANGES / 10), 'the presence updates')
        expect(recorder.changes).toEqual(logged)
      }
      expect(sockets.map(socket => socket.io.engine.transport.name)).toEqual(['websocket', 'websocket', 'websocket', 'polling', 'polling', 'websocket'])
    } finally {
      for (const socket of sockets) socket.disconnect()
    }
  })
})
