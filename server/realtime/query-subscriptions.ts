// Socket.IO live queries (docs/design.md §16): `subscribe { project, path, query }` and
// `unsubscribe { project, path }`. Each subscription is one watcher of the node's shared
// result for that query (server/queries/query-hub.ts); this file is only the protocol:
// checks, the ack, `query` events with `prev`, and ending them when access ends.
//
// Bounded (docs/design.md §13b): at most QUERY_SUBSCRIPTIONS_PER_CONNECTION per connection
// (TOO_MANY_SUBSCRIPTIONS past it); the hub bounds distinct results per project.
import { requireKeyScope } from '../auth/rights.js'
import { ContentdError, isContentdError, type ErrorBody } from '../../shared/errors.js'
import { isPlainObject } from '../../shared/json.js'
import { formatProjectRef, projectRefHalves } from '../../shared/project-ref.js'
import { formatPath, parsePath } from '../../shared/path.js'
import { parseQuery, publicQuery, type QueryPlan } from '../../shared/query.js'
import { QUERY_EVENT, type QuerySubscribeAck } from '../../shared/api/queries.js'
import type { Logger } from '../logger.js'
import type { QueryEvent, QueryHub } from '../queries/query-hub.js'
import { socketQueryPayload } from '../queries/query-wire.js'
import type { AccessEvent } from '../services/access-events.js'
import type { GrantSource, LiveGrant } from '../services/access-recheck.js'
import type { Identities } from '../services/identity.js'
import type { Projects } from '../services/projects.js'
import type { Reply } from './event-router.js'
import type { AppUsersOn } from './path-subscriptions.js'
import { PreEncoded } from './pre-encoded.js'
import { failure, failureOf } from './replies.js'
import { recheckAppReads } from './app-read-recheck.js'
import type { RealtimeSocket } from './types.js'

const SUBSCRIBE_MEMBERS = ['project', 'path', 'query']
const UNSUBSCRIBE_MEMBERS = ['project', 'path']

/** A subscribe for a live query names `query`; everything else is a project or path subscription. */
export function isQueryRequest (request: unknown): boolean {
  return isPlainObject(request) && 'query' in request
}

class QuerySubscription {
  state: 'pending' | 'active' | 'ended' = 'pending'
  projectId: string | null = null
  /** The version of the last event (or the ack) sent: the next event's `prev`. */
  prev = 0
  /** Events heard before the ack went out; sent right after it, in order. */
  held: QueryEvent[] | null = []
  close: () => void = () => {}

  constructor (readonly socket: RealtimeSocket, readonly ref: string, readonly path: string) {}

  deliver (event: QueryEvent): void {
    if (this.state === 'ended') return
    if (this.held) { this.held.push(event); return }
    // Serialized once per event and distinct prev for all of the result's subscribers (query-wire.ts).
    const payload = new PreEncoded(socketQueryPayload(event, this.ref, this.path, this.prev))
    this.prev = event.version
    this.socket.emit(QUERY_EVENT, payload)
  }

  /** The ack is out: what came meanwhile follows it. */
  release (): void {
    const held = this.held ?? []
    this.held = null
    for (const event of held) this.deliver(event)
  }
}

export class QuerySubscriptions implements GrantSource {
  private readonly connections = new Map<RealtimeSocket, Map<string, QuerySubscription>>()

  constructor (
    private readonly hub: QueryHub,
    private readonly projectService: Projects,
    private readonly identities: Identities,
    private readonly perConnection: number,
    private readonly logger: Logger,
    /** [rules, issue 31] App users (docs/design.md §17); without it an app socket's query subscribe is INVALID_TOKEN. */
    private readonly appUsers?: AppUsersOn
  ) {}

