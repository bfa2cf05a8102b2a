// The streams that live inside HTTP responses (Server-Sent Events, docs/design.md §9) that are
// open on this node: so shutdown can end them (each holds its connection open), a user's
// open streams are bounded, and their access is re-checked (access-recheck.ts). What they
// stream comes from the change feed (server/feed/), not from here.
import type { GrantSource, LiveGrant } from './access-recheck.js'

/** Something that can be told to stop at shutdown (an open stream). */
export interface Closable { close (): void }

export class OpenStreams implements GrantSource {
  /** Open streams, with what each rests on (re-checked by access-recheck.ts). */
  private readonly open = new Map<Closable, LiveGrant>()
  private readonly perUser = new Map<string, number>()

  /**
   * Registers an open stream so that shutdown can end it and its access is re-checked; null,
   * registering nothing, when the user already has `limit` open on this node.
   */
  track (stream: Closable, grant: LiveGrant, limit: number): (() => void) | null {
    const userId = grant.identity.user.id
    const held = this.perUser.get(userId) ?? 0
    if (held >= limit) return null
    this.perUser.set(userId, held + 1)
    this.open.set(stream, grant)
    return () => {
      if (!this.open.delete(stream)) return
      const left = (this.perUser.get(userId) ?? 1) - 1
      if (left === 0) this.perUser.delete(userId)
      else this.perUser.set(userId, left)
    }
  }

  /** Shutdown: ends every open stream (clients reconnect, elsewhere, with Last-Event-ID). */
  closeAll (): void {
    for (const stream of [...this.open.keys()]) stream.close()
  }

  grants (): Iterable<LiveGrant> {
    return this.open.values()
  }

  get count (): number {
    return this.open.size
  }
}
