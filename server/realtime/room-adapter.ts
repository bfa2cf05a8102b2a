// Socket.IO's in-memory adapter, with a broadcast to one room walked as it is.
//
// To send to several rooms without sending twice to a socket in more than one of them,
// socket.io-adapter builds a Set of the socket ids it has sent to, one entry per recipient,
// on every broadcast, even when there is only one room. Every change of a project goes to one
// room (feed-relay.ts): on a 10,000-subscriber room that is a Set of 10,000 ids built and
// thrown away per change, per-delivery work the plain-`net` floor does not do (BENCHMARKS.md,
// issue 35). With one room and nobody excepted there is nothing to deduplicate, so this walks
// the room's own Set; every other broadcast goes through the library's code unchanged.
//
// The one-room broadcast also joins its WebSocket frame into one buffer once and offers it
// to each connection's direct writer (direct-frames.ts), which writes it to the TCP socket
// when nothing is queued for the connection; the others get it through Socket.IO's
// `writeToEngine`, as the library's own broadcast does.
//
// `apply` and `_encode` are private in socket.io-adapter's types (the version is pinned in
// package.json); test/realtime/room-adapter.test.ts fails if the library stops calling
// `apply` for a broadcast, test/realtime/direct-frames.test.ts if the direct writes stop.
import { Adapter, type BroadcastOptions } from 'socket.io-adapter'
import { directWriterOf, type DirectFrames } from './direct-frames.js'

type Apply = (opts: BroadcastOptions, callback: (socket: unknown) => void) => void

interface PacketOptions { preEncoded: boolean, volatile?: boolean | undefined, compress?: boolean | undefined, wsPreEncodedFrame?: unknown }

interface RoomSocket {
  conn?: unknown
  notifyOutgoingListeners?: (packet: unknown) => void
  client: { writeToEngine: (packets: unknown, options: PacketOptions) => void }
}

type Encode = (packet: unknown, options: PacketOptions) => unknown

const isOneRoom = (opts: BroadcastOptions): boolean => opts.rooms.size === 1 && (opts.except === undefined || opts.except.size === 0)

/** The broadcast's frame as one buffer (socket.io-adapter makes it header and payload), or null without one. */
function joinedFrame (options: PacketOptions): Buffer | null {
  const frame = options.wsPreEncodedFrame
  if (!Array.isArray(frame) || frame.length === 0 || !frame.every(part => Buffer.isBuffer(part))) return null
  const joined = frame.length === 1 ? frame[0] as Buffer : Buffer.concat(frame as Buffer[])
  // The connections that take Engine.IO's path write the same one buffer (write-batching.ts).
  options.wsPreEncodedFrame = [joined]
  return joined
}

export class RoomAdapter extends Adapter {
  override broadcast (packet: Parameters<Adapter['broadcast']>[0], opts: BroadcastOptions): void {
    const encode = (this as unknown as { _encode?: Encode })._encode
    if (!isOneRoom(opts) || typeof encode !== 'function') {
      super.broadcast(packet, opts)
      return
    }
    // As the library's broadcast (socket.io-adapter's in-memory adapter), for one room.
    const flags = opts.flags ?? {}
    const options: PacketOptions = { preEncoded: true, volatile: flags.volatile, compress: flags.compress }
    packet.nsp = (this.nsp as { name: string }).name
    const encoded = encode.call(this, packet, options)
    const frame = joinedFrame(options)
    const [room] = opts.rooms
    const ids = this.rooms.get(room as string)
    if (!ids) return
    const sockets = (this.nsp as { sockets: Map<string, RoomSocket> }).sockets
    let frames: DirectFrames | undefined
    let direct = 0
    let engine = 0
    // As the library: the live Set, so a socket that leaves during the walk is skipped.
    for (const id of ids) {
      const socket = sockets.get(id)
      if (!socket) continue
      if (typeof socket.notifyOutgoingListeners === 'function') socket.notifyOutgoingListeners(packet)
      const writer = directWriterOf(socket.conn)
      if (writer !== undefined) {
        frames = writer.frames
        if (frame !== null && writer.write(frame)) { direct++; continue }
      }
      socket.client.writeToEngine(encoded, options)
      engine++
    }
    if (frames === undefined) return
    // socket.io-adapter frames every broadcast encoded as one string (a binary one is several parts).
    if (frame === null && Array.isArray(encoded) && encoded.length === 1 && typeof encoded[0] === 'string') frames.bailOut('adapter.frame')
    frames.counted(direct, engine)
  }
}

function apply (this: RoomAdapter, opts: BroadcastOptions, callback: (socket: unknown) => void): void {
  if (!isOneRoom(opts)) {
    (Adapter.prototype as unknown as { apply: Apply }).apply.call(this, opts, callback)
    return
  }
  const [room] = opts.rooms
  const ids = this.rooms.get(room as string)
  if (!ids) return
  const sockets = (this.nsp as { sockets: Map<string, unknown> }).sockets
  // As the library: the live Set, so a socket that leaves during the walk is skipped.
  for (const id of ids) {
    const socket = sockets.get(id)
    if (socket) callback(socket)
  }
}

;(RoomAdapter.prototype as unknown as { apply: Apply }).apply = apply
