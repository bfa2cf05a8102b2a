// server/realtime/send-buffer.ts tells the unsent budget (services/unsent-budget.ts) about a
// connection only when it holds a backlog or held one at its last report: a connection that
// reads has nothing unsent after each write, and reporting it on every broadcast was a tenth
// of a 10,000-subscriber fan-out's CPU. The budget must still hear of every backlog (the
// kernel's, left after a write, and Engine.IO's, while the transport is busy) and of its
// going back to zero, and the per-connection cap must still drop a connection. A connection
// is played here by an EventEmitter emitting Engine.IO's events in Engine.IO's order
// (packetCreate, then, when the transport is writable, flush and drain); slow-clients.test.ts
// shows the whole on real sockets.
import { EventEmitter } from 'node:events'
import type { Socket as EngineConnection } from 'engine.io'
import { describe, expect, it, vi } from 'vitest'
import { capSendBuffer } from '../../server/realtime/send-buffer.js'

class FakeConnection extends EventEmitter {
  readonly transport = { writable: true, socket: { bufferedAmount: 0, terminate: vi.fn() } }
  close = vi.fn()

  /** As Engine.IO's sendPacket: the packet, then (if the transport takes it now) flush and drain; `left` is what the WebSocket could not write. */
  send (data: string, left = 0): void {
    this.emit('packetCreate', { type: 'message', data })
    if (!this.transport.writable) return
    this.emit('flush')
    this.transport.socket.bufferedAmount += left
    this.emit('drain')
  }
}

function watched (cap = 1000): { connection: FakeConnection, reports: number[], overflows: number[], buffer: ReturnType<typeof capSendBuffer> } {
  const connection = new FakeConnection()
  const reports: number[] = []
  const overflows: number[] = []
  const buffer = capSendBuffer(connection as unknown as EngineConnection, cap, bytes => overflows.push(bytes))
  buffer.onChange = () => reports.push(buffer.unsent())
  return { connection, reports, overflows, buffer }
}

describe('what the unsent budget hears of a Socket.IO connection', () => {
  it('a connection that reads, written to again and again: nothing to report', () => {
    const { connection, reports } = watched()
    for (let i = 0; i < 5; i++) connection.send('x'.repeat(200))
    expect(reports).toEqual([])
  })

  it('bytes the WebSocket could not write are reported; their going back to zero once; then nothing again', () => {
    const { connection, reports } = watched()
    connection.send('x'.repeat(200), 150)
    expect(reports).toEqual([150])
    connection.transport.socket.bufferedAmount = 0
    connection.send('x'.repeat(200))
    expect(reports).toEqual([150, 0])
    connection.send('x'.repeat(200))
    expect(reports).toEqual([150, 0])
  })

  it('packets waiting for a busy transport are reported as they are queued (no flush follows)', () => {
    const { connection, reports } = watched()
    connection.transport.writable = false
    connection.send('ab')
    connection.send('é')
    expect(reports).toEqual([2, 4])
  })

  it('the per-connection cap still drops the connection, whether the transport is busy or not', async () => {
    const busy = watched(100)
    busy.connection.transport.writable = false
    busy.connection.send('x'.repeat(60))
    busy.connection.send('x'.repeat(60))
    expect(busy.overflows).toEqual([120])

    const idle = watched(100)
    idle.connection.transport.socket.bufferedAmount = 90
    idle.connection.send('x'.repeat(20))
    expect(idle.overflows).toEqual([110])

    await new Promise(resolve => process.nextTick(resolve))
    expect(busy.connection.close).toHaveBeenCalledWith(true)
    expect(idle.connection.transport.socket.terminate).toHaveBeenCalled()
  })

  it('strings of the same text and of different texts are each measured in bytes', () => {
    const { connection, reports } = watched()
    connection.transport.writable = false
    const text = 'ü'.repeat(10)
    connection.send(text)
    connection.send(text)
    connection.send('a'.repeat(10))
    expect(reports).toEqual([20, 40, 50])
  })
})
