// Clients that do not read (docs/design.md §13b, issue 26 finding 2), against the real server
// process: one user's many SSE streams and Socket.IO connections that never read, on their
// own project, under large updates. The per-stream cap (SOCKET_SEND_BUFFER) is set far above
// what the test writes, so only the budget of all the user's streams together
// (SLOW_CLIENT_BYTES_PER_USER, 2 MiB here) can stop the server from holding it all: their
// streams are closed, while another user's streams of the same project, which read, get
// every change and stay open.
import { rmSync } from 'node:fs'
import { connect as connectTcp, type Socket as TcpSocket } from 'node:net'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject, signup } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { openEvents, type SseStream } from '../support/sse.js'
import { connect, Recorder, subscribe } from '../realtime/client.js'
import { ackOf, connectPacket, eventPacket, RawWebSocket } from '../realtime/raw-socket.js'

const SSE_STREAMS = 6
const SOCKETS = 3
const UPDATE_BYTES = 300_000
/** Bounded: a server that never closes the streams fails here, having written ~18 MB to each. */
const MAX_UPDATES = 60

let server: ServerProcess

beforeAll(async () => {
  server = await startServerProcess({
    env: { CONTENT_LIMIT: '1048576', SOCKET_SEND_BUFFER: String(256 * 1024 * 1024), SLOW_CLIENT_BYTES_PER_USER: String(2 * 1024 * 1024), METRICS: 'open', SSE_HEARTBEAT: '10m' }
  })
})
afterAll(async () => {
  await server.stop()
  rmSync(server.dataDir, { recursive: true, force: true })
})

async function metric (series: string): Promise<number> {
  const text = (await call(server.url, 'GET', '/metrics')).text
  const line = text.split('\n').find(l => l.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}

/** An SSE stream on a raw connection that sends its request, reads the headers, then stops reading. */
async function stalledStream (path: string, token: string): Promise<{ socket: TcpSocket, closed: Promise<unknown> }> {
  const socket = connectTcp(server.port, '127.0.0.1')
  socket.on('error', () => {})
  const closed = new Promise(resolve => socket.once('close', resolve))
  await new Promise(resolve => socket.once('connect', resolve))
  socket.write(`GET ${path}/content/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`)
  const head = await new Promise<string>(resolve => socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))))
  expect(head).toMatch(/^HTTP\/1\.1 200/)
  socket.pause()
  return { socket, closed }
}

describe('the unsent budget of one user (SLOW_CLIENT_BYTES_PER_USER)', { timeout: 180_000 }, () => {
  const readers: Array<Socket | SseStream> = []
  afterAll(() => { for (const reader of readers) { if ('disconnect' in reader) reader.disconnect(); else reader.close() } })

  it('many streams of one user that read are never closed, though each change gives them more than the budget together', async () => {
    const fan = await ownerWithProject(server.url, 'fan')
    const streams = await Promise.all(Array.from({ length: 12 }, () => openEvents(server.url, `${fan.path}/content/events`, { token: fan.key })))
    readers.push(...streams)
    const before = await metric('contentd_realtime_slow_consumers_total')
    const big = 'z'.repeat(UPDATE_BYTES)
    // 12 x 300 KB per change: 3.6 MB handed out at once, against a budget of 2 MiB.
    for (let i = 1; i <= 5; i++) expect((await call(server.url, 'POST', `${fan.path}/content`, { token: fan.key, body: { big, i } })).status).toBe(200)
    for (const stream of streams) {
      await stream.until(() => stream.changes().some(c => c.version === 5), 'version 5', 30_000)
      expect(stream.changes().map(c => c.version)).toEqual([1, 2, 3, 4, 5])
      expect(stream.ended).toBe(false)
    }
    expect(await metric('contentd_realtime_slow_consumers_total')).toBe(before)
  })

  it('closes the streams of a user that does not read, Socket.IO and SSE alike; another user\'s reading streams get every change', async () => {
    const hog = await ownerWithProject(server.url, 'hog')
    const calm = await signup(server.url, 'calm')
    expect((await call(server.url, 'PUT', `${hog.path}/members/@calm`, { token: hog.session, body: { role: 'viewer' } })).status).toBe(200)

    const stalledSse = await Promise.all(Array.from({ length: SSE_STREAMS }, () => stalledStream(hog.path, hog.key)))
    const stalledSockets: RawWebSocket[] = []
    for (let i = 0; i < SOCKETS; i++) {
      const ws = await RawWebSocket.engineIo(server.port)
      ws.send(connectPacket(hog.key))
      await ws.next(m => m.startsWith('40{'), 'the CONNECT answer')
      ws.send(eventPacket(1, 'subscribe', { project: '@hog/demo' }))
      expect(await ackOf(ws, 1)).toMatchObject({ ok: true })
      ws.pause()
      stalledSockets.push(ws)
    }
    const calmEvents = await openEvents(server.url, `${hog.path}/content/events`, { token: calm })
    readers.push(calmEvents)
    const calmSocket = await connect(server.url, calm)
    readers.push(calmSocket)
    const calmRecorder = new Recorder(calmSocket)
    expect(await subscribe(calmSocket, '@hog/demo')).toMatchObject({ ok: true })

    const big = 'x'.repeat(UPDATE_BYTES)
    const before = await metric('contentd_realtime_slow_consumers_total')
    let version = 0
    for (let i = 0; i < MAX_UPDATES && await metric('contentd_realtime_slow_consumers_total') < before + SSE_STREAMS + SOCKETS; i++) {
      const r = await call(server.url, 'POST', `${hog.path}/content`, { token: hog.key, body: { big, i } })
      expect(r.status).toBe(200)
      version = Number(JSON.parse(r.headers.get('etag') ?? '0'))
    }
    expect(await metric('contentd_realtime_slow_consumers_total')).toBe(before + SSE_STREAMS + SOCKETS)
    // Every stalled connection was ended by the server: reading again, each gets what its
    // kernel buffers held, then the end.
    for (const { socket, closed } of stalledSse) {
      socket.resume()
      await closed
    }
    for (const ws of stalledSockets) {
      ws.resume()
      await ws.closed
    }
    expect(await metric('contentd_active_sockets')).toBe(1)

    // The other user's streams, which read, got every version and are still open.
    await calmEvents.until(() => calmEvents.changes().some(c => c.version === version), `version ${version} on SSE`, 30_000)
    expect(calmEvents.changes().map(c => c.version)).toEqual(Array.from({ length: version }, (_, i) => i + 1))
    expect(calmEvents.ended).toBe(false)
    await calmRecorder.untilVersion(version)
    expect(calmRecorder.changes.map(c => c.version)).toEqual(Array.from({ length: version }, (_, i) => i + 1))
    expect(calmSocket.connected).toBe(true)
    console.log(`unsent budget: ${version} updates of ${UPDATE_BYTES} bytes; server RSS ${Math.round(await metric('contentd_process_resident_memory_bytes') / 2 ** 20)} MiB`)
  })
})
