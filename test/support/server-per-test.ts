// A real server process per test, with the Socket.IO clients the test opened: both are
// ended after each test. For tests that each need their own limits (env) on a fresh server.
import type { Socket } from 'socket.io-client'
import { afterEach } from 'vitest'
import { startServerProcess, type ServerProcess } from './server-process.js'

export interface ServerPerTest {
  /** Starts this test's server with `env` on top of the file's own. */
  start (env: Record<string, string>): Promise<ServerProcess>
  /** Keeps `socket` to disconnect after the test. */
  track (socket: Socket): Socket
}

export function serverPerTest (fileEnv: Record<string, string>): ServerPerTest {
  let server: ServerProcess | undefined
  const sockets: Socket[] = []
  afterEach(async () => {
    while (sockets.length) sockets.pop()?.disconnect()
    await server?.stop()
    server = undefined
  })
  return {
    async start (env) { server = await startServerProcess({ env: { ...fileEnv, ...env } }); return server },
    track (socket) { sockets.push(socket); return socket }
  }
}
