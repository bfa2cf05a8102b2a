// Who on this node is subscribed to what: subscribe/unsubscribe requests, delivery of
// committed changes to each project's feed, and ending subscriptions when access ends.
import { EVENTS, type ChangeEvent, type RevokedEvent, type SubscribeAck, type UnsubscribeAck } from '../../shared/events.js'
import { ContentdError, isContentdError, type ErrorBody, type ErrorCode } from '../../shared/errors.js'
import type { Logger } from '../logger.js'
import type { AccessEvent } from '../services/access-events.js'
import type { Identities } from '../services/identity.js'
import { projectRef, type Projects } from '../services/projects.js'
import type { Store } from '../store/types.js'
import { ProjectFeed, type FeedMember } from './project-feed.js'
import type { RealtimeServer, RealtimeSocket } from './types.js'

const GAP_TIMEOUT_MS = 2000
const HISTORY_SIZE = 256
const SNAPSHOT_ATTEMPTS = 3

export const roomOf = (projectId: string) => `project:${projectId}`

class Subscription implements FeedMember {
  /** Set when access ended while the subscribe request was still being answered. */
  cancelled: ErrorBody | null = null

  constructor (readonly socket: RealtimeSocket, readonly projectId: string, readonly ref: string) {}

  join (): void {
    void this.socket.join(roomOf(this.projectId))
  }

  send (change: ChangeEvent): void {
    this.socket.emit(EVENTS.change, change)
  }
}

interface ProjectEntry {
  feed: ProjectFeed
  subscriptions: Set<Subscription>
}

const failure = (code: ErrorCode, message?: string): { ok: false } & ErrorBody =>
  ({ ok: false, ...(message ? { code, message } : new ContentdError(code).toBody()) })

const noReply = () => {}

export class Subscriptions {
  private readonly projects = new Map<string, ProjectEntry>()
  private readonly bySocket = new Map<RealtimeSocket, Map<string, Subscription>>()

  constructor (
    private readonly io: RealtimeServer,
    private readonly store: Store,
    private readonly projectService: Projects,
    private readonly identities: Identities,
    private readonly limitPerConnection: number,
    private readonly logger: Logger
  ) {}

  /** A committed change (from this node or another) for whoever here subscribes to it. */
  deliver (projectId: string, change: ChangeEvent): void {
    this.projects.get(projectId)?.feed.receive(change)
  }

  hasSubscribers (projectId: string): boolean {
    return this.projects.has(projectId)
  }

  async subscribe (socket: RealtimeSocket, request: unknown, ack: unknown): Promise<void> {
    const reply = typeof ack === 'function' ? ack as (reply: SubscribeAck) => void : noReply
    const ref = projectRefOf(request)
    if (!ref) { reply(failure('INVALID_BODY', 'subscribe needs { project: "@user/slug" }')); return }
    let subscription: Subscription | null = null
    try {
      // The credential may have been revoked or may have expired since the handshake.
      const current = await this.identities.resolve(socket.data.token)
      if (!current.identity) {
        reply(failure(current.failure))
        this.revokeSocket(socket, current.failure)
        return
      }
      const project = await this.projectService.find(ref.owner, ref.slug)
      const mine = this.socketSubscriptions(socket)
      const previous = mine.get(project.id)
      if (previous) this.end(previous, null)
      if (mine.size >= this.limitPerConnection) {
        reply(failure('TOO_MANY_SUBSCRIPTIONS', `${new ContentdError('TOO_MANY_SUBSCRIPTIONS').message}: at most ${this.limitPerConnection}`))
        return
      }
      // Registered before the access check, so a revocation racing with it is not missed.
      subscription = this.register(socket, project.id, projectRef(project))
      await this.projectService.authorize(current.identity, project, 'read')
      for (let attempt = 0; attempt < SNAPSHOT_ATTEMPTS; attempt++) {
        const snapshot = await this.store.readContent(project.id)
        if (subscription.cancelled) { reply({ ok: false, ...subscription.cancelled }); return }
        if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
        if (!socket.connected) { this.end(subscription, null); return }
        const entry = this.projects.get(project.id) as ProjectEntry
        // Same tick as the read: no commit can be delivered in between (commits are handled
        // in later turns of the event loop), and the ack is encoded now, before the store's
        // cached document can change under it.
        const activated = entry.feed.activate(subscription, snapshot.version, () => {
          reply({ ok: true, project: projectRef(project), version: snapshot.version, content: snapshot.content })
        })
        if (activated !== 'stale') return
      }
      throw new ContentdError('STORE_UNAVAILABLE')
    } catch (e) {
      if (subscription) this.end(subscription, null)
      if (isContentdError(e)) { reply({ ok: false, ...e.toBody() }); return }
      this.logger.error({ err: e }, 'subscribe failed')
      reply(failure('INTERNAL_ERROR'))
    }
  }

