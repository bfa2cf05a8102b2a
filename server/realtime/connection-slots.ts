// SOCKET_CONNECTIONS_PER_IDENTITY: how many connections one user may hold on this node. A
// slot belongs to one socket and lives exactly as long as its connection: it is given back
// on the socket's 'disconnect' and on its connection's 'close', whichever comes first, and
// never taken for a connection that already closed (a client can close in the middle of
// the handshake, while its token is being looked up). Slots whose connection is gone are
// also dropped whenever a user reaches the limit, so only live sockets ever count.
import type { RealtimeSocket } from './types.js'

export type SlotResult = 'taken' | 'full' | 'closed'

export class ConnectionSlots {
  private readonly held = new Map<string, Set<RealtimeSocket>>()
  private total = 0

  /** `onChange` hears the number of slots held on this node (for /metrics). */
  constructor (readonly limit: number, private readonly onChange: (total: number) => void = () => {}) {}

  take (userId: string, socket: RealtimeSocket): SlotResult {
    if (socket.conn.readyState !== 'open') return 'closed'
    let mine = this.held.get(userId)
    if (mine && mine.size >= this.limit) {
      for (const other of mine) if (other.conn.readyState !== 'open') this.drop(userId, other)
      mine = this.held.get(userId)
    }
    if (mine && mine.size >= this.limit) return 'full'
    if (!mine) { mine = new Set(); this.held.set(userId, mine) }
    mine.add(socket)
    this.changed(1)
    const release = () => this.drop(userId, socket)
    socket.once('disconnect', release)
    socket.conn.once('close', release)
    return 'taken'
  }

  private drop (userId: string, socket: RealtimeSocket): void {
    const mine = this.held.get(userId)
    if (!mine?.delete(socket)) return
    if (mine.size === 0) this.held.delete(userId)
    this.changed(-1)
  }

  private changed (by: number): void {
    this.total += by
    this.onChange(this.total)
  }
}
