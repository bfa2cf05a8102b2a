// Closing this node's Socket.IO connections on shutdown: every socket is told with a
// `shutdown` event, then its connection is closed at the transport level. Not
// socket.disconnect(): clients see that as 'io server disconnect' and do not reconnect,
// while a plain 'transport close' makes them reconnect (to another node behind a balancer).
import { EVENTS, type ShutdownEvent } from '../../shared/events.js'
import { ContentdError } from '../../shared/errors.js'
import type { RealtimeServer } from './types.js'

export const SHUTDOWN_EVENT: ShutdownEvent = new ContentdError('STORE_UNAVAILABLE', 'this server is shutting down; reconnect').toBody()

/**
 * Sends `shutdown` to every socket on this node (never to other nodes' sockets), lets each
 * connection flush it and close, and after `graceMs` drops whatever is still open (a
 * long-polling client that has no request waiting may never collect it).
 */
export async function closeConnections (io: RealtimeServer, graceMs: number): Promise<void> {
  io.local.emit(EVENTS.shutdown, SHUTDOWN_EVENT)
  const connections = new Set([...io.of('/').sockets.values()].map(socket => socket.conn))
  const closed = [...connections].map(connection => new Promise<void>(resolve => {
    if (connection.readyState === 'closed') { resolve(); return }
    connection.once('close', () => resolve())
    // Without `discard`, engine.io waits until the write buffer (the shutdown packet) drained.
    connection.close()
  }))
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    Promise.all(closed),
    new Promise<void>(resolve => { timer = setTimeout(resolve, graceMs); timer.unref() })
  ])
  clearTimeout(timer)
  // Handshakes in progress and connections that did not flush in time.
  io.engine.close()
}
