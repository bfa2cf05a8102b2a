// Many concurrent JSON requests through a bounded pool of keep-alive sockets (node:http),
// so "500 at once" means 500 requests in flight at the server's door, not 500 sockets
// fighting for two shared cores.
import { Agent, request } from 'node:http'

export interface PooledClient {
  post (url: string, token: string, body: unknown): Promise<{ status: number, body: unknown, etag: string | undefined }>
  close (): void
}

export function pooledClient (maxSockets = 32): PooledClient {
  const agent = new Agent({ keepAlive: true, maxSockets })
  return {
    post (url, token, body) {
      const payload = JSON.stringify(body)
      return new Promise((resolve, reject) => {
        const req = request(url, {
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
        }, res => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => { text += chunk })
          res.on('end', () => {
            let parsed: unknown
            try { parsed = JSON.parse(text) } catch { parsed = text }
            resolve({ status: res.statusCode ?? 0, body: parsed, etag: res.headers.etag })
          })
          res.on('error', reject)
        })
        req.on('error', reject)
        req.end(payload)
      })
    },
    close () { agent.destroy() }
  }
}
