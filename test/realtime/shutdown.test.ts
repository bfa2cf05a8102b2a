// SIGTERM with live Socket.IO connections: every client is told with a `shutdown` event,
// then the node closes the connections at the transport level (so clients reconnect
// elsewhere) and exits 0 promptly (open WebSockets must not hold the HTTP server's close open).
import { rmSync } from 'node:fs'
import { io, type Socket } from 'socket.io-client'
import { expect, it } from 'vitest'
import type { ShutdownEvent } from '../../shared/events.js'
import { ownerWithProject } from '../support/http.js'
import { startServerProcess } from '../support/server-process.js'
import { connect, connected, Recorder, subscribe } from './client.js'

/** What a socket saw, in order: its `shutdown` events and its disconnect. */
function timeline (socket: Socket): { seen: string[], notices: ShutdownEvent[] } {
  const record = { seen: [] as string[], notices: [] as ShutdownEvent[] }
  socket.on('shutdown', (event: ShutdownEvent) => { record.seen.push('shutdown'); record.notices.push(event) })
  socket.on('disconnect', (reason: string) => record.seen.push(`disconnect: ${reason}`))
  return record
}

it('exits 0 on SIGTERM while clients are subscribed, telling them `shutdown` before closing', async () => {
  const server = await startServerProcess()
  let polling: Socket | undefined
  try {
    const { key } = await ownerWithProject(server.url, 'shutdown')
    const recorder = new Recorder(await connect(server.url, key))
    const overWebSocket = timeline(recorder.socket)
    expect(await subscribe(recorder.socket, '@shutdown/demo')).toMatchObject({ ok: true })
    // A long-polling client collects the notice with its pending request.
    const pollingSocket = polling = await connected(io(server.url, { auth: { token: key }, transports: ['polling'], reconnection: false, forceNew: true }))
    const overPolling = timeline(pollingSocket)
    expect(await subscribe(pollingSocket, '@shutdown/demo')).toMatchObject({ ok: true })

    const started = Date.now()
    // The process gives up with exit code 1 after 10 s, so 0 also means "in time".
    expect(await server.stop('SIGTERM')).toBe(0)
    expect(Date.now() - started).toBeLessThan(10_000)
    await recorder.until(() => recorder.disconnectReason !== null, 'disconnect')
    await new Promise<void>(resolve => pollingSocket.connected ? pollingSocket.once('disconnect', () => resolve()) : resolve())

    // Told first, then closed by the server going away, not revoked ('io server disconnect'):
    // clients reconnect by themselves (behind a balancer, to another node).
    expect(overWebSocket.seen).toEqual(['shutdown', 'disconnect: transport close'])
    // A long-polling client collects the notice with its pending request; its next request
    // finds the listener closed ('transport error', which reconnects just the same).
    expect(overPolling.seen[0]).toBe('shutdown')
    expect(overPolling.seen.slice(1)).toEqual([expect.stringMatching(/^disconnect: transport (close|error)$/)])
    for (const record of [overWebSocket, overPolling]) {
      expect(record.notices).toEqual([{ code: 'STORE_UNAVAILABLE', message: expect.stringContaining('shutting down') }])
    }
    recorder.socket.disconnect()
  } finally {
    polling?.disconnect()
    await server.stop('SIGKILL')
    rmSync(server.dataDir, { recursive: true, force: true })
  }
})
