// One Server-Sent Events stream of a project's changes, as the bench's scenarios read them
// (resume.mjs, sse-cpu.mjs): plain node:http, so no client library's pooling or parsing sits
// between the server and the receipt's time.
import { request } from 'node:http'

/**
 * One SSE stream over node:http (no connection pool in the way). `onEvent(id, at)` for each
 * event with an id; resolves once the response headers arrived.
 */
export function openStream (base, path, token, lastEventId, onEvent) {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${token}`, accept: 'text/event-stream' }
    if (lastEventId !== undefined) headers['last-event-id'] = String(lastEventId)
    const req = request(base + path, { headers, agent: false }, res => {
      if (res.statusCode !== 200) { reject(new Error(`events: status ${res.statusCode}`)); res.resume(); return }
      let buffer = ''
      res.setEncoding('utf8')
      res.on('data', chunk => {
        const at = performance.now()
        buffer += chunk
        let end
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const match = /^id: (\d+)$/m.exec(frame)
          if (match) onEvent(Number(match[1]), at)
        }
      })
      res.on('error', () => {})
      resolve({ close: () => req.destroy() })
    })
    req.on('error', reject)
    req.end()
  })
}
