// One system call per write to a WebSocket connection, and one for everything it has
// queued, instead of one or two per packet.
//
// - Batches: Engine.IO hands its transport all the packets that piled up while the previous
//   write was in flight, and the WebSocket transport writes them one frame at a time: each
//   frame is its own write(2) on the TCP socket. A presence fan-out sends every member's
//   update to every member, so the kernel calls, not the JavaScript, were the server's cost
//   (BENCHMARKS.md). Corking the TCP socket around the batch makes Node write it with one
//   writev(2).
// - Broadcast frames: for a broadcast, Socket.IO frames the message once and hands every
//   connection the same WebSocket frame, as two buffers (header and payload) that ws writes
//   corked, so each delivery is a writev(2) of two pieces plus the JavaScript of corking.
//   Joined once per broadcast into one buffer, each delivery is one plain write(2); on a
//   10,000-subscriber fan-out that is most of the server's work (docs/operations.md).
// What reaches the client is byte for byte the same.
import type { Socket as EngineConnection } from 'engine.io'
import type { Logger } from '../logger.js'
import { bailoutReporter } from '../observability/bailouts.js'
import type { Metrics } from '../observability/metrics.js'

interface Corkable {
  cork (): void
  uncork (): void
}

interface OutgoingPacket { options?: { wsPreEncodedFrame?: unknown } }

type Transport = { name?: string, send?: (packets: OutgoingPacket[]) => void, socket?: { _socket?: Partial<Corkable> } } & Record<string, unknown>

const BATCHED = Symbol('contentd.batchedWrites')

/**
 * A broadcast's frame in one buffer. The options object is the broadcast's own, shared by
 * all its connections, so the first connection joins the frame and the others find it joined.
 */
function joinFrame (packet: OutgoingPacket): void {
  const options = packet.options
  const frame = options?.wsPreEncodedFrame
  if (options && Array.isArray(frame) && frame.length === 2) options.wsPreEncodedFrame = [Buffer.concat(frame as Buffer[])]
}

/**
 * Why a WebSocket connection's writes could not be batched: the library internals this file
 * relies on (engine.io's `transport.send`, ws's `_socket`) are not where they were. The
 * versions are pinned in package.json; test/realtime/write-batching.test.ts fails when the
 * trick stops engaging.
 */
export type BatchingBailout = 'transport.send' | 'ws._socket'

function batch (transport: Transport, bailOut: (reason: BatchingBailout) => void): void {
  if (transport.name !== 'websocket' || transport[BATCHED as unknown as string]) return
  if (typeof transport.send !== 'function') { bailOut('transport.send'); return }
  const raw = transport.socket?._socket
  if (typeof raw?.cork !== 'function' || typeof raw.uncork !== 'function') { bailOut('ws._socket'); return }
  const send = transport.send.bind(transport)
  const tcp = raw as Corkable
  transport.send = (packets: OutgoingPacket[]) => {
    for (const packet of packets) joinFrame(packet)
    // One packet is one frame: ws writes it at once (corking it itself when in two pieces).
    if (packets.length === 1) { send(packets); return }
    tcp.cork()
    try {
      send(packets)
    } finally {
      tcp.uncork()
    }
  }
  transport[BATCHED as unknown as string] = true
}

/**
 * Batches each connection's WebSocket writes, now or once it upgrades from long-polling.
 * When it cannot, the connection works as it would without this file (one write per
 * frame), `contentd_realtime_write_batching_bailouts_total` counts it and the first of each
 * reason is logged.
 */
export function writeBatching ({ logger, metrics }: { logger: Logger, metrics?: Metrics | undefined }): (connection: EngineConnection) => void {
  const bailOut = bailoutReporter<BatchingBailout>(metrics?.writeBatchingBailouts, logger, 'WebSocket write batching is off: a library internal it relies on moved (server/realtime/write-batching.ts)')
  return connection => {
    batch(connection.transport as unknown as Transport, bailOut)
    connection.on('upgrade', (transport: unknown) => batch(transport as Transport, bailOut))
  }
}
