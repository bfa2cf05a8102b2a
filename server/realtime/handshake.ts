// Handshake: `io(url, { auth: { token } })` with a session token or API key. A refusal
// reaches the client as `connect_error` whose `data` is the usual {message, code}.
import { ContentdError, type ErrorCode } from '../../shared/errors.js'
import type { Logger } from '../logger.js'
import type { Identities } from '../services/identity.js'
import type { RealtimeSocket } from './types.js'

export type RefusalError = Error & { data: { message: string, code: ErrorCode } }

export function refusal (code: ErrorCode, detail?: string): RefusalError {
  const body = new ContentdError(code, detail).toBody()
  return Object.assign(new Error(body.message), { data: body })
}

/** Counts open connections per user on this node, to bound them. */
export class ConnectionCounter {
  private readonly counts = new Map<string, number>()

  constructor (private readonly limit: number) {}

  /** Takes a place for the user; returns the release function, or null when full. */
  reserve (userId: string): (() => void) | null {
    const count = this.counts.get(userId) ?? 0
    if (count >= this.limit) return null
    this.counts.set(userId, count + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (this.counts.get(userId) ?? 1) - 1
      if (left <= 0) this.counts.delete(userId)
      else this.counts.set(userId, left)
    }
  }
}

export function handshake (identities: Identities, counter: ConnectionCounter, limit: number, logger: Logger) {
  return async (socket: RealtimeSocket, next: (err?: Error) => void): Promise<void> => {
    const auth: unknown = socket.handshake.auth
    const token = typeof auth === 'object' && auth !== null && 'token' in auth && typeof auth.token === 'string' && auth.token !== ''
      ? auth.token
      : null
    try {
      const result = await identities.resolve(token)
      if (!result.identity) { next(refusal(result.failure)); return }
      const release = counter.reserve(result.identity.user.id)
      if (!release) { next(refusal('TOO_MANY_CONNECTIONS', `at most ${limit} per user`)); return }
      // Released on whichever comes first; a handshake abandoned midway never 'disconnect's.
      socket.once('disconnect', release)
      socket.conn.once('close', release)
      socket.data.identity = result.identity
      socket.data.token = token as string
      next()
    } catch (e) {
      logger.error({ err: e }, 'socket handshake failed')
      next(refusal('STORE_UNAVAILABLE'))
    }
  }
}