  async subscribe (socket: RealtimeSocket, request: unknown, reply: Reply): Promise<void> {
    if (!isPlainObject(request)) { reply(failure('INVALID_BODY', 'subscribe needs { project, path, query }')); return }
    const unknown = Object.keys(request).filter(member => !SUBSCRIBE_MEMBERS.includes(member))
    if (unknown.length > 0) { reply(failure('INVALID_BODY', `unknown members: ${unknown.join(', ')}`)); return }
    const ref = projectRefHalves(request.project)
    if (!ref) { reply(failure('INVALID_BODY', 'subscribe needs { project: "@user/slug", path, query }')); return }
    if (!ref.owner.startsWith('@')) { reply(failure('INVALID_USERNAME')); return }
    let segments: string[]
    let plan: QueryPlan
    try {
      segments = parsePath(request.path)
      plan = parseQuery(request.query)
    } catch (e) {
      if (isContentdError(e)) { reply(failureOf(e.toBody())); return }
      throw e
    }
    const key = formatProjectRef(ref.owner, ref.slug)
    const path = formatPath(segments)
    const mine = this.connectionOf(socket)
    const id = `${key}\n${path}`
    const current = mine.get(id)
    if (!current && mine.size >= this.perConnection) {
      reply(failure('TOO_MANY_SUBSCRIPTIONS', `at most ${this.perConnection} live queries per connection`))
      return
    }
    // Subscribing again to the same (project, path) replaces the subscription (as in §15).
    if (current) this.end(current)
    const subscription = new QuerySubscription(socket, key, path)
    mine.set(id, subscription)
    try {
      let project
      if (socket.data.identity.app !== undefined) {
        // [rules, issue 31] An app user: its token verified against the project, `.read` at the path (§17).
        if (!this.appUsers) throw new ContentdError('INVALID_TOKEN')
        project = await this.projectService.find(ref.owner, ref.slug)
        subscription.projectId = project.id
        this.appUsers.adopt(socket, await this.appUsers.rules.requireLiveRead(project, socket.data.token, segments))
      } else {
        const resolved = await this.identities.resolve(socket.data.token)
        if (!resolved.identity) throw new ContentdError(resolved.failure)
        project = await this.projectService.find(ref.owner, ref.slug)
        subscription.projectId = project.id
        await this.projectService.authorize(resolved.identity, project, 'read')
        requireKeyScope(resolved.identity.key, { kind: 'read', path: segments })
      }
      if (subscription.state !== 'pending') { reply(failureOf(new ContentdError('SUBSCRIPTION_CANCELLED').toBody())); return }
      const open = await this.hub.open(project.id, path, plan, event => subscription.deliver(event))
      if (subscription.state !== 'pending') { open.close(); reply(failureOf(new ContentdError('SUBSCRIPTION_CANCELLED').toBody())); return }
      subscription.close = open.close
      subscription.state = 'active'
      subscription.prev = open.version
      const ack: QuerySubscribeAck = { ok: true, project: key, path, query: publicQuery(plan), version: open.version, items: open.items }
      reply(ack)
      subscription.release()
    } catch (e) {
      if (!isContentdError(e)) this.logger.error({ err: e }, 'query subscribe failed')
      this.end(subscription)
      reply(failureOf(isContentdError(e) ? e.toBody() : new ContentdError('INTERNAL_ERROR').toBody()))
    }
  }

  /** `unsubscribe { project, path }` of a live query; false when this connection has none there. */
  unsubscribe (socket: RealtimeSocket, request: unknown, reply: Reply): boolean {
    if (!isPlainObject(request) || typeof request.path !== 'string') return false
    const ref = projectRefHalves(request.project)
    if (!ref) return false
    const subscription = this.connections.get(socket)?.get(`${formatProjectRef(ref.owner, ref.slug)}\n${request.path}`)
    if (!subscription) return false
    const unknown = Object.keys(request).filter(member => !UNSUBSCRIBE_MEMBERS.includes(member))
    if (unknown.length > 0) { reply(failure('INVALID_BODY', `unknown members: ${unknown.join(', ')}`)); return true }
    this.end(subscription)
    reply({ ok: true })
    return true
  }

  forget (socket: RealtimeSocket): void {
    for (const subscription of [...this.connections.get(socket)?.values() ?? []]) this.end(subscription)
    this.connections.delete(socket)
  }

  * grants (): Iterable<LiveGrant> {
    for (const [socket, mine] of this.connections) {
      const identity = socket.data.identity
      if (!identity) continue
      for (const subscription of mine.values()) {
        if (subscription.projectId !== null) yield { identity, projectId: subscription.projectId }
      }
    }
  }

  /** Ends the live queries an access event takes away (a revoked credential disconnects the socket: forget). */
  applyAccessEvent (event: AccessEvent): void {
    // A revoked credential disconnects the socket itself; a change of rules is recheckRules'.
    if (event.kind === 'credential-revoked' || event.kind === 'rules-changed') return
    for (const [socket, mine] of this.connections) {
      for (const subscription of [...mine.values()]) {
        if (subscription.projectId !== event.projectId) continue
        if (event.kind === 'member-removed' && socket.data.identity.user.id !== event.userId) continue
        const reason = new ContentdError(event.kind === 'member-removed' ? 'FORBIDDEN' : 'PROJECT_NOT_FOUND').toBody()
        this.end(subscription, reason)
      }
    }
  }

  /**
   * [rules, issue 31] The project's rules or trust setting changed: each app user's live query
   * on it is decided again (token, `.read` at its path); a refused one ends with `revoked`.
   */
  recheckRules (projectId: string): void {
    recheckAppReads(this.connections, projectId, this.appUsers?.rules, (subscription, reason) => this.end(subscription, reason))
  }

  get size (): number {
    let n = 0
    for (const mine of this.connections.values()) n += mine.size
    return n
  }

  private connectionOf (socket: RealtimeSocket): Map<string, QuerySubscription> {
    let mine = this.connections.get(socket)
    if (!mine) { mine = new Map(); this.connections.set(socket, mine) }
    return mine
  }

  /** Ends one subscription; with `reason`, an active one tells its client (`revoked` naming it). */
  private end (subscription: QuerySubscription, reason?: ErrorBody): void {
    if (subscription.state === 'ended') return
    const wasActive = subscription.state === 'active'
    subscription.state = 'ended'
    subscription.close()
    const mine = this.connections.get(subscription.socket)
    const id = `${subscription.ref}\n${subscription.path}`
    if (mine?.get(id) === subscription) mine.delete(id)
    if (reason && wasActive && subscription.socket.connected) {
      // `revoked` naming the project, as for a project subscription (docs/design.md §7).
      subscription.socket.emit('revoked', { ...reason, project: subscription.ref })
    }
  }
}
