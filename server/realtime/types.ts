// The Socket.IO event maps, so every emit and handler is checked against shared/events.ts.
import type { Server, Socket } from 'socket.io'
import type { ChangeEvent, RevokedEvent, ShutdownEvent, SubscribeAck, UnsubscribeAck } from '../../shared/events.js'
import type { PresenceEvent, PresenceLeaveAck, PresenceListAck, PresenceSetAck } from '../../shared/presence.js'
import type { QueryEventPayload } from '../../shared/api/queries.js'
import type { Identity } from '../services/identity.js'
import type { PathChangeEvent } from '../../shared/live-path.js'
import type { PreEncoded } from './pre-encoded.js'

export interface ClientToServerEvents {
  // Payloads come from the network: handlers check them, whatever these types say.
  subscribe: (request: unknown, ack?: (reply: SubscribeAck) => void) => void
  unsubscribe: (request: unknown, ack?: (reply: UnsubscribeAck) => void) => void
  'presence:set': (request: unknown, ack?: (reply: PresenceSetAck) => void) => void
  'presence:list': (request: unknown, ack?: (reply: PresenceListAck) => void) => void
  'presence:leave': (request: unknown, ack?: (reply: PresenceLeaveAck) => void) => void
}

export interface ServerToClientEvents {
  /** A whole-project subscription's change (sent as its wire form, feed-relay.ts), or a path subscription's (docs/design.md §15). */
  change: (change: ChangeEvent | PathChangeEvent | PreEncoded) => void
  revoked: (event: RevokedEvent) => void
  shutdown: (event: ShutdownEvent) => void
  /** Sent pre-encoded: one JSON text for this node's room and the other nodes' (presence.ts). */
  presence: (event: PresenceEvent | PreEncoded) => void
  /** A live query's result changed (docs/design.md §16); sent pre-encoded (queries/query-wire.ts). */
  query: (event: QueryEventPayload | PreEncoded) => void
}

/** Nothing goes between nodes through Socket.IO: changes, access and presence events take the change feed's relay (server/feed/redis-relay.ts). */
export type InterServerEvents = Record<never, never>

export interface SocketData {
  identity: Identity
  /** The presented secret, to re-check it on every subscribe. */
  token: string
}

export type RealtimeServer = Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>
export type RealtimeSocket = Socket<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>
