// The change feed (issue 27; after PocketBase's transport-free tools/subscriptions broker):
// the one object through which every transport hears of committed changes and of access
// taken away (and, between nodes, of webhooks created or deleted and of presence events).
// Socket.IO rooms (realtime/feed-relay.ts), Server-Sent Events streams (http/routes/events.ts)
// and webhooks (webhooks/recent-changes.ts) all subscribe here; none listens to the store or
// to Redis on its own.
//
// Sources: this node's commits (store.onCommit) and access events (services), and, through a
// relay (redis-relay.ts), those of the other nodes. Each change is handed to its project's
// listeners as ONE entry object whose JSON text is made at most once (wire.ts), so every
// consumer sends the same characters without serializing them again.
//
// Fan-out comes after the writer's answer (issue 27): a local commit is queued and handed to
// listeners in the next check phase of the event loop (setImmediate), by which time the
// request that made it has had its response written. The queue keeps commit order, and one
// turn hands over every commit of a group commit.
//
// The feed delivers in the order changes reach this node, possibly twice and, across nodes,
// out of version order; consumers order by version (realtime/room-joins.ts,
// http/change-stream.ts), each against its own starting point (a snapshot, Last-Event-ID).
import type { ChangeEntry } from '../../shared/events.js'
import type { AccessEvent, AccessEvents } from '../services/access-events.js'
import type { CommittedChange, Store } from '../store/types.js'
import { rememberWire } from './wire.js'

/**
 * `committedAt`: performance.now() when this node's store committed the change (CommittedChange);
 * absent for another node's change, whose commit this node's clock did not see.
 */
export type ChangeListener = (change: ChangeEntry, committedAt?: number) => void
export type AnyChangeListener = (projectId: string, change: ChangeEntry) => void
/** Which projects' changes a listener to every project wants (the others are not handed to it). */
export type ProjectFilter = (projectId: string) => boolean
export type AccessListener = (event: AccessEvent) => void
/** A presence event announced on another node, as its JSON text (realtime/presence.ts). */
export type PresenceListener = (projectId: string, json: string) => void

/** Carries this node's changes and access events to the other nodes (redis-relay.ts). */
export interface NodeRelay {
  sendChange (projectId: string, change: ChangeEntry): void
  sendAccess (event: AccessEvent): void
  /** A webhook of the project was created or deleted on this node (webhooks/hooked-projects.ts). */
  sendWebhooks (projectId: string): void
  /** A presence event this node sent to its own sockets, for the other nodes' (realtime/presence.ts). */
  sendPresence (projectId: string, json: string): void
}

/** What consumers need of the feed: the shape LiveFeed.onChange had, so callers rewire in one line. */
export interface ChangeSource {
  subscribe (projectId: string, listener: ChangeListener): () => void
}

export class ChangeFeed implements ChangeSource {
  private readonly byProject = new Map<string, Set<ChangeListener>>()
  private readonly everyProject = new Map<AnyChangeListener, ProjectFilter>()
  private readonly accessListeners = new Set<AccessListener>()
  private readonly webhookListeners = new Set<(projectId: string) => void>()
  private readonly presenceListeners = new Set<PresenceListener>()
  private relay: NodeRelay | null = null
  private readonly queued: CommittedChange[] = []
  private flushing = false

  constructor (store: Pick<Store, 'onCommit'>, accessEvents: AccessEvents) {
    store.onCommit(committed => this.local(committed))
    accessEvents.on(event => {
      this.publishAccess(event)
      this.relay?.sendAccess(event)
    })
  }

  /** With several nodes: local changes and access events go out through `relay` too. */
  relayTo (relay: NodeRelay | null): void {
    this.relay = relay
  }

  /** Listens to one project's changes; returns the function that stops listening. */
  subscribe (projectId: string, listener: ChangeListener): () => void {
    let listeners = this.byProject.get(projectId)
    if (!listeners) { listeners = new Set(); this.byProject.set(projectId, listeners) }
    listeners.add(listener)
    return () => {
      listeners.delete(listener)
      if (listeners.size === 0 && this.byProject.get(projectId) === listeners) this.byProject.delete(projectId)
    }
  }

