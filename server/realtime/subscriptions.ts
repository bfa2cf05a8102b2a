// Who on this node is subscribed to what: subscribe/unsubscribe requests, delivery of
// committed changes to each project's room (from the change feed), and ending subscriptions when access ends.
//
// A connection has at most one subscription per project. Subscribing is idempotent and
// race-free: a subscribe that arrives while another for the same project is still being
// answered (access check, snapshot read) does not start a second one — it waits for the
// first and gets the same answer. Subscribing again once the subscription is in place
// replaces it with a fresh one (a new snapshot), within the user's re-subscribe budget
// (resubscribe-budget.ts), which all of the user's connections share.
import { requireKeyScope } from '../auth/rights.js'
import { EVENTS, type ChangeEvent, type RevokedEvent, type SubscribeAck } from '../../shared/events.js'
import { ContentdError, isContentdError, type ErrorBody, type ErrorCode } from '../../shared/errors.js'
import { formatProjectRef, projectRefHalves } from '../../shared/project-ref.js'
import { userSubject } from '../limits/limiter.js'
import type { Tarpit } from '../limits/tarpit.js'
import type { ChangeSource } from '../feed/change-feed.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../observability/metrics.js'
import type { AccessEvent } from '../services/access-events.js'
import type { GrantSource, LiveGrant } from '../services/access-recheck.js'
import type { Identities } from '../services/identity.js'
import type { AppRules } from '../services/app-rules.js'
import { CLOCK_LEEWAY_S, type AppUser } from '../services/app-tokens.js'
import { atTime } from '../services/expiry.js'
import type { Projects } from '../services/projects.js'
import { entriesArrayBytes, resumeAckJson } from '../store/change-pages.js'
import type { ChangesJsonPage, ContentSnapshot, ProjectRecord, Store } from '../store/types.js'
import type { Reply } from './event-router.js'
import { RoomJoins, type RoomMember } from './room-joins.js'
import { relayToRoom, roomBroadcast, roomOf, sendChange } from './feed-relay.js'
import { unknownMembersError } from './payload.js'
import { PreEncoded } from './pre-encoded.js'
import { failure, failureOf, rateLimited } from './replies.js'
import { ResubscribeBudget, type Charge } from './resubscribe-budget.js'
import type { RealtimeServer, RealtimeSocket } from './types.js'

const GAP_TIMEOUT_MS = 2000
/** Log entries read at once when a subscribe resumes from `since`. */
const RESUME_PAGE = 1000
const HISTORY_SIZE = 256
const SNAPSHOT_ATTEMPTS = 3

export { roomOf }

export interface SubscriptionLimits {
  perConnection: number
  resubscribeWindowMs: number
  resubscribeBytes: number
}

class Subscription implements RoomMember {
  state: 'pending' | 'active' | 'ended' = 'pending'
  /** Set once the project is known (the subscription is then in its project's entry). */
  projectId: string | null = null
  /** Requests waiting for the snapshot: the one that opened the subscription, then any that came while it was pending. */
  waiters: Reply[] = []
  /** What the request that opened it was charged against the user's re-subscribe budget. */
  charge: Charge | null = null

  /** `ref` is the canonical "@owner/slug", the key of the connection's subscriptions. */
  constructor (readonly socket: RealtimeSocket, readonly ref: string) {}

  join (): void {
    void this.socket.join(roomOf(this.projectId as string))
  }

  send (change: ChangeEvent): void {
    sendChange(this.socket, change)
  }
}

/** Hears when subscriptions start and end (presence.ts keeps its members by them). */
export interface SubscriptionObserver {
  /** The subscription is in place: its snapshot was just acknowledged. */
  started (socket: RealtimeSocket, ref: string, projectId: string): void
  /** It ended; `replaced` when a new subscribe of the same connection to the project took its place. */
  ended (socket: RealtimeSocket, ref: string, replaced: boolean): void
}

interface ProjectEntry {
  joins: RoomJoins
  subscriptions: Set<Subscription>
  /** Stops the room hearing the change feed. */
  stopListening: () => void
}

interface ConnectionState {
  subscriptions: Map<string, Subscription>
}

const CANCELLED = new ContentdError('SUBSCRIPTION_CANCELLED').toBody()

