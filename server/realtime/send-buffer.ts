// SOCKET_SEND_BUFFER: a client that does not read what it is sent (changes, snapshots) must
// not make the server hold an ever-growing backlog for it. Engine.IO queues outgoing
// packets in the connection's writeBuffer while its transport is busy (a WebSocket whose
// previous frames have not been written out, a long-polling client that has not come back
// for them), and the WebSocket itself holds what the kernel would not take yet
// (`bufferedAmount`). When the two together pass the cap, the connection is dropped; the
// client reconnects and re-subscribes if it is alive, and its memory is freed if not.
import type { Socket as EngineConnection } from 'engine.io'
import { BacklogReports } from '../services/unsent-budget.js'

/** What the connection's WebSocket holds unsent; 0 for long-polling. */
function transportBacklog (connection: EngineConnection): number {
  const ws = (connection.transport as unknown as { socket?: { bufferedAmount?: unknown } }).socket
  return typeof ws?.bufferedAmount === 'number' ? ws.bufferedAmount : 0
}

// A room broadcast hands every connection the same string: its size is measured once, not
// once per connection (a 10,000-subscriber fan-out, BENCHMARKS.md).
let lastText = ''
let lastTextBytes = 0

function sizeOf (data: unknown): number {
  if (typeof data === 'string') {
    if (data !== lastText) { lastText = data; lastTextBytes = Buffer.byteLength(data) }
    return lastTextBytes
  }
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return data.byteLength
  return 0
}

/** Whether Engine.IO hands a packet created now to the transport at once (and then emits `drain`). */
function flushesNow (connection: EngineConnection): boolean {
  return (connection.transport as unknown as { writable?: unknown }).writable === true
}

/** One connection's backlog, for the budget of all streams (services/unsent-budget.ts). */
export interface SendBuffer {
  /** Bytes queued for the connection that its client has not taken yet. */
  unsent (): number
  /** Drops the connection right after the current emit (the client reconnects and resumes). */
  drop (): void
  /** Called after each packet queued and each flush to the transport. */
  onChange: (() => void) | null
  /**
   * A frame was written to the connection's TCP socket past Engine.IO (direct-frames.ts), so
   * no `packetCreate` or `drain` tells this buffer: the bound and the report as for a packet.
   */
  wroteDirectly (): void
}

/** Watches one connection; `onOverflow` is told once, right before the connection is dropped. */
export function capSendBuffer (connection: EngineConnection, capBytes: number, onOverflow: (queuedBytes: number) => void): SendBuffer {
  // Bytes in writeBuffer: packets created since the last flush handed them to the transport.
  let queued = 0
  let dropping = false
  const drop = () => {
    if (dropping) return
    dropping = true
    // Not from inside the emit that queued the packet (it may be in the middle of a
    // broadcast loop): right after it.
    process.nextTick(() => {
      const ws = (connection.transport as unknown as { socket?: { terminate?: unknown } }).socket
      connection.close(true)
      // close() would start a WebSocket closing handshake that a peer that does not read
      // never completes (ws then waits 30 s); end the TCP connection now.
      if (typeof ws?.terminate === 'function') (ws.terminate as () => void).call(ws)
    })
  }
  const buffer: SendBuffer = {
    unsent: () => queued + transportBacklog(connection),
    drop,
    onChange: null,
    wroteDirectly: () => {
      if (dropping) return
      const backlog = withinCap()
      if (backlog !== null) report(backlog)
    }
  }
  /** What is unsent, or null when that is past the cap and the connection is dropped. */
  const withinCap = (): number | null => {
    const backlog = buffer.unsent()
    if (backlog <= capBytes) return backlog
    onOverflow(backlog)
    drop()
    return null
  }
  // Only a connection that holds or held a backlog is reported (BacklogReports): on a
  // broadcast to a room that reads, that is none, and the reports (and the budget's recount
  // of each at the end of the turn) were a tenth of the fan-out's CPU (BENCHMARKS.md).
  const reports = new BacklogReports()
  const report = (backlog: number) => {
    if (reports.due(backlog)) buffer.onChange?.()
  }
  connection.on('flush', () => { queued = 0 })
  connection.on('drain', () => { if (!dropping) report(buffer.unsent()) })
  connection.on('packetCreate', (packet: { data?: unknown }) => {
    queued += sizeOf(packet.data)
    if (dropping) return
    const backlog = withinCap()
    if (backlog === null) return
    // Handed to the transport right away, the packet is reported by the `drain` that follows
    // (with what the transport could not write); otherwise it waits in writeBuffer: now.
    if (!flushesNow(connection)) report(backlog)
  })
  return buffer
}
