// Handshake: `io(url, { auth: { token } })` with a session token or API key. A refusal
// reaches the client as `connect_error` whose `data` is the usual {message, code}, plus
// `retryAfter` (seconds) when rate limited.
//
// The Socket.IO CONNECT counts against the same budget as an HTTP request: the user's when
// the token is good, the IP's when it is not (guessing tokens costs like guessing over
// HTTP). The Engine.IO handshake before it was already counted per IP (engine-gate.ts).
import type { ConnectErrorData } from '../../shared/events.js'
import { ContentdError, type ErrorCode } from '../../shared/errors.js'
import { ipSubject, userSubject, type Limiter } from '../limits/limiter.js'
import type { Logger } from '../logger.js'
import type { Identities } from '../services/identity.js'
import { clientAddress } from './client-address.js'
import { createHash } from 'node:crypto'
import { looksLikeJwt } from '../services/app-tokens.js'
import type { Identity } from '../services/identity.js'
import type { ConnectionSlots } from './connection-slots.js'
import type { RealtimeSocket } from './types.js'

export type RefusalError = Error & { data: ConnectErrorData }

export function refusal (code: ErrorCode, detail?: string, retryAfter?: number): RefusalError {
  const body = new ContentdError(code, detail).toBody()
  return Object.assign(new Error(body.message), { data: retryAfter === undefined ? body : { ...body, retryAfter } })
}

export interface HandshakeOptions {
  identities: Identities
  slots: ConnectionSlots
  limiter: Limiter
  trustProxy: boolean | number
  logger: Logger
}

export function handshake ({ identities, slots, limiter, trustProxy, logger }: HandshakeOptions) {
  return async (socket: RealtimeSocket, next: (err?: Error) => void): Promise<void> => {
    const auth: unknown = socket.handshake.auth
    const token = typeof auth === 'object' && auth !== null && 'token' in auth && typeof auth.token === 'string' && auth.token !== ''
      ? auth.token
      : null
    try {
      // [rules, issue 31] An app user's JWT: verified at each subscribe against the project it
      // names (subscriptions.ts); until then a stand-in, counted per IP as an unknown caller is.
      const result = token !== null && looksLikeJwt(token) ? { identity: appStandIn(clientAddress(socket.request, trustProxy)), failure: null } : await identities.resolve(token)
      const subject = result.identity && !result.identity.app ? userSubject(result.identity.user.id) : ipSubject(clientAddress(socket.request, trustProxy))
      const wait = await limiter.take(subject)
      if (wait !== null) { next(refusal('RATE_LIMITED', undefined, wait)); return }
      if (!result.identity) { next(refusal(result.failure)); return }
      const slot = slots.take(result.identity.user.id, socket)
      if (slot === 'full') { next(refusal('TOO_MANY_CONNECTIONS', `at most ${slots.limit} per user`)); return }
      // The client left during the lookups: Socket.IO drops the socket whatever we say.
      if (slot === 'closed') { next(new Error('connection closed during the handshake')); return }
      socket.data.identity = result.identity
      socket.data.token = token as string
      next()
    } catch (e) {
      logger.error({ err: e }, 'socket handshake failed')
      next(refusal('STORE_UNAVAILABLE'))
    }
  }
}

/**
 * [rules, issue 31] The identity of a socket presenting an app token, before any project
 * verified it. Unverified, so counted by the client's address: connection slots
 * (SOCKET_CONNECTIONS_PER_IDENTITY) and unsent bytes are per IP for app sockets, and random
 * strings shaped like JWTs cannot each open a new allowance.
 */
function appStandIn (address: string): Identity {
  const id = `app-ip:${createHash('sha256').update(address).digest('base64url').slice(0, 22)}`
  return { user: { id, username: id, passwordHash: '', createdAt: '' }, session: null, key: null, credentialHash: id, app: { sub: '' } }
}