export class Subscriptions implements GrantSource {
  private readonly projects = new Map<string, ProjectEntry>()
  private readonly connections = new Map<RealtimeSocket, ConnectionState>()
  private observer: SubscriptionObserver | null = null
  private alsoCounted: (socket: RealtimeSocket) => number = () => 0
  private readonly budget: ResubscribeBudget
  private appRules: AppRules | null = null
  /** [rules, issue 31] App sockets whose token's expiry is already scheduled. */
  private readonly expiring = new WeakSet<RealtimeSocket>()

  constructor (
    private readonly io: RealtimeServer,
    private readonly store: Store,
    private readonly projectService: Projects,
    private readonly identities: Identities,
    private readonly limits: SubscriptionLimits,
    private readonly logger: Logger,
    /** Holds re-subscribe refusals back like every other RATE_LIMITED answer (RATE_LIMIT_DELAY). */
    private readonly tarpit: Tarpit | null,
    /** The change feed the rooms read (server/feed/). */
    private readonly changes: ChangeSource,
    private readonly metrics?: Metrics
  ) {
    this.budget = new ResubscribeBudget(limits.resubscribeWindowMs, limits.resubscribeBytes)
  }

  /** The connection's other subscriptions that count against the same limit (path subscriptions, docs/design.md §15). */
  countAlso (count: (socket: RealtimeSocket) => number): void {
    this.alsoCounted = count
  }

  /** How many whole-project subscriptions the connection holds. */
  count (socket: RealtimeSocket): number {
    return this.connections.get(socket)?.subscriptions.size ?? 0
  }

  observe (observer: SubscriptionObserver): void {
    this.observer = observer
  }

  /** The project id of the connection's subscription to `ref` (canonical) once it is in place, else null. */
  activeProjectId (socket: RealtimeSocket, ref: string): string | null {
    const subscription = this.connections.get(socket)?.subscriptions.get(ref)
    return subscription?.state === 'active' ? subscription.projectId : null
  }

  async subscribe (socket: RealtimeSocket, request: unknown, reply: Reply): Promise<void> {
    const unknown = unknownMembersError(EVENTS.subscribe, request)
    if (unknown) { reply(failureOf(unknown.toBody())); return }
    const ref = projectRefOf(request)
    if (!ref) { reply(failure('INVALID_BODY', 'subscribe needs { project: "@user/slug" }')); return }
    if (!ref.owner.startsWith('@')) { reply(failure('INVALID_USERNAME')); return }
    const since = sinceOf(request)
    if (since === INVALID) { reply(failure('INVALID_VERSION', 'since must be a non-negative integer such as 0 or 42')); return }
    const key = formatProjectRef(ref.owner, ref.slug)
    const connection = this.connectionOf(socket)
    const current = connection.subscriptions.get(key)
    if (current?.state === 'pending') { current.waiters.push(reply); return }
    if (!current && connection.subscriptions.size + this.alsoCounted(socket) >= this.limits.perConnection) {
      reply(failure('TOO_MANY_SUBSCRIPTIONS', `at most ${this.limits.perConnection}`))
      return
    }
    const charge = this.budget.admit(userOf(socket), key)
    if ('wait' in charge) { await this.refuse(socket, reply, charge.wait); return }
    if (current) this.end(current, CANCELLED, false, true)
    const subscription = new Subscription(socket, key)
    subscription.charge = charge
    subscription.waiters.push(reply)
    connection.subscriptions.set(key, subscription)
    await this.establish(subscription, ref, since)
  }

  unsubscribe (socket: RealtimeSocket, request: unknown, reply: Reply): void {
    const unknown = unknownMembersError(EVENTS.unsubscribe, request)
    if (unknown) { reply(failureOf(unknown.toBody())); return }
    const ref = projectRefOf(request)
    if (!ref) { reply(failure('INVALID_BODY', 'unsubscribe needs { project: "@user/slug" }')); return }
    const subscription = this.connections.get(socket)?.subscriptions.get(formatProjectRef(ref.owner, ref.slug))
    if (subscription) this.end(subscription, CANCELLED, false)
    reply({ ok: true })
  }

  /** The socket is gone: forget its subscriptions. */
  forget (socket: RealtimeSocket): void {
    for (const subscription of [...this.connections.get(socket)?.subscriptions.values() ?? []]) this.end(subscription, CANCELLED, false)
    this.connections.delete(socket)
  }

