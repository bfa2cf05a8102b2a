// server/realtime/direct-frames.ts writes a one-room broadcast's frame straight to the TCP
// socket of a WebSocket connection with nothing queued, past Engine.IO and ws. Every other
// realtime test passes just as well without it, so this one checks, on a real server and a
// real socket.io-client, that it engages (a change reaches the client without an Engine.IO
// packet), that the bytes are the ones Engine.IO writes, that order with packets Engine.IO
// holds is kept, that the per-connection bound sees what a direct write leaves in the socket,
// and that it says so when a library internal it relies on has moved.
import { EventEmitter } from 'node:events'
import { Socket as TcpSocket } from 'node:net'
import type { Socket as EngineConnection } from 'engine.io'
import type { Socket } from 'socket.io-client'
import * as parser from 'socket.io-parser'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Logger } from '../../server/logger.js'
import { Metrics } from '../../server/observability/metrics.js'
import { DirectFrames, directWriterOf } from '../../server/realtime/direct-frames.js'
import { RoomAdapter } from '../../server/realtime/room-adapter.js'
import { capSendBuffer } from '../../server/realtime/send-buffer.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { connect, subscribe } from './client.js'

let app: TestApp
let port: number
let client: Socket
let path: string
let key: string
/** The bytes of each TCP write of the server's end of a connection (a writev's chunks joined). */
let writes: Buffer[] = []

beforeAll(async () => {
  app = await startTestApp({}, { realtime: true })
  port = Number(new URL(app.url).port)
  ;({ key, path } = await ownerWithProject(app.url, 'direct'))
  client = await connect(app.url, key)
  const ack = await subscribe(client, '@direct/demo')
  expect(ack.ok).toBe(true)
  const prototype = TcpSocket.prototype as unknown as Record<'_write' | '_writev', (this: TcpSocket, ...args: unknown[]) => void>
  const write = prototype._write
  const writev = prototype._writev
  vi.spyOn(prototype, '_write').mockImplementation(function (this: TcpSocket, ...args: unknown[]) {
    if (this.localPort === port) writes.push(Buffer.from(args[0] as Buffer))
    write.apply(this, args)
  })
  vi.spyOn(prototype, '_writev').mockImplementation(function (this: TcpSocket, ...args: unknown[]) {
    if (this.localPort === port) writes.push(Buffer.concat((args[0] as Array<{ chunk: Buffer }>).map(c => Buffer.from(c.chunk))))
    writev.apply(this, args)
  })
})
afterAll(async () => {
  vi.restoreAllMocks()
  client.disconnect()
  await app.close()
})

function realtime () {
  if (!app.realtime) throw new Error('started without realtime')
  return app.realtime
}

/** The server's Engine.IO connection and Socket.IO socket of the test's client. */
function serverSide (): { connection: EventEmitter, socket: { emit: (event: string, ...args: unknown[]) => boolean } } {
  const { io } = realtime()
  const socket = io.of('/').sockets.get(client.id as string)
  if (!socket) throw new Error('no server side for the client')
  return { connection: socket.conn as unknown as EventEmitter, socket: socket as unknown as { emit: (event: string, ...args: unknown[]) => boolean } }
}

/** A broadcast to the client's own room (one room, as a project's changes). */
const toRoom = (event: string, value: unknown) => (realtime().io.to(client.id as string) as unknown as { emit: (e: string, v: unknown) => boolean }).emit(event, value)

async function deliveries (): Promise<{ direct: number, engine: number }> {
  const text = await app.node.metrics.registry.metrics()
  const count = (path: string) => Number(new RegExp(`contentd_realtime_broadcast_deliveries_total\\{path="${path}"\\} (\\d+)`).exec(text)?.[1] ?? 0)
  return { direct: count('direct'), engine: count('engine.io') }
}

/** Resolves with the first `count` values of `probe` events the client receives. */
function probes (count: number): Promise<unknown[]> {
  const received: unknown[] = []
  return new Promise(resolve => {
    const on = (value: unknown) => {
      received.push(value)
      if (received.length === count) { client.off('probe', on); resolve(received) }
    }
    client.on('probe', on)
  })
}

