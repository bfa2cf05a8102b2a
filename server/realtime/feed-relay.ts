// Socket.IO rooms read the change feed (server/feed/): while a project has subscribers on this
// node, its room listens to the feed, orders what it hears (room-joins.ts) and sends each
// change as its one wire form (server/feed/wire.ts), encoded once for the whole room and
// written as it is (pre-encoded.ts): Socket.IO serializes nothing.
import { EVENTS, type ChangeEvent } from '../../shared/events.js'
import type { ChangeSource } from '../feed/change-feed.js'
import { wireOf } from '../feed/wire.js'
import type { Metrics } from '../observability/metrics.js'
import { PreEncoded } from './pre-encoded.js'
import type { RoomJoins } from './room-joins.js'
import type { RealtimeServer, RealtimeSocket } from './types.js'

export const roomOf = (projectId: string) => `project:${projectId}`

/** The change as the `change` event's one argument, already JSON. */
export const changeArgument = (change: ChangeEvent): PreEncoded => new PreEncoded(wireOf(change))

/** Sends a change to everyone in the project's room on this node (other nodes have their own rooms). */
export function roomBroadcast (io: RealtimeServer, projectId: string, metrics?: Metrics): (change: ChangeEvent) => void {
  const room = roomOf(projectId)
  return change => {
    io.local.to(room).emit(EVENTS.change, changeArgument(change))
    metrics?.broadcastLag.observe(Math.max(0, Date.now() - Date.parse(change.at)) / 1000)
  }
}

/** Sends one change to one socket (a subscriber catching up from the room's history). */
export function sendChange (socket: RealtimeSocket, change: ChangeEvent): void {
  socket.emit(EVENTS.change, changeArgument(change))
}

/** The room hears the project's changes from the feed until the returned function is called. */
export function relayToRoom (feed: ChangeSource, projectId: string, joins: RoomJoins): () => void {
  return feed.subscribe(projectId, change => joins.receive(change))
}