  /** Every connection on this node and each of its subscriptions, for access-recheck.ts. */
  * grants (): Iterable<LiveGrant> {
    for (const socket of this.io.of('/').sockets.values()) {
      const identity = socket.data.identity
      if (!identity) continue
      yield { identity, projectId: null }
      for (const subscription of this.connections.get(socket)?.subscriptions.values() ?? []) {
        if (subscription.projectId !== null) yield { identity, projectId: subscription.projectId }
      }
    }
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
          if (subscription.socket.data.identity.user.id === event.userId) this.end(subscription, new ContentdError('FORBIDDEN').toBody(), true)
        }
        return
      case 'project-deleted':
        for (const subscription of [...this.projects.get(event.projectId)?.subscriptions ?? []]) {
          this.end(subscription, new ContentdError('PROJECT_NOT_FOUND').toBody(), true)
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
    for (const entry of this.projects.values()) { entry.stopListening(); entry.joins.close() }
    this.projects.clear()
    this.connections.clear()
  }

  /** [rules, issue 31] App users' tokens and rules (docs/design.md §17); without them app sockets subscribe to nothing. */
  useAppRules (appRules: AppRules): void {
    this.appRules = appRules
  }

  /**
   * [rules, issue 31] An app user may subscribe to a whole project with its token verified
   * against it (401 INVALID_TOKEN otherwise) and `.read` at the root, decided on the current
   * content; the socket is ended when the token expires (plus the 60 s leeway).
   */
  private async requireAppRead (socket: RealtimeSocket, project: ProjectRecord): Promise<void> {
    if (!this.appRules) throw new ContentdError('INVALID_TOKEN')
    this.adoptAppUser(socket, await this.appRules.requireLiveRead(project, socket.data.token, []))
  }

  /**
   * [rules, issue 31] A subscription (whole-project, path or query) verified the socket's app
   * token: presence names the app user by its verified sub (presence.ts), and the socket is
   * ended when the token expires (plus the 60 s leeway), once per socket (its token is fixed).
   */
  adoptAppUser (socket: RealtimeSocket, user: AppUser): void {
    socket.data.identity = { ...socket.data.identity, app: { sub: user.sub } }
    if (user.expiresAt === null || this.expiring.has(socket)) return
    this.expiring.add(socket)
    const cancel = atTime(user.expiresAt + CLOCK_LEEWAY_S * 1000, () => { this.revokeSocket(socket, 'INVALID_TOKEN') })
    socket.once('disconnect', cancel)
  }

  /**
   * [rules, issue 31] The project's rules or trust setting changed: each app user's
   * whole-project subscription to it is decided again (token, `.read` at the root); a refused
   * one ends with `revoked` carrying the refusal (RULES_DENIED with `path`, or INVALID_TOKEN).
   * Pending ones too: their first check may have been made with the rules before the change.
   */
  recheckRules (projectId: string): void {
    const { appRules } = this
    if (!appRules) return
    for (const subscription of [...this.projects.get(projectId)?.subscriptions ?? []]) {
      const { socket } = subscription
      if (subscription.state === 'ended' || socket.data.identity.app === undefined) continue
      appRules.requireLiveRead({ id: projectId }, socket.data.token, []).catch((error: unknown) => {
        this.end(subscription, isContentdError(error) ? error.toBody() : new ContentdError('INTERNAL_ERROR').toBody(), true)
      })
    }
  }

  /**
   * Checks access and takes the snapshot (or, with `since`, reads the changes after it from
   * the log, docs/design.md §9); answers every waiter, whatever happens.
   */
  private async establish (subscription: Subscription, ref: { owner: string, slug: string }, since: number | undefined): Promise<void> {
    const { socket } = subscription
    const pending = () => subscription.state === 'pending'
    try {
      // [rules, issue 31] An app user's token is verified against the project, below.
      const isApp = socket.data.identity.app !== undefined
      // The credential may have been revoked or may have expired since the handshake.
      const current = isApp ? null : await this.identities.resolve(socket.data.token)
      if (current && !current.identity) {
        this.end(subscription, new ContentdError(current.failure).toBody(), false)
        this.revokeSocket(socket, current.failure)
        return
      }
      if (!pending()) return
      const project = await this.projectService.find(ref.owner, ref.slug)
      if (!pending()) return
      // In the project's entry before the access check, so a revocation racing with it is not missed.
      const entry = this.attach(subscription, project.id)
      if (current?.identity) {
        await this.projectService.authorize(current.identity, project, 'read')
        // A subscription streams the whole content: never for a key narrowed to paths (docs/design.md §12).
        requireKeyScope(current.identity.key, { kind: 'whole' })
      } else {
        await this.requireAppRead(socket, project)
      }
      if (since !== undefined) { await this.resume(subscription, entry, project, since); return }
      for (let attempt = 0; attempt < SNAPSHOT_ATTEMPTS; attempt++) {
        const snapshot = await this.store.readContent(project.id)
        if (!pending()) return
        if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
        // Same tick as the read: no commit can be delivered in between (commits are handled
        // in later turns of the event loop), and the acks are encoded now, before the
        // store's cached document can change under them.
        const activated = entry.joins.activate(subscription, snapshot.version, () => {
          this.answer(subscription, snapshotAck(subscription.ref, snapshot), sizeOf(snapshot))
        })
        if (activated !== 'stale') return
      }
      throw new ContentdError('STORE_UNAVAILABLE')
    } catch (e) {
      if (!isContentdError(e)) this.logger.error({ err: e }, 'subscribe failed')
      this.end(subscription, isContentdError(e) ? e.toBody() : new ContentdError('INTERNAL_ERROR').toBody(), false)
    }
  }

