// A room broadcast's frame written straight to each connection's TCP socket.
//
// Per delivery, Socket.IO hands the broadcast's pre-encoded WebSocket frame to the
// connection's Engine.IO socket, which makes a packet object, emits `packetCreate`, queues it,
// flushes (emitting `flush` and `drain` on the socket and on the server), hands it to the
// WebSocket transport, which writes it through ws with a callback that emits `drain` and
// `ready` once it is written. Profiled on a 2,000-subscriber fan-out, that JavaScript and the
// garbage of its objects were about 5 µs per delivery, which the plain-`net` floor's one
// `write` does not pay, and the server's CPU per delivery fell from 30.7 to 23.3 µs without it
// (BENCHMARKS.md, "What the benchmark changed in the server"; issue 35).
//
// When nothing is queued for the connection anywhere (Engine.IO's writeBuffer empty, its
// transport writable, i.e. no earlier write in flight, ws's sender idle, the TCP socket's own
// buffer empty) and nothing would change the bytes (a WebSocket without per-message deflate),
// the frame Engine.IO would write is written here instead: the same bytes, on the same
// socket, after everything written before, so order with acks, presence and catch-up pages
// holds. Otherwise the connection takes Engine.IO's path as before.
//
// While the write is in flight the transport is marked not writable, as Engine.IO does for
// its own writes: packets sent meanwhile pile up in its writeBuffer and go out together once
// this one is written (write-batching.ts corks them into one writev). The send buffer's bound
// sees what the socket holds (send-buffer.ts, `wroteDirectly`).
//
// The internals read here (engine.io's `writeBuffer`, `upgrading`, `flush`, its transport's
// `writable` and `socket`; ws's `_socket`, `_sender`, `_extensions`) are private; the versions
// are pinned in package.json and test/realtime/direct-frames.test.ts fails when the shortcut
// stops engaging with a real client. A connection whose internals are not where they were
// is left to Engine.IO: `contentd_realtime_direct_frame_bailouts_total` counts it, and the
// first of each reason is logged.
import type { Socket as EngineConnection } from 'engine.io'
import type { Logger } from '../logger.js'
import { bailoutReporter } from '../observability/bailouts.js'
import type { Metrics } from '../observability/metrics.js'
import type { SendBuffer } from './send-buffer.js'

/** Why a connection is written through Engine.IO only: the internal that is not where it was. */
export type DirectFrameBailout = 'engine.writeBuffer' | 'transport.writable' | 'ws._socket' | 'ws._sender' | 'ws._extensions' | 'adapter.frame'

interface Tcp {
  write (chunk: Buffer, callback: (error?: Error | null) => void): boolean
  readonly writableLength: number
  readonly writable: boolean
}

interface WsSender { _queue: unknown[], _state: number }

interface Ws { readyState: number, _socket?: unknown, _sender?: unknown, _extensions?: unknown }

interface Transport { name?: unknown, writable?: unknown, perMessageDeflate?: unknown, socket?: Ws }

interface Connection {
  readyState: string
  upgrading: boolean
  writeBuffer: unknown[]
  transport: Transport
  flush (): void
}

const WS_OPEN = 1
// ws's Sender state when it is not deflating or reading a Blob (ws/lib/sender.js).
const SENDER_IDLE = 0
const WRITER = Symbol('contentd.directFrames')

/** The server's side: the bailouts and the counts of deliveries by path. */
export class DirectFrames {
  /** Counted each time, the first of each reason logged. */
  readonly bailOut: (reason: DirectFrameBailout) => void

  constructor (logger: Logger, private readonly metrics: Metrics | undefined) {
    this.bailOut = bailoutReporter(metrics?.directFrameBailouts, logger, 'broadcast frames go through Engine.IO: a library internal the direct write relies on moved (server/realtime/direct-frames.ts)')
  }

