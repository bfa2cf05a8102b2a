// SIGTERM with live Socket.IO connections: the node closes them and exits 0 promptly
// (open WebSockets must not hold the HTTP server's close open).
import { rmSync } from 'node:fs'
import { expect, it } from 'vitest'
import { ownerWithProject } from '../support/http.js'
import { startServerProcess } from '../support/server-process.js'
import { connect, Recorder, subscribe } from './client.js'

it('exits 0 on SIGTERM while clients are subscribed, closing their connections', async () => {
  const server = await startServerProcess()
  try {
    const { key } = await ownerWithProject(server.url, 'shutdown')
    const recorder = new Recorder(await connect(server.url, key))
    expect(await subscribe(recorder.socket, '@shutdown/demo')).toMatchObject({ ok: true })
    expect(await server.stop('SIGTERM')).toBe(0)
    await recorder.until(() => recorder.disconnectReason !== null, 'disconnect')
    // Closed by the server going away, not a revocation: clients may reconnect elsewhere.
    expect(recorder.disconnectReason).toBe('transport close')
    recorder.socket.disconnect()
  } finally {
    await server.stop('SIGKILL')
    rmSync(server.dataDir, { recursive: true, force: true })
  }
})