  /**
   * Resume: the changes after `since`, one page of the log (at most CHANGES_PAGE_BYTES,
   * docs/design.md §13b), make the ack; the room (RoomJoins) then takes the subscription to the room
   * exactly at the last version read (as for a snapshot at that version), so live changes
   * follow without a gap or a repeat. When the log has more than one page, or the room has
   * moved on past what its history can bridge, the ack says `more: true` and the
   * subscription is not put in place: the client subscribes again from the last version it
   * got. So no ack holds more than a page, however long the log.
   */
  private async resume (subscription: Subscription, entry: ProjectEntry, project: ProjectRecord, since: number): Promise<void> {
    for (let attempt = 0; attempt < SNAPSHOT_ATTEMPTS; attempt++) {
      // The entries' JSON as stored goes into the ack as it is (resumeAck): no parse, no
      // serialization of a 7 MB entry (docs/design.md §13b).
      const page = await this.store.readChangesJson(project, since, RESUME_PAGE)
      if (subscription.state !== 'pending') return
      const { entries } = page
      const at = entries.at(-1)?.version ?? since
      const bytes = entriesArrayBytes(entries)
      if (page.more) { this.answerPage(subscription, resumeAck(page, subscription.ref, at, true), bytes); return }
      const activated = entry.joins.activate(subscription, at, () => this.answer(subscription, resumeAck(page, subscription.ref, at, false), bytes))
      if (activated !== 'stale') return
      // The room is ahead of this page: what was read goes out, the client asks for the rest.
      if (entries.length > 0) { this.answerPage(subscription, resumeAck(page, subscription.ref, at, true), bytes); return }
    }
    throw new ContentdError('STORE_UNAVAILABLE')
  }

  /**
   * A resume's page with more after it: every waiter gets it (within the re-subscribe
   * budget, as any ack), and the subscription ends without having started.
   */
  private answerPage (subscription: Subscription, ack: SubscribeAck | PreEncoded, bytes: number): void {
    const waiters = subscription.waiters
    subscription.waiters = []
    this.replyWithin(subscription, waiters, ack, bytes)
    this.end(subscription, CANCELLED, false)
  }

  /** The snapshot is ready: the subscription is in place, and every waiter within the budget gets it. */
  private answer (subscription: Subscription, ack: SubscribeAck | PreEncoded, bytes: number): void {
    subscription.state = 'active'
    this.observer?.started(subscription.socket, subscription.ref, subscription.projectId as string)
    const waiters = subscription.waiters
    subscription.waiters = []
    this.replyWithin(subscription, waiters, ack, bytes)
  }

  /** Answers the waiters of a subscribe, each within the user's re-subscribe budget. */
  private replyWithin (subscription: Subscription, waiters: Reply[], ack: SubscribeAck | PreEncoded, bytes: number): void {
    const user = userOf(subscription.socket)
    waiters.forEach((reply, index) => {
      // The first request was admitted (and charged) when it arrived; the ones that joined
      // it are admitted now, each snapshot counting.
      const charge = index === 0 && subscription.charge ? subscription.charge : this.budget.admit(user, subscription.ref)
      if ('wait' in charge) { void this.refuse(subscription.socket, reply, charge.wait); return }
      this.budget.settle(charge, bytes)
      reply(ack)
    })
  }

