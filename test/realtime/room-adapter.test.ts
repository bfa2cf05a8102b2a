// server/realtime/room-adapter.ts walks a one-room broadcast itself instead of
// socket.io-adapter's `apply`, which keeps a Set of the recipients to deduplicate across
// rooms. Recipients must be exactly the library's for every kind of broadcast (one room,
// several rooms, rooms with exceptions, everyone), and the shortcut must engage: the test
// fails when the library stops routing broadcasts through `apply` or the shortcut stops
// taking the one-room case. That real clients get every change once is shown by
// broadcast-frames.test.ts and the realtime tests.
import * as parser from 'socket.io-parser'
import { Adapter, type BroadcastOptions } from 'socket.io-adapter'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { RoomAdapter } from '../../server/realtime/room-adapter.js'

interface FakeSocket { id: string, client: { writeToEngine: (packets: unknown) => void } }

/** An adapter of a namespace whose sockets record what they are written. */
function namespace (AdapterClass: typeof Adapter): { adapter: Adapter, written: string[] } {
  const written: string[] = []
  const sockets = new Map<string, FakeSocket>()
  const nsp = { name: '/', server: { encoder: new parser.Encoder() }, sockets }
  const adapter = new AdapterClass(nsp)
  const rooms: Record<string, string[]> = { a: ['s1', 's2', 's3'], b: ['s3', 's4'], c: ['s5'] }
  for (const id of ['s1', 's2', 's3', 's4', 's5', 's6']) {
    sockets.set(id, { id, client: { writeToEngine: () => { written.push(id) } } })
    void adapter.addAll(id, new Set([id, ...Object.keys(rooms).filter(room => rooms[room]?.includes(id))]))
  }
  // A room member whose socket has already left the namespace gets nothing, as in the library.
  void adapter.addAll('gone', new Set(['a']))
  return { adapter, written }
}

const cases: Array<[string, BroadcastOptions]> = [
  ['one room', { rooms: new Set(['a']) }],
  ['one room nobody is in', { rooms: new Set(['nobody']) }],
  ['one room, a socket excepted', { rooms: new Set(['a']), except: new Set(['s2']) }],
  ['one room, an empty exception', { rooms: new Set(['a']), except: new Set() }],
  ['two rooms sharing a socket', { rooms: new Set(['a', 'b']) }],
  ['everyone', { rooms: new Set() }],
  ['everyone but a room', { rooms: new Set(), except: new Set(['a']) }]
]

afterEach(() => { vi.restoreAllMocks() })

describe('the one-room broadcast', () => {
  for (const [name, opts] of cases) {
    it(`${name}: the same sockets, in the same order, as socket.io-adapter's`, () => {
      const ours = namespace(RoomAdapter)
      const theirs = namespace(Adapter)
      const packet = () => ({ type: parser.PacketType.EVENT, data: ['change', 1] })
      ours.adapter.broadcast(packet(), opts)
      theirs.adapter.broadcast(packet(), opts)
      expect(ours.written).toEqual(theirs.written)
    })
  }

  it('one room goes around the library\'s apply; several rooms or an exception go through it', () => {
    const { adapter, written } = namespace(RoomAdapter)
    const library = vi.spyOn(Adapter.prototype as unknown as { apply: () => void }, 'apply')
    adapter.broadcast({ type: parser.PacketType.EVENT, data: ['change', 1] }, { rooms: new Set(['a']) })
    expect(written).toEqual(['s1', 's2', 's3'])
    expect(library).not.toHaveBeenCalled()
    adapter.broadcast({ type: parser.PacketType.EVENT, data: ['change', 2] }, { rooms: new Set(['a', 'b']) })
    adapter.broadcast({ type: parser.PacketType.EVENT, data: ['change', 3] }, { rooms: new Set(['a']), except: new Set(['s1']) })
    expect(library).toHaveBeenCalledTimes(2)
  })

  it('socket.io-adapter still broadcasts through apply (else the shortcut is dead code for what our broadcast leaves to it)', () => {
    const { adapter } = namespace(RoomAdapter)
    const ours = vi.spyOn(adapter as unknown as { apply: () => void }, 'apply')
    // One room is walked by RoomAdapter's own broadcast (direct-frames.ts), without apply.
    adapter.broadcast({ type: parser.PacketType.EVENT, data: ['change', 1] }, { rooms: new Set(['a']) })
    expect(ours).not.toHaveBeenCalled()
    // The library's broadcast, as Socket.IO's other operations, calls apply.
    Adapter.prototype.broadcast.call(adapter, { type: parser.PacketType.EVENT, data: ['change', 2] }, { rooms: new Set(['a']) })
    expect(ours).toHaveBeenCalledTimes(1)
  })
})