describe('direct broadcast frames on a real connection', () => {
  it('a change reaches a subscribed client written directly: no Engine.IO packet for it', async () => {
    const { connection } = serverSide()
    const packets: unknown[] = []
    const onPacket = (packet: { data?: unknown }) => packets.push(packet.data)
    connection.on('packetCreate', onPacket)
    const before = await deliveries()
    const change = new Promise<{ version: number }>(resolve => client.once('change', resolve))
    const answer = await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'count', value: 1 } })
    expect(answer.status).toBe(200)
    expect((await change).version).toBeGreaterThan(0)
    connection.off('packetCreate', onPacket)
    expect(packets.filter(data => typeof data === 'string' && data.startsWith('2["change"'))).toEqual([])
    const after = await deliveries()
    expect(after.direct - before.direct).toBe(1)
    expect(after.engine - before.engine).toBe(0)
  })

  it('writes the bytes Engine.IO writes for the same event, in one write', async () => {
    const value = { text: 'é ✓', n: [1, 2, 3] }
    writes = []
    let received = probes(1)
    toRoom('probe', value)
    expect(await received).toEqual([value])
    const direct = writes
    writes = []
    received = probes(1)
    // The same event to the same socket through Socket.IO's per-socket path (Engine.IO, ws).
    serverSide().socket.emit('probe', value)
    expect(await received).toEqual([value])
    expect(direct).toHaveLength(1)
    expect(Buffer.concat(writes).equals(direct[0] as Buffer)).toBe(true)
  })

  it('keeps order with packets Engine.IO holds or has in flight, and piles up behind its own write', async () => {
    const { socket } = serverSide()
    let before = await deliveries()
    let received = probes(4)
    // Engine.IO writes `a` and holds its transport until it is written: b and c wait behind it.
    socket.emit('probe', 'a')
    toRoom('probe', 'b')
    toRoom('probe', 'c')
    socket.emit('probe', 'd')
    expect(await received).toEqual(['a', 'b', 'c', 'd'])
    let after = await deliveries()
    expect([after.direct - before.direct, after.engine - before.engine]).toEqual([0, 2])

    before = after
    received = probes(4)
    // Written directly, `e` holds the transport the same way: f, g and h go after it, together.
    writes = []
    toRoom('probe', 'e')
    socket.emit('probe', 'f')
    toRoom('probe', 'g')
    socket.emit('probe', 'h')
    expect(await received).toEqual(['e', 'f', 'g', 'h'])
    after = await deliveries()
    expect([after.direct - before.direct, after.engine - before.engine]).toEqual([1, 1])
    expect(writes).toHaveLength(2)
  })
})

/** A WebSocket connection as direct-frames.ts sees it, over a TCP socket that keeps what `kernelTakes` refuses. */
function fakeConnection (kernelTakes: number) {
  const tcp = {
    writableLength: 0,
    writable: true,
    written: [] as Buffer[],
    write (chunk: Buffer, callback: (error?: Error | null) => void) {
      this.written.push(chunk)
      this.writableLength += Math.max(0, chunk.length - kernelTakes)
      process.nextTick(callback)
      return true
    }
  }
  const ws = {
    readyState: 1,
    _socket: tcp,
    _sender: { _queue: [], _state: 0, _bufferedBytes: 0 },
    _extensions: {},
    terminate: vi.fn(),
    get bufferedAmount () { return tcp.writableLength }
  }
  const connection = Object.assign(new EventEmitter(), {
    readyState: 'open',
    upgrading: false,
    writeBuffer: [] as unknown[],
    transport: { name: 'websocket', writable: true, perMessageDeflate: null, socket: ws } as Record<string, unknown>,
    flush: vi.fn(),
    close: vi.fn()
  })
  return { connection, tcp, ws }
}

const quietLogger = (warn = vi.fn()) => ({ warn, debug: vi.fn(), info: vi.fn(), error: vi.fn() }) as unknown as Logger

describe('broadcasts without a text frame', () => {
  it('a binary broadcast goes through Engine.IO, and is not counted as a bailout', async () => {
    const before = await deliveries()
    const received = probes(1)
    toRoom('probe', Buffer.from([1, 2, 3]))
    expect(Buffer.from(((await received)[0]) as ArrayBuffer)).toEqual(Buffer.from([1, 2, 3]))
    const after = await deliveries()
    expect([after.direct - before.direct, after.engine - before.engine]).toEqual([0, 1])
    expect(await app.node.metrics.registry.metrics()).not.toContain('contentd_realtime_direct_frame_bailouts_total{')
  })

  it('a text broadcast the adapter did not frame goes through Engine.IO, counted as a bailout', async () => {
    const metrics = new Metrics()
    const fake = fakeConnection(1000)
    new DirectFrames(quietLogger(), metrics).attach(fake.connection as unknown as EngineConnection, undefined)
    const writeToEngine = vi.fn()
    const sockets = new Map([['s1', { conn: fake.connection, client: { writeToEngine } }]])
    const adapter = new RoomAdapter({ name: '/', server: { encoder: new parser.Encoder() }, sockets })
    await adapter.addAll('s1', new Set(['s1', 'room']))
    // As socket.io-adapter when it cannot load ws: the packet encoded, no frame.
    vi.spyOn(adapter as unknown as { _encode: () => unknown }, '_encode').mockReturnValue(['2["probe",1]'])
    adapter.broadcast({ type: parser.PacketType.EVENT, data: ['probe', 1] }, { rooms: new Set(['room']) })
    expect(writeToEngine).toHaveBeenCalledTimes(1)
    expect(fake.tcp.written).toEqual([])
    const text = await metrics.registry.metrics()
    expect(text).toContain('contentd_realtime_direct_frame_bailouts_total{reason="adapter.frame"} 1')
    expect(text).toContain('contentd_realtime_broadcast_deliveries_total{path="engine.io"} 1')
  })
})

