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
// `apply` is private in socket.io-adapter's types (the version is pinned in package.json);
// test/realtime/room-adapter.test.ts fails if the library stops calling it for a broadcast.
import { Adapter, type BroadcastOptions } from 'socket.io-adapter'

type Apply = (opts: BroadcastOptions, callback: (socket: unknown) => void) => void

export class RoomAdapter extends Adapter {}

function apply (this: RoomAdapter, opts: BroadcastOptions, callback: (socket: unknown) => void): void {
  if (opts.rooms.size !== 1 || (opts.except !== undefined && opts.except.size > 0)) {
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
