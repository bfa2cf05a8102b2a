// One system call for everything a WebSocket connection has queued, instead of one per
// packet. Engine.IO hands its transport all the packets that piled up while the previous
// write was in flight, and the WebSocket transport writes them one frame at a time: each
// frame is its own write(2) on the TCP socket. A presence fan-out sends every member's
// update to every member, so the kernel calls, not the JavaScript, were the server's cost
// (BENCHMARKS.md). Corking the TCP socket around the batch makes Node write it with one
// writev(2); what reaches the client is byte for byte the same.
import type { Socket as EngineConnection } from 'engine.io'

interface Corkable {
  cork (): void
  uncork (): void
}

type Transport = { name?: string, send?: (packets: unknown[]) => void, socket?: { _socket?: Partial<Corkable> } } & Record<string, unknown>

const BATCHED = Symbol('contentd.batchedWrites')

function batch (transport: Transport): void {
  if (transport.name !== 'websocket' || transport[BATCHED as unknown as string] || typeof transport.send !== 'function') return
  const raw = transport.socket?._socket
  if (typeof raw?.cork !== 'function' || typeof raw.uncork !== 'function') return
  const send = transport.send.bind(transport)
  const tcp = raw as Corkable
  transport.send = (packets: unknown[]) => {
    tcp.cork()
    try {
      send(packets)
    } finally {
      tcp.uncork()
    }
  }
  transport[BATCHED as unknown as string] = true
}

/** Batches the connection's WebSocket writes, now or once it upgrades from long-polling. */
export function batchWebSocketWrites (connection: EngineConnection): void {
  batch(connection.transport as unknown as Transport)
  connection.on('upgrade', (transport: unknown) => batch(transport as Transport))
}
