// A TCP proxy in front of a server process whose connections a test can cut: for clients
// that must reconnect and resume (test/client/resume.test.ts, test/limits/change-log-pages.test.ts).
import { createServer, connect as connectTcp, type Server, type Socket } from 'node:net'

/** A TCP proxy to the server whose connections the test can cut, and whose door it can close for a while. */
export class CuttableProxy {
  private readonly connections = new Set<Socket>()
  private readonly server: Server
  private refusing = false
  port = 0

  constructor (private readonly targetPort: number) {
    this.server = createServer(client => {
      if (this.refusing) { client.destroy(); return }
      const upstream = connectTcp(this.targetPort, '127.0.0.1')
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        a.pipe(b)
        a.on('error', () => b.destroy())
        a.on('close', () => b.destroy())
      }
      this.connections.add(client)
      client.on('close', () => this.connections.delete(client))
    })
  }

  async start (): Promise<void> {
    await new Promise<void>(resolve => this.server.listen(0, '127.0.0.1', resolve))
    this.port = (this.server.address() as { port: number }).port
  }

  /** Drops every connection and refuses new ones until `reopen()`. */
  cut (): void {
    this.refusing = true
    for (const c of this.connections) c.destroy()
  }

  reopen (): void { this.refusing = false }

  async stop (): Promise<void> {
    this.cut()
    await new Promise(resolve => this.server.close(resolve))
  }
}
