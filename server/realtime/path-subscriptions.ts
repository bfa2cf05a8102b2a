// Socket.IO subscriptions to one path (docs/design.md §15): `subscribe {project, path, since?}`
// and `unsubscribe {project, path}`. A connection may hold several, one per (project, path)
// (subscribing again replaces it), besides its whole-project subscriptions; together they
// count against SOCKET_SUBSCRIPTIONS_PER_CONNECTION. Every `change` sent carries
// `subscription` (the path) and `prev` (the version of what was sent before on it: the ack,
// or the previous change), so a client sees a lost event as `prev` ≠ its last version.
//
// A key narrowed to paths may subscribe at or below one of them (§12). Each subscription's
// changes come from a PathFollower (services/path-follower.ts), which hears the project's
// committed changes through services.feed and reads what it missed through the path
// index; the value at the path is all that is ever sent.
import { requireKeyScope } from '../auth/rights.js'
import { EVENTS, type EventFailure, type RevokedEvent } from '../../shared/events.js'
import { ContentdError, isContentdError, type ErrorBody } from '../../shared/errors.js'
import { valueAtPath, type PathChange, type PathChangeEvent } from '../../shared/live-path.js'
import { dotSegments, formatPath, parsePath } from '../../shared/path.js'
import { formatProjectRef } from '../../shared/project-ref.js'
import type { Logger } from '../logger.js'
import type { AccessEvent } from '../services/access-events.js'
import type { GrantSource, LiveGrant } from '../services/access-recheck.js'
import type { Identities } from '../services/identity.js'
import type { AppRules } from '../services/app-rules.js'
import type { AppUser } from '../services/app-tokens.js'
import type { ChangeSource } from '../feed/change-feed.js'
import { PathFollower } from '../services/path-follower.js'
import type { Projects } from '../services/projects.js'
import { readPathChanges } from '../store/path-changes.js'
import type { ContentStorage, ProjectRecord } from '../store/types.js'
import type { Reply } from './event-router.js'
import { unknownMembersError } from './payload.js'
import { failure, failureOf } from './replies.js'
import { projectRefOf } from './subscriptions.js'
import { recheckAppReads } from './app-read-recheck.js'
import type { RealtimeSocket } from './types.js'

/** Changes a resume ack may carry; past them (or past CHANGES_PAGE_BYTES) it is a snapshot instead. */
const RESUME_PAGE = 1000

export interface PathSubscriptionOptions {
  store: Pick<ContentStorage, 'readContent' | 'readPathEntries' | 'readContentAt'>
  projects: Projects
  identities: Identities
  feed: ChangeSource
  /** SOCKET_SUBSCRIPTIONS_PER_CONNECTION, shared with whole-project subscriptions. */
  perConnection: number
  /** How many whole-project subscriptions the connection holds (subscriptions.ts). */
  projectSubscriptions (socket: RealtimeSocket): number
  /** CHANGES_PAGE_BYTES. */
  pageBytes: number
  logger: Logger
  /** [rules, issue 31] App users (docs/design.md §17); without it an app socket's path subscribe is INVALID_TOKEN. */
  appUsers?: AppUsersOn
}

/** [rules, issue 31] What a subscription of an app user needs: the rules, and the socket's adoption (subscriptions.ts adoptAppUser). */
export interface AppUsersOn {
  rules: AppRules
  adopt (socket: RealtimeSocket, user: AppUser): void
}

/** A path subscription's ack (docs/design.md §15). */
export type PathSubscribeAck =
  | { ok: true, project: string, path: string, version: number, exists: boolean, value?: unknown }
  | { ok: true, project: string, path: string, version: number, changes: PathChangeEvent[] }
  | EventFailure

class PathSubscription {
  state: 'pending' | 'active' | 'ended' = 'pending'
  projectId: string | null = null
  follower: PathFollower | null = null
  /** The version of what was last sent on this subscription (ack or change): the next `prev`. */
  prev = 0

  constructor (readonly socket: RealtimeSocket, readonly ref: string, readonly path: string) {}

  get key (): string { return keyOf(this.ref, this.path) }
}

const keyOf = (ref: string, path: string) => `${ref}\n${path}`
const CANCELLED = new ContentdError('SUBSCRIPTION_CANCELLED').toBody()

export class PathSubscriptions implements GrantSource {
  private readonly connections = new Map<RealtimeSocket, Map<string, PathSubscription>>()

  constructor (private readonly options: PathSubscriptionOptions) {}

  /** Whether a subscribe or unsubscribe names a path (then it is this module's). */
  static names (request: unknown): boolean {
    return typeof request === 'object' && request !== null && 'path' in request
  }

  /** How many path subscriptions the connection holds (they count against the shared limit). */
  count (socket: RealtimeSocket): number {
    return this.connections.get(socket)?.size ?? 0
  }