  /** Lets the connection's broadcasts be written directly while it is on a plain WebSocket. */
  attach (connection: EngineConnection, sendBuffer: SendBuffer | undefined): void {
    (connection as unknown as Record<symbol, DirectWriter>)[WRITER] = new DirectWriter(connection as unknown as Connection, sendBuffer, this)
  }

  /** One broadcast's deliveries: written directly, and through Engine.IO. */
  counted (direct: number, engine: number): void {
    if (direct > 0) this.metrics?.broadcastDeliveries.inc({ path: 'direct' }, direct)
    if (engine > 0) this.metrics?.broadcastDeliveries.inc({ path: 'engine.io' }, engine)
  }
}

/** One connection's direct writes. */
export class DirectWriter {
  /** The transport last looked at, and what it gave (null: Engine.IO only). */
  private transport: Transport | null = null
  private ws: Ws | null = null
  private tcp: Tcp | null = null
  private sender: WsSender | null = null
  private readonly onWritten: (error?: Error | null) => void

  constructor (private readonly connection: Connection, private readonly sendBuffer: SendBuffer | undefined, readonly frames: DirectFrames) {
    this.onWritten = error => {
      // As Engine.IO's own write: on an error the socket's `error` and `close` end the
      // connection; otherwise the transport takes packets again, and what piled up goes now.
      if (error) return
      const transport = this.connection.transport
      transport.writable = true
      if (this.connection.writeBuffer.length > 0) this.connection.flush()
    }
  }

  /** Writes the frame if nothing is queued for the connection; false: send it through Engine.IO. */
  write (frame: Buffer): boolean {
    const connection = this.connection
    const transport = connection.transport
    if (transport !== this.transport) this.look(transport)
    const tcp = this.tcp
    if (tcp === null) return false
    if (transport.writable !== true || connection.writeBuffer.length !== 0 || connection.readyState !== 'open' || connection.upgrading) return false
    const sender = this.sender as WsSender
    if ((this.ws as Ws).readyState !== WS_OPEN || sender._state !== SENDER_IDLE || sender._queue.length !== 0) return false
    if (tcp.writableLength !== 0 || !tcp.writable) return false
    transport.writable = false
    tcp.write(frame, this.onWritten)
    this.sendBuffer?.wroteDirectly()
    return true
  }

  /** Checks a transport once: a WebSocket whose internals are where they were, without deflate. */
  private look (transport: Transport): void {
    this.transport = transport
    this.tcp = null
    if (transport.name !== 'websocket' || transport.perMessageDeflate) return
    const ws = transport.socket
    const reason = this.bailoutOf(ws)
    if (reason !== null) { this.frames.bailOut(reason); return }
    // A negotiated extension (per-message deflate) changes the frames; Engine.IO's path then.
    if (Object.keys(ws?._extensions as object).length > 0) return
    this.ws = ws as Ws
    this.sender = (ws as Ws)._sender as WsSender
    this.tcp = (ws as Ws)._socket as Tcp
  }

  private bailoutOf (ws: Ws | undefined): DirectFrameBailout | null {
    if (!Array.isArray(this.connection.writeBuffer) || typeof this.connection.flush !== 'function') return 'engine.writeBuffer'
    if (typeof this.transport?.writable !== 'boolean') return 'transport.writable'
    const tcp = ws?._socket as Partial<Tcp> | undefined
    if (typeof tcp?.write !== 'function' || typeof tcp.writableLength !== 'number') return 'ws._socket'
    const sender = ws?._sender as Partial<WsSender> | undefined
    if (!Array.isArray(sender?._queue) || typeof sender._state !== 'number') return 'ws._sender'
    if (typeof ws?._extensions !== 'object' || ws._extensions === null) return 'ws._extensions'
    return null
  }
}

/** The connection's direct writer, if it has one (a Socket.IO socket's `conn`). */
export function directWriterOf (connection: unknown): DirectWriter | undefined {
  return connection === undefined || connection === null ? undefined : (connection as Record<symbol, DirectWriter | undefined>)[WRITER]
}
