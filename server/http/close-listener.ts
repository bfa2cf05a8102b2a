// Closing the listening socket on shutdown without resetting connections the kernel had
// already established: a client whose connection completed before the signal has sent its
// request, and closing the listener resets every connection still in the accept queue.
// libuv accepts one connection per event-loop turn, so a server that fell behind (a loaded
// machine, a burst of new clients) can have many waiting. They are accepted first, one per
// turn, and the listener closes after the first turn that found the queue empty.
import type { Server } from 'node:http'
import { Server as NetServer } from 'node:net'

// Not http.Server#close(): it also drops idle keep-alive connections at once, losing a
// request a client wrote on one just before the signal. Called with the server as `this`.
const netServerClose = NetServer.prototype.close

/**
 * Stops accepting once the accept queue is empty (at most `maxDrainMs` later, so a flood of
 * new clients cannot hold the shutdown open). `onListenerClosed` runs at once when the
 * listener is closed; `onAllClosed` once every connection has ended too.
 */
export function closeListener (server: Server, { maxDrainMs, onListenerClosed, onAllClosed }: {
  maxDrainMs: number
  onListenerClosed: () => void
  onAllClosed: () => void
}): void {
  const deadline = Date.now() + maxDrainMs
  let accepted = false
  const onConnection = () => { accepted = true }
  server.on('connection', onConnection)
  // Each check runs in the check phase, after a poll phase that accepts a waiting connection
  // if there is one. The first turn only starts the count: the signal is handled inside a
  // poll phase, which may have accepted a connection just before it.
  const checkAfterNextTurn = () => setImmediate(() => {
    if (accepted && Date.now() < deadline) {
      accepted = false
      checkAfterNextTurn()
      return
    }
    server.off('connection', onConnection)
    netServerClose.call(server, onAllClosed)
    onListenerClosed()
  })
  setImmediate(() => {
    accepted = false
    checkAfterNextTurn()
  })
}