  /** Past the re-subscribe budget: RATE_LIMITED, once the tarpit lets it go. */
  private async refuse (socket: RealtimeSocket, reply: Reply, wait: number): Promise<void> {
    await this.tarpit?.hold(userSubject(userOf(socket)), wait)
    reply(rateLimited(wait))
  }

  private connectionOf (socket: RealtimeSocket): ConnectionState {
    let connection = this.connections.get(socket)
    if (!connection) {
      connection = { subscriptions: new Map() }
      this.connections.set(socket, connection)
    }
    return connection
  }

  private attach (subscription: Subscription, projectId: string): ProjectEntry {
    subscription.projectId = projectId
    let entry = this.projects.get(projectId)
    if (!entry) {
      const joins = new RoomJoins({
        // Local only: other nodes' rooms hear the change from their own feeds, in their order.
        broadcast: roomBroadcast(this.io, projectId, this.metrics),
        gapTimeoutMs: GAP_TIMEOUT_MS,
        historySize: HISTORY_SIZE
      })
      // Listening before the snapshot is read (attach comes first): no change is missed.
      const stopListening = relayToRoom(this.changes, projectId, joins)
      entry = { joins, subscriptions: new Set(), stopListening }
      this.projects.set(projectId, entry)
    }
    entry.subscriptions.add(subscription)
    return entry
  }

  /**
   * Ends one subscription. A pending one answers its waiters with `reason`; an active one
   * tells the client with a `revoked` event when `tell` is set (access ended). `replaced`:
   * a new subscription of the same connection to the project takes its place.
   */
  private end (subscription: Subscription, reason: ErrorBody, tell: boolean, replaced = false): void {
    if (subscription.state === 'ended') return
    const wasPending = subscription.state === 'pending'
    subscription.state = 'ended'
    const { socket, projectId, ref } = subscription
    const mine = this.connections.get(socket)?.subscriptions
    if (mine?.get(ref) === subscription) mine.delete(ref)
    if (projectId !== null) {
      void socket.leave(roomOf(projectId))
      const entry = this.projects.get(projectId)
      if (entry?.subscriptions.delete(subscription)) {
        entry.joins.remove(subscription)
        if (entry.subscriptions.size === 0) {
          entry.stopListening()
          entry.joins.close()
          this.projects.delete(projectId)
        }
      }
    }
    if (wasPending) {
      const waiters = subscription.waiters
      subscription.waiters = []
      for (const reply of waiters) reply(failureOf(reason))
    } else if (tell && socket.connected) {
      socket.emit(EVENTS.revoked, { ...reason, project: ref })
    }
    this.observer?.ended(socket, ref, replaced)
  }
}

const userOf = (socket: RealtimeSocket): string => socket.data.identity.user.id

/**
 * `{ ok: true, project, version, content }`; around the store's JSON text when it has it, so
 * the document is not serialized again (pre-encoded.ts).
 */
function snapshotAck (project: string, snapshot: ContentSnapshot): SubscribeAck | PreEncoded {
  const { version, content, json } = snapshot
  if (json === undefined) return { ok: true, project, version, content }
  return new PreEncoded(`{"ok":true,"project":${JSON.stringify(project)},"version":${version},"content":${json}}`)
}

/**
 * `{ ok: true, project, version, changes, more? }` around the entries' JSON text, the same
 * packet as for the equivalent object (pre-encoded.ts).
 */
function resumeAck (page: ChangesJsonPage, project: string, version: number, more: boolean): PreEncoded {
  return new PreEncoded(resumeAckJson(page, project, version, more))
}

/** Bytes of the snapshot as sent (the store usually has its JSON at hand). */
function sizeOf (snapshot: ContentSnapshot): number {
  return Buffer.byteLength(snapshot.json ?? JSON.stringify(snapshot.content))
}

/** `{ project: "@alice/demo" }` → its two halves (the owner keeps its "@" for Projects.find). */
export function projectRefOf (request: unknown): { owner: string, slug: string } | null {
  if (typeof request !== 'object' || request === null || !('project' in request)) return null
  return projectRefHalves(request.project)
}

const INVALID = Symbol('invalid since')

/** `since` of a subscribe: absent, a non-negative integer, or INVALID. */
function sinceOf (request: unknown): number | undefined | typeof INVALID {
  const since = (request as { since?: unknown }).since
  if (since === undefined) return undefined
  return typeof since === 'number' && Number.isSafeInteger(since) && since >= 0 ? since : INVALID
}

