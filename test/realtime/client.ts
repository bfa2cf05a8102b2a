// socket.io-client helpers for the realtime tests: connect, subscribe, record events.
import { io, type Socket } from 'socket.io-client'
import type { ChangeEvent, RevokedEvent, SubscribeAck } from '../../shared/events.js'
import type { PresenceEvent } from '../../shared/presence.js'

export function openSocket (url: string, token?: string): Socket {
  return io(url, { auth: token === undefined ? {} : { token }, transports: ['websocket'], reconnection: false, forceNew: true })
}

/** Resolves once connected; rejects with the connect_error (its `data` is {message, code}). */
export function connected (socket: Socket): Promise<Socket> {
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket))
    socket.once('connect_error', reject)
  })
}

export async function connect (url: string, token: string): Promise<Socket> {
  return connected(openSocket(url, token))
}

export async function subscribe (socket: Socket, project: string): Promise<SubscribeAck> {
  return socket.timeout(10_000).emitWithAck('subscribe', { project }) as Promise<SubscribeAck>
}

/** Everything a socket receives, with a way to wait for a condition on it. */
export class Recorder {
  readonly changes: ChangeEvent[] = []
  readonly revoked: RevokedEvent[] = []
  readonly presence: PresenceEvent[] = []
  /** When each `presence` event arrived (performance.now()), by index. */
  readonly presenceTimes: number[] = []
  disconnectReason: string | null = null
  private waiters: Array<() => void> = []

  constructor (readonly socket: Socket) {
    socket.on('change', (c: ChangeEvent) => { this.changes.push(c); this.wake() })
    socket.on('revoked', (r: RevokedEvent) => { this.revoked.push(r); this.wake() })
    socket.on('presence', (p: PresenceEvent) => { this.presence.push(p); this.presenceTimes.push(performance.now()); this.wake() })
    socket.on('disconnect', (reason: string) => { this.disconnectReason = reason; this.wake() })
  }

  /** Waits (bounded) until `condition` holds; fails with `what` otherwise. */
  until (condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (condition()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.changes.map(c => c.version))}`)), timeoutMs)
      const check = () => {
        if (!condition()) { this.waiters.push(check); return }
        clearTimeout(timer)
        resolve()
      }
      this.waiters.push(check)
    })
  }

  untilVersion (version: number): Promise<void> {
    return this.until(() => this.changes.some(c => c.version >= version), `version ${version}`)
  }

  private wake (): void {
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w()
  }
}
