// Checks on every Engine.IO request, before Engine.IO allocates anything for it (an
// Engine.IO middleware runs ahead of its own handling, for long-polling requests and
// WebSocket upgrades alike):
// - `Origin` against CORS_ORIGINS when the client sends one (a browser always does; a
//   missing Origin is a non-browser client, which CORS does not concern): 403
//   ORIGIN_NOT_ALLOWED. CORS headers alone would only stop a browser from reading the
//   answers, not from connecting and subscribing. A page of this very server (the
//   dashboard: Origin's host is the Host it asked) is same-origin, not cross-origin, and is
//   always allowed.
// - A new Engine.IO session (a request without `sid`) takes one point of the client IP's
//   RATE_LIMIT budget, the one anonymous HTTP requests draw from; over it: 429 RATE_LIMITED
//   with Retry-After, so handshakes from one address are not free.
// Answers are HTTP responses like the API's: {message, code} as JSON.
import { STATUS_CODES, ServerResponse, type IncomingMessage } from 'node:http'
import type { ErrorCode } from '../../shared/errors.js'
import { preparedError } from '../limits/prepared-error.js'
import { ipSubject, type Limiter } from '../limits/limiter.js'
import type { Logger } from '../logger.js'
import { clientAddress } from './client-address.js'

export interface EngineGateOptions {
  corsOrigins: '*' | string[]
  limiter: Limiter
  trustProxy: boolean | number
  logger: Logger
}

type EngineMiddleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void

export function engineGate ({ corsOrigins, limiter, trustProxy, logger }: EngineGateOptions): EngineMiddleware {
  const allowed = corsOrigins === '*' ? null : new Set(corsOrigins)
  return (req, res, next) => {
    const origin = req.headers.origin
    if (allowed && origin !== undefined && !allowed.has(origin) && !sameOrigin(origin, req.headers.host)) {
      answer(req, res, 'ORIGIN_NOT_ALLOWED', {})
      return
    }
    if (new URL(req.url ?? '/', 'http://localhost').searchParams.has('sid')) { next(); return }
    limiter.take(ipSubject(clientAddress(req, trustProxy))).then(wait => {
      if (wait === null) next()
      else answer(req, res, 'RATE_LIMITED', { 'Retry-After': String(wait) })
    }, (e: unknown) => {
      logger.error({ err: e }, 'rate limit check failed for a Socket.IO handshake')
      answer(req, res, 'STORE_UNAVAILABLE', {})
    })
  }
}

function sameOrigin (origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase()
  } catch {
    return false
  }
}

/** Answers and ends the request; for an upgrade, on the raw connection (Engine.IO's `res` there writes nothing). */
function answer (req: IncomingMessage, res: ServerResponse, code: ErrorCode, headers: Record<string, string>): void {
  // Made once per code: a client refused a handshake keeps asking.
  const { status, body } = preparedError(code)
  const all = { 'Content-Type': 'application/json', 'Content-Length': String(body.length), ...headers }
  if (res instanceof ServerResponse) {
    res.writeHead(status, all).end(body)
    return
  }
  const socket = req.socket
  socket.on('error', () => {})
  socket.once('finish', () => socket.destroy())
  const head = Object.entries({ Connection: 'close', ...all }).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  // Head and prepared body in one write: end() uncorks.
  socket.cork()
  socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${head}\r\n`)
  socket.end(body)
}