describe('direct writes and the send buffer', () => {
  it('the per-connection bound sees what a direct write left in the socket and drops the connection past it', async () => {
    const { connection, tcp } = fakeConnection(50)
    const overflows: number[] = []
    const sendBuffer = capSendBuffer(connection as unknown as EngineConnection, 100, bytes => overflows.push(bytes))
    const reports: number[] = []
    sendBuffer.onChange = () => reports.push(sendBuffer.unsent())
    new DirectFrames(quietLogger(), undefined).attach(connection as unknown as EngineConnection, sendBuffer)
    const writer = directWriterOf(connection)
    expect(writer?.write(Buffer.alloc(120))).toBe(true)
    // 70 bytes left in the socket: reported to the budget, under the bound.
    expect(reports).toEqual([70])
    expect(overflows).toEqual([])
    // Something is in the socket: the next frame is Engine.IO's (it queues behind).
    expect(writer?.write(Buffer.alloc(120))).toBe(false)
    await new Promise(resolve => process.nextTick(resolve))
    expect(connection.transport.writable).toBe(true)
    tcp.writableLength = 0
    expect(writer?.write(Buffer.alloc(160))).toBe(true)
    expect(overflows).toEqual([110])
    await new Promise(resolve => process.nextTick(resolve))
    expect(connection.close).toHaveBeenCalledWith(true)
  })

  it('leaves a connection to Engine.IO while anything is queued, deflated or not open', () => {
    const cases: Array<[string, (c: ReturnType<typeof fakeConnection>) => void]> = [
      ['a packet in writeBuffer', c => { c.connection.writeBuffer.push({}) }],
      ['a write in flight', c => { c.connection.transport.writable = false }],
      ['ws deflating', c => { c.ws._sender._state = 1 }],
      ['ws queue', c => { (c.ws._sender._queue as unknown[]).push([]) }],
      ['per-message deflate', c => { c.ws._extensions = { 'permessage-deflate': {} } }],
      ['closing', c => { c.connection.readyState = 'closing' }],
      ['upgrading', c => { c.connection.upgrading = true }],
      ['long-polling', c => { c.connection.transport.name = 'polling' }]
    ]
    for (const [name, change] of cases) {
      const fake = fakeConnection(1000)
      change(fake)
      new DirectFrames(quietLogger(), undefined).attach(fake.connection as unknown as EngineConnection, undefined)
      expect([name, directWriterOf(fake.connection)?.write(Buffer.alloc(10))]).toEqual([name, false])
      expect([name, fake.tcp.written.length]).toEqual([name, 0])
    }
  })
})

describe('when the internals have moved', () => {
  it('the connection is left to Engine.IO, the metric counts it by reason and the first of each reason is logged once', async () => {
    const metrics = new Metrics()
    const warn = vi.fn()
    const frames = new DirectFrames(quietLogger(warn), metrics)
    const moved = [
      (c: ReturnType<typeof fakeConnection>) => { (c.ws as Record<string, unknown>)._socket = undefined },
      (c: ReturnType<typeof fakeConnection>) => { (c.ws as Record<string, unknown>)._socket = undefined },
      (c: ReturnType<typeof fakeConnection>) => { (c.ws as Record<string, unknown>)._sender = {} }
    ]
    for (const move of moved) {
      const fake = fakeConnection(1000)
      move(fake)
      frames.attach(fake.connection as unknown as EngineConnection, undefined)
      const writer = directWriterOf(fake.connection)
      expect(writer?.write(Buffer.alloc(10))).toBe(false)
      // Looked at once per transport: not counted again per frame.
      expect(writer?.write(Buffer.alloc(10))).toBe(false)
    }
    const text = await metrics.registry.metrics()
    expect(text).toContain('contentd_realtime_direct_frame_bailouts_total{reason="ws._socket"} 2')
    expect(text).toContain('contentd_realtime_direct_frame_bailouts_total{reason="ws._sender"} 1')
    expect(warn.mock.calls.map(([fields]) => (fields as { reason: string }).reason)).toEqual(['ws._socket', 'ws._sender'])
  })

  it('a connection whose internals are where they were is written directly, and nothing is counted', async () => {
    const metrics = new Metrics()
    const warn = vi.fn()
    const fake = fakeConnection(1000)
    new DirectFrames(quietLogger(warn), metrics).attach(fake.connection as unknown as EngineConnection, undefined)
    expect(directWriterOf(fake.connection)?.write(Buffer.from('frame'))).toBe(true)
    expect(fake.tcp.written.map(b => b.toString())).toEqual(['frame'])
    expect(await metrics.registry.metrics()).not.toContain('contentd_realtime_direct_frame_bailouts_total{')
    expect(warn).not.toHaveBeenCalled()
  })
})