  /**
   * Listens to the changes of every project `wants` (the webhooks' recent changes: the projects
   * with webhooks). A change no listener wants costs nothing here (flush).
   */
  subscribeAll (listener: AnyChangeListener, wants: ProjectFilter = () => true): () => void {
    this.everyProject.set(listener, wants)
    return () => { this.everyProject.delete(listener) }
  }

  onAccess (listener: AccessListener): () => void {
    this.accessListeners.add(listener)
    return () => { this.accessListeners.delete(listener) }
  }

  /**
   * This node created or deleted a webhook of the project: the other nodes hear of it through
   * onWebhooks, so each keeps its set of projects with webhooks current (webhooks/hooked-projects.ts).
   */
  announceWebhooks (projectId: string): void {
    this.relay?.sendWebhooks(projectId)
  }

  /** Hears of webhooks created or deleted on other nodes (from the relay). */
  onWebhooks (listener: (projectId: string) => void): () => void {
    this.webhookListeners.add(listener)
    return () => { this.webhookListeners.delete(listener) }
  }

  /** Another node created or deleted a webhook of the project (from the relay). */
  publishWebhooks (projectId: string): void {
    for (const listener of [...this.webhookListeners]) {
      try { listener(projectId) } catch { /* as below */ }
    }
  }

  /**
   * This node announced a presence event to its own sockets: the other nodes hear it through
   * onPresence and announce it to theirs (presence is not content: no version, no log).
   */
  announcePresence (projectId: string, json: string): void {
    this.relay?.sendPresence(projectId, json)
  }

  /** Hears presence events announced on other nodes (from the relay). */
  onPresence (listener: PresenceListener): () => void {
    this.presenceListeners.add(listener)
    return () => { this.presenceListeners.delete(listener) }
  }

  /** A presence event announced on another node (from the relay). */
  publishPresence (projectId: string, json: string): void {
    for (const listener of [...this.presenceListeners]) {
      try { listener(projectId, json) } catch { /* as below */ }
    }
  }

  hasSubscribers (projectId: string): boolean {
    return this.byProject.has(projectId)
  }

  /** A change committed on another node (from the relay): for this node's listeners only. */
  publishChange (projectId: string, change: ChangeEntry, committedAt?: number): void {
    for (const [listener, wants] of this.everyProject) {
      try {
        if (wants(projectId)) listener(projectId, change)
      } catch { /* one consumer's failure is its own */ }
    }
    const listeners = this.byProject.get(projectId)
    if (!listeners) return
    for (const listener of [...listeners]) {
      try { listener(change, committedAt) } catch { /* a stream's failure ends that stream only */ }
    }
  }

  /** An access event from another node (from the relay), or this node's own. */
  publishAccess (event: AccessEvent): void {
    for (const listener of [...this.accessListeners]) {
      try { listener(event) } catch { /* as above */ }
    }
  }

  private local (committed: CommittedChange): void {
    this.queued.push(committed)
    if (this.flushing) return
    this.flushing = true
    setImmediate(() => this.flush())
  }

  private flush (): void {
    this.flushing = false
    for (const { project, entry, wire, committedAt } of this.queued.splice(0)) {
      const projectId = project.id
      // No subscriber here, no other node, no listener wanting the project: nothing to hand
      // over, and its wire form is never registered (a WeakMap entry per write, issue 35).
      if (!this.relay && !this.byProject.has(projectId) && !this.anyWants(projectId)) continue
      if (wire) rememberWire(entry, wire)
      this.publishChange(projectId, entry, committedAt)
      this.relay?.sendChange(projectId, entry)
    }
  }

  private anyWants (projectId: string): boolean {
    for (const wants of this.everyProject.values()) {
      if (wants(projectId)) return true
    }
    return false
  }
}
