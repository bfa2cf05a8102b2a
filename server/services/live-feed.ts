// Committed changes and access events for the streams that live inside HTTP responses
// (Server-Sent Events, docs/design.md §9). Local ones come straight from the store and the
// services; the realtime layer adds those of other nodes, which reach it through the Redis
// adapter (the very path Socket.IO's rooms use), so a stream on any node hears every change.
import type { ChangeEntry } from '../../shared/events.js'
import type { Store } from '../store/types.js'
import type { AccessEvent, AccessEvents } from './access-events.js'
import type { GrantSource, LiveGrant } from './access-recheck.js'

export type ChangeListener = (change: ChangeEntry) => void
export type AccessListener = (event: AccessEvent) => void

/** Something that can be told to stop at shutdown (an open stream). */
export interface Closable { close (): void }

export class LiveFeed implements GrantSource {
  private readonly byProject = new Map<string, Set<ChangeListener>>()
  private readonly accessListeners = new Set<AccessListener>()
  /** Open streams, with what each rests on (re-checked by access-recheck.ts). */
  private readonly open = new Map<Closable, LiveGrant>()
  private readonly perUser = new Map<string, number>()

  constructor (store: Store, accessEvents: AccessEvents) {
    store.onCommit(committed => this.publishChange(committed.project.id, committed.entry))
    accessEvents.on(event => this.publishAccess(event))
  }

  /** A committed change, from this node or another; listeners de-duplicate by version. */
  publishChange (projectId: string, change: ChangeEntry): void {
    const listeners = this.byProject.get(projectId)
    if (!listeners) return
    for (const listener of [...listeners]) {
      try { listener(change) } catch { /* a stream's failure ends that stream only */ }
    }
  }

  publishAccess (event: AccessEvent): void {
    for (const listener of [...this.accessListeners]) {
      try { listener(event) } catch { /* as above */ }
    }
  }

  /** Listens to one project's changes; returns the function that stops listening. */
  onChange (projectId: string, listener: ChangeListener): () => void {
    let listeners = this.byProject.get(projectId)
    if (!listeners) { listeners = new Set(); this.byProject.set(projectId, listeners) }
    listeners.add(listener)
    return () => {
      listeners.delete(listener)
      if (listeners.size === 0 && this.byProject.get(projectId) === listeners) this.byProject.delete(projectId)
    }
  }

  onAccess (listener: AccessListener): () => void {
    this.accessListeners.add(listener)
    return () => { this.accessListeners.delete(listener) }
  }

  /**
   * Registers an open stream so that shutdown can end it (it holds its connection open) and
   * its access is re-checked; null, registering nothing, when the user already has `limit`
   * open on this node.
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

  get openStreams (): number {
    return this.open.size
  }
}