  async subscribe (socket: RealtimeSocket, request: unknown, reply: Reply): Promise<void> {
    const unknown = unknownMembersError(EVENTS.subscribe, request)
    if (unknown) { reply(failureOf(unknown.toBody())); return }
    const ref = projectRefOf(request)
    if (!ref) { reply(failure('INVALID_BODY', 'subscribe needs { project: "@user/slug", path }')); return }
    if (!ref.owner.startsWith('@')) { reply(failure('INVALID_USERNAME')); return }
    const path = canonicalPathOf(request, reply)
    if (path === null) return
    const since = (request as { since?: unknown }).since
    if (since !== undefined && !(typeof since === 'number' && Number.isSafeInteger(since) && since >= 0)) {
      reply(failure('INVALID_VERSION', 'since must be a non-negative integer such as 0 or 42'))
      return
    }
    const projectRef = formatProjectRef(ref.owner, ref.slug)
    const mine = this.connectionOf(socket)
    const current = mine.get(keyOf(projectRef, path))
    if (!current && mine.size + this.options.projectSubscriptions(socket) >= this.options.perConnection) {
      reply(failure('TOO_MANY_SUBSCRIPTIONS', `at most ${this.options.perConnection}`))
      return
    }
    if (current) this.end(current, CANCELLED, false)
    const subscription = new PathSubscription(socket, projectRef, path)
    mine.set(subscription.key, subscription)
    try {
      reply(await this.establish(subscription, ref, since))
    } catch (error) {
      if (!isContentdError(error)) this.options.logger.error({ err: error }, 'path subscribe failed')
      const body = isContentdError(error) ? error.toBody() : new ContentdError('INTERNAL_ERROR').toBody()
      this.end(subscription, body, false)
      reply(failureOf(body))
    }
  }

  unsubscribe (socket: RealtimeSocket, request: unknown, reply: Reply): void {
    const unknown = unknownMembersError(EVENTS.unsubscribe, request)
    if (unknown) { reply(failureOf(unknown.toBody())); return }
    const ref = projectRefOf(request)
    if (!ref) { reply(failure('INVALID_BODY', 'unsubscribe needs { project: "@user/slug", path }')); return }
    const path = canonicalPathOf(request, reply)
    if (path === null) return
    const subscription = this.connections.get(socket)?.get(keyOf(formatProjectRef(ref.owner, ref.slug), path))
    if (subscription) this.end(subscription, CANCELLED, false)
    reply({ ok: true })
  }

  forget (socket: RealtimeSocket): void {
    for (const subscription of [...this.connections.get(socket)?.values() ?? []]) this.end(subscription, CANCELLED, false)
    this.connections.delete(socket)
  }

  * grants (): Iterable<LiveGrant> {
    for (const [socket, mine] of this.connections) {
      const identity = socket.data.identity
      if (!identity) continue
      for (const subscription of mine.values()) if (subscription.projectId !== null) yield { identity, projectId: subscription.projectId }
    }
  }

  applyAccessEvent (event: AccessEvent): void {
    // A revoked credential disconnects the socket itself (subscriptions.ts); a change of rules is recheckRules'.
    if (event.kind === 'credential-revoked' || event.kind === 'rules-changed') return
    for (const [socket, mine] of this.connections) {
      for (const subscription of [...mine.values()]) {
        if (subscription.projectId !== event.projectId) continue
        if (event.kind === 'project-deleted') this.end(subscription, new ContentdError('PROJECT_NOT_FOUND').toBody(), true)
        else if (socket.data.identity.user.id === event.userId) this.end(subscription, new ContentdError('FORBIDDEN').toBody(), true)
      }
    }
  }

  /**
   * [rules, issue 31] The project's rules or trust setting changed: each app user's path
   * subscription to it is decided again (token, `.read` at its path, on the current content);
   * a refused one ends with `revoked` naming the project and path, carrying the refusal.
   */
  recheckRules (projectId: string): void {
    recheckAppReads(this.connections, projectId, this.options.appUsers?.rules, (subscription, reason) => this.end(subscription, reason, true))
  }

  close (): void {
    for (const mine of this.connections.values()) for (const subscription of mine.values()) subscription.follower?.stop()
    this.connections.clear()
  }

