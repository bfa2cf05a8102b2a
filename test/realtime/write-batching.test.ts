// server/realtime/write-batching.ts reaches into engine.io (`transport.send`) and ws
// (`_socket`, the TCP socket) and into socket.io-adapter's broadcast frames
// (`wsPreEncodedFrame`). Every other realtime test passes just as well without it, so this
// one watches the server's TCP writes themselves, on a real server and a real client: it
// fails as soon as an upgrade moves one of those internals and the trick stops engaging.
// When it cannot engage, it says so: a metric and one log line per reason.
import { EventEmitter } from 'node:events'
import { Socket as TcpSocket } from 'node:net'
import { io, type Socket } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Logger } from '../../server/logger.js'
import { Metrics } from '../../server/observability/metrics.js'
import { writeBatching } from '../../server/realtime/write-batching.js'
import { ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { connected } from './client.js'

/** Each call of the server-side TCP sockets' _write (one buffer) and _writev (several). */
interface TcpWrite { kind: 'write' | 'writev', chunks: number }

let app: TestApp
let port: number
let client: Socket
let writes: TcpWrite[] = []

beforeAll(async () => {
  app = await startTestApp({}, { realtime: true })
  port = Number(new URL(app.url).port)
  const { key } = await ownerWithProject(app.url, 'batching')
  client = await connected(io(app.url, { auth: { token: key }, transports: ['websocket'], reconnection: false, forceNew: true }))
  // The server's end of a connection is the socket whose local port is the server's.
  const prototype = TcpSocket.prototype as unknown as Record<'_write' | '_writev', (this: TcpSocket, ...args: unknown[]) => void>
  const write = prototype._write
  const writev = prototype._writev
  vi.spyOn(prototype, '_write').mockImplementation(function (this: TcpSocket, ...args: unknown[]) {
    if (this.localPort === port) writes.push({ kind: 'write', chunks: 1 })
    write.apply(this, args)
  })
  vi.spyOn(prototype, '_writev').mockImplementation(function (this: TcpSocket, ...args: unknown[]) {
    if (this.localPort === port) writes.push({ kind: 'writev', chunks: (args[0] as unknown[]).length })
    writev.apply(this, args)
  })
})
afterAll(async () => {
  vi.restoreAllMocks()
  client.disconnect()
  await app.close()
})
afterEach(() => { client.off('probe') })

/** Broadcasts `count` events to the client's own room in one turn of the event loop; resolves when it has them all. */
async function broadcast (count: number): Promise<number[]> {
  const realtime = app.realtime
  if (!realtime) throw new Error('started without realtime')
  const received: number[] = []
  const all = new Promise<void>(resolve => {
    client.on('probe', (n: number) => { received.push(n); if (received.length === count) resolve() })
  })
  // An event of its own (not one of the typed server events), so no client code reacts to it.
  const room = realtime.io.to(client.id as string) as unknown as { emit: (event: string, n: number) => boolean }
  writes = []
  for (let n = 0; n < count; n++) room.emit('probe', n)
  await all
  return received
}

describe('WebSocket write batching engages', () => {
  it('one broadcast to a connection is one write of one buffer (the frame joined), not a writev of header and payload', async () => {
    expect(await broadcast(1)).toEqual([0])
    expect(writes).toEqual([{ kind: 'write', chunks: 1 }])
  })

  it('broadcasts that pile up while a write is in flight go out corked: all of them in one writev of one buffer each', async () => {
    const count = 50
    expect(await broadcast(count)).toEqual(Array.from({ length: count }, (_, n) => n))
    // The first frame goes out alone; the rest pile up in Engine.IO behind it and are handed
    // to the transport together once it is written. Uncorked, the first of them would go
    // out on its own (and Node would gather the others behind it).
    expect(writes).toEqual([{ kind: 'write', chunks: 1 }, { kind: 'writev', chunks: count - 1 }])
  })
})

describe('when the internals have moved', () => {
  /** An Engine.IO connection as write-batching.ts sees it, on a WebSocket transport. */
  const connection = (transport: Record<string, unknown>) =>
    Object.assign(new EventEmitter(), { transport: Object.assign(transport, { name: transport.name ?? 'websocket' }) }) as unknown as Parameters<ReturnType<typeof writeBatching>>[0]

  it('the connection is left as it is, the metric counts it by reason and the first of each reason is logged once', async () => {
    const metrics = new Metrics()
    const warn = vi.fn()
    const batchWrites = writeBatching({ logger: { warn } as unknown as Logger, metrics })
    const send = () => {}
    const movedSocket = { send, socket: { _tcp: { cork () {}, uncork () {} } } }
    batchWrites(connection(movedSocket))
    batchWrites(connection({ ...movedSocket }))
    batchWrites(connection({ sendPackets: send, socket: { _socket: { cork () {}, uncork () {} } } }))
    expect(movedSocket.send).toBe(send)
    const text = await metrics.registry.metrics()
    expect(text).toContain('contentd_realtime_write_batching_bailouts_total{reason="ws._socket"} 2')
    expect(text).toContain('contentd_realtime_write_batching_bailouts_total{reason="transport.send"} 1')
    expect(warn.mock.calls.map(([fields]) => (fields as { reason: string }).reason)).toEqual(['ws._socket', 'transport.send'])
  })

  it('a connection whose internals are where they were is batched, and nothing is counted', async () => {
    const metrics = new Metrics()
    const warn = vi.fn()
    const send = () => {}
    const batchWrites = writeBatching({ logger: { warn } as unknown as Logger, metrics })
    const direct = { send, socket: { _socket: { cork () {}, uncork () {} } } }
    batchWrites(connection(direct))
    const upgrade = { name: 'websocket', send, socket: { _socket: { cork () {}, uncork () {} } } }
    const polling = connection({ name: 'polling' })
    batchWrites(polling)
    ;(polling as unknown as EventEmitter).emit('upgrade', upgrade)
    expect(direct.send).not.toBe(send)
    expect(upgrade.send).not.toBe(send)
    expect(await metrics.registry.metrics()).not.toContain('contentd_realtime_write_batching_bailouts_total{')
    expect(warn).not.toHaveBeenCalled()
  })
})