  unsubscribe (socket: RealtimeSocket, request: unknown, ack: unknown): void {
    const reply = typeof ack === 'function' ? ack as (reply: UnsubscribeAck) => void : noReply
    const ref = projectRefOf(request)
    if (!ref) { reply(failure('INVALID_BODY', 'unsubscribe needs { project: "@user/slug" }')); return }
    const canonical = `@${ref.owner.replace(/^@/, '').toLowerCase()}/${ref.slug}`
    for (const subscription of this.bySocket.get(socket)?.values() ?? []) {
      if (subscription.ref === canonical) this.end(subscription, null)
    }
    reply({ ok: true })
  }

  /** The socket is gone: forget its subscriptions. */
  forget (socket: RealtimeSocket): void {
    for (const subscription of [...this.bySocket.get(socket)?.values() ?? []]) this.end(subscription, null)
    this.bySocket.delete(socket)
  }

  /** Ends what an access event takes away, on this node. */
  applyAccessEvent (event: AccessEvent): void {
    switch (event.kind) {
      case 'credential-revoked':
        for (const socket of this.io.of('/').sockets.values()) {
          if (socket.data.identity?.credentialHash === event.credentialHash) this.revokeSocket(socket, 'INVALID_TOKEN')
        }
        return
      case 'member-removed':
        for (const subscription of [...this.projects.get(event.projectId)?.subscriptions ?? []]) {
          if (subscription.socket.data.identity.user.id === event.userId) this.end(subscription, new ContentdError('FORBIDDEN').toBody())
        }
        return
      case 'project-deleted':
        for (const subscription of [...this.projects.get(event.projectId)?.subscriptions ?? []]) {
          this.end(subscription, new ContentdError('PROJECT_NOT_FOUND').toBody())
        }
    }
  }

  /** Tells the client why, then disconnects it (the 'revoked' packet is flushed first). */
  revokeSocket (socket: RealtimeSocket, code: ErrorCode): void {
    const event: RevokedEvent = new ContentdError(code).toBody()
    socket.emit(EVENTS.revoked, event)
    socket.disconnect(true)
  }

  close (): void {
    for (const entry of this.projects.values()) entry.feed.close()
    this.projects.clear()
    this.bySocket.clear()
  }

  private socketSubscriptions (socket: RealtimeSocket): Map<string, Subscription> {
    let mine = this.bySocket.get(socket)
    if (!mine) { mine = new Map(); this.bySocket.set(socket, mine) }
    return mine
  }

  private register (socket: RealtimeSocket, projectId: string, ref: string): Subscription {
    const subscription = new Subscription(socket, projectId, ref)
    this.socketSubscriptions(socket).set(projectId, subscription)
    let entry = this.projects.get(projectId)
    if (!entry) {
      const room = roomOf(projectId)
      const feed = new ProjectFeed({
        // Local only: other nodes get the change through their own feeds, in their order.
        broadcast: change => { this.io.local.to(room).emit(EVENTS.change, change) },
        gapTimeoutMs: GAP_TIMEOUT_MS,
        historySize: HISTORY_SIZE
      })
      entry = { feed, subscriptions: new Set() }
      this.projects.set(projectId, entry)
    }
    entry.subscriptions.add(subscription)
    return subscription
  }

  /** Ends one subscription; with `reason`, tells the client with a `revoked` event. */
  private end (subscription: Subscription, reason: ErrorBody | null): void {
    const { socket, projectId } = subscription
    subscription.cancelled ??= reason ?? new ContentdError('FORBIDDEN').toBody()
    const mine = this.bySocket.get(socket)
    if (mine?.get(projectId) === subscription) mine.delete(projectId)
    void socket.leave(roomOf(projectId))
    const entry = this.projects.get(projectId)
    if (entry?.subscriptions.delete(subscription)) {
      entry.feed.remove(subscription)
      if (entry.subscriptions.size === 0) {
        entry.feed.close()
        this.projects.delete(projectId)
      }
    }
    if (reason && socket.connected) socket.emit(EVENTS.revoked, { ...reason, project: subscription.ref })
  }
}

/** `{ project: "@alice/demo" }` → its two halves (the owner keeps its "@" for Projects.find). */
function projectRefOf (request: unknown): { owner: string, slug: string } | null {
  if (typeof request !== 'object' || request === null || !('project' in request)) return null
  const ref = request.project
  if (typeof ref !== 'string') return null
  const slash = ref.indexOf('/')
  if (slash <= 0 || slash === ref.length - 1) return null
  return { owner: ref.slice(0, slash), slug: ref.slice(slash + 1) }
}