  /** Checks access, starts following, and builds the ack: a snapshot of the path, or the changes after `since`. */
  private async establish (subscription: PathSubscription, ref: { owner: string, slug: string }, since: number | undefined): Promise<PathSubscribeAck> {
    const { socket } = subscription
    if (socket.data.identity.app !== undefined) {
      // [rules, issue 31] An app user: its token verified against the project, `.read` at the path (§17).
      const { appUsers } = this.options
      if (!appUsers) throw new ContentdError('INVALID_TOKEN')
      const project = await this.options.projects.find(ref.owner, ref.slug)
      subscription.projectId = project.id
      appUsers.adopt(socket, await appUsers.rules.requireLiveRead(project, socket.data.token, dotSegments(subscription.path)))
      if (subscription.state !== 'pending') return failureOf(CANCELLED)
      return await this.follow(subscription, project, since)
    }
    const resolved = await this.options.identities.resolve(socket.data.token)
    if (!resolved.identity) throw new ContentdError(resolved.failure)
    const project = await this.options.projects.find(ref.owner, ref.slug)
    subscription.projectId = project.id
    await this.options.projects.authorize(resolved.identity, project, 'read')
    // A narrowed key watches at or below its paths (docs/design.md §12, §15).
    requireKeyScope(resolved.identity.key, { kind: 'read', path: dotSegments(subscription.path) })
    if (subscription.state !== 'pending') return failureOf(CANCELLED)
    return await this.follow(subscription, project, since)
  }

  /** Starts following once access is granted, and builds the ack. */
  private async follow (subscription: PathSubscription, project: ProjectRecord, since: number | undefined): Promise<PathSubscribeAck> {
    // Following before reading: a change committed during the read is held, not missed.
    const follower = new PathFollower({
      feed: this.options.feed,
      store: this.options.store,
      project,
      path: subscription.path,
      pageBytes: this.options.pageBytes,
      send: change => this.send(subscription, change),
      fail: error => this.end(subscription, isContentdError(error) ? error.toBody() : new ContentdError('INTERNAL_ERROR').toBody(), true)
    })
    subscription.follower = follower
    if (since !== undefined) {
      const resumed = await this.resume(subscription, project, since)
      if (resumed) return resumed
    }
    return await this.snapshot(subscription, project)
  }

  /** The changes after `since`, or null when a snapshot answers better (more than a page, or a projection that needs the content). */
  private async resume (subscription: PathSubscription, project: ProjectRecord, since: number): Promise<PathSubscribeAck | null> {
    const page = await readPathChanges(this.options.store, project, { path: subscription.path, since, limit: RESUME_PAGE, pageBytes: this.options.pageBytes, contentReads: 0 })
    if (page.more || page.needsContent) return null
    if (subscription.state !== 'pending') return failureOf(CANCELLED)
    let prev = since
    const changes = page.changes.map(change => {
      const sent = { ...change, subscription: subscription.path, prev }
      prev = change.version
      return sent
    })
    this.activate(subscription, page.version)
    return { ok: true, project: subscription.ref, path: subscription.path, version: page.version, changes }
  }

  private async snapshot (subscription: PathSubscription, project: ProjectRecord): Promise<PathSubscribeAck> {
    const snapshot = await this.options.store.readContent(project.id)
    if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
    if (subscription.state !== 'pending') return failureOf(CANCELLED)
    // Read now, in the same turn: the store's cached document may change after an await.
    const at = valueAtPath(snapshot.content, dotSegments(subscription.path))
    const ack: PathSubscribeAck = { ok: true, project: subscription.ref, path: subscription.path, version: snapshot.version, exists: at.exists }
    if (at.exists) ack.value = structuredClone(at.value)
    this.activate(subscription, snapshot.version)
    return ack
  }

  private activate (subscription: PathSubscription, version: number): void {
    subscription.state = 'active'
    subscription.prev = version
    subscription.follower?.start(version)
  }

  private send (subscription: PathSubscription, change: PathChange): void {
    if (subscription.state !== 'active') return
    subscription.socket.emit(EVENTS.change, { ...change, subscription: subscription.path, prev: subscription.prev })
    subscription.prev = change.version
  }

  private connectionOf (socket: RealtimeSocket): Map<string, PathSubscription> {
    let mine = this.connections.get(socket)
    if (!mine) { mine = new Map(); this.connections.set(socket, mine) }
    return mine
  }

  /** Ends one subscription; tells the client with `revoked` (project and path) when access ended. */
  private end (subscription: PathSubscription, reason: ErrorBody, tell: boolean): void {
    if (subscription.state === 'ended') return
    const wasActive = subscription.state === 'active'
    subscription.state = 'ended'
    subscription.follower?.stop()
    const mine = this.connections.get(subscription.socket)
    if (mine?.get(subscription.key) === subscription) mine.delete(subscription.key)
    if (wasActive && tell && subscription.socket.connected) {
      const event: RevokedEvent & { path: string } = { ...reason, project: subscription.ref, path: subscription.path }
      subscription.socket.emit(EVENTS.revoked, event)
    }
  }
}

/** The request's `path` in its canonical form, or null after replying INVALID_PATH. */
function canonicalPathOf (request: unknown, reply: Reply): string | null {
  try {
    return formatPath(parsePath((request as { path: unknown }).path))
  } catch (error) {
    reply(failureOf(isContentdError(error) ? error.toBody() : new ContentdError('INVALID_PATH').toBody()))
    return null
  }
}
