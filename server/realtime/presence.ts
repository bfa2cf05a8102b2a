// Presence (docs/design.md §14): who is looking at a project right now, shared live with its
// subscribers on every node. Not content: nothing here touches the store, the project's
// version, the logs or webhooks.
//
// - `presence:set { project, state }` needs a subscription to the project that is in place;
//   the first one makes the connection a member (`join`), later ones `update` it, coalesced
//   (presence-member.ts).
// - `presence:list { project }` answers every live member on every node; read access is
//   enough, with or without a subscription.
// - Both need an unnarrowed key (KEY_SCOPE_DENIED before any other check, §13b).
// - `presence:leave { project }` takes the member out and keeps the subscription.
// - A member also leaves when its subscription ends (unsubscribe, access revoked, the
//   connection closed) and when its node dies (presence-redis.ts).
//
// The `presence` events go to a room of their own, `presence:<projectId>`, which a socket is
// in exactly while its subscription to the project is in place (told by subscriptions.ts),
// including while a re-subscribe replaces it: a re-subscribe neither drops the member nor
// makes the socket miss events.
//
// Rooms are this node's own (Socket.IO has no adapter between nodes, issue 27): a node sends
// each event it announces to its own room, then hands its JSON text to the change feed's
// relay (server/feed/redis-relay.ts), and every other node sends that same text to its room.
// The relay drops a node's own messages and keeps each node's in the order sent, so every
// subscriber gets each event once, in the order its node announced them.
import { EVENT_MEMBERS, EVENTS } from '../../shared/events.js'
import { ContentdError, isContentdError, type ErrorBody } from '../../shared/errors.js'
import { isPlainObject, type JsonObject } from '../../shared/json.js'
import { checkPresenceState, compareMembers, type PresenceChangeType, type PresenceEvent, type PresenceListAck } from '../../shared/presence.js'
import { requireKeyScope } from '../auth/rights.js'
import type { ChangeFeed } from '../feed/change-feed.js'
import type { Logger } from '../logger.js'
import { actorOf } from '../services/actor.js'
import type { Identities } from '../services/identity.js'
import type { Projects } from '../services/projects.js'
import type { EventHandler, Reply } from './event-router.js'
import { unknownMembersError } from './payload.js'
import { LocalMember, type MemberContext } from './presence-member.js'
import type { PresenceShare, SharedMember } from './presence-share.js'
import { PreEncoded } from './pre-encoded.js'
import { failure, failureOf } from './replies.js'
import { projectRefOf, type SubscriptionObserver, type Subscriptions } from './subscriptions.js'
import { formatProjectRef } from '../../shared/project-ref.js'
import type { RealtimeServer, RealtimeSocket } from './types.js'

export const presenceRoom = (projectId: string) => `presence:${projectId}`

export interface PresenceDependencies {
  io: RealtimeServer
  /** Carries this node's events to the other nodes and theirs here (with Redis; else nothing to carry). */
  feed: Pick<ChangeFeed, 'announcePresence' | 'onPresence'>
  share: PresenceShare
  subscriptions: Subscriptions
  projects: Projects
  identities: Identities
  logger: Logger
}

export interface PresenceLimits {
  /** PRESENCE_STATE_LIMIT: bytes of one state's JSON. */
  stateBytes: number
  /** PRESENCE_MEMBERS_LIMIT: members per project. */
  members: number
}

interface SocketPresence {
  /** The projects whose presence room the socket is in, by canonical reference. */
  rooms: Map<string, string>
  /** Its members, by canonical reference of their project. */
  members: Map<string, LocalMember>
}

interface PresenceRequest {
  ref: { owner: string, slug: string }
  /** Canonical "@owner/slug". */
  key: string
  state?: unknown
}

// A member whose subscription ended before its update went out.
const SUBSCRIPTION_ENDED = new ContentdError('NOT_SUBSCRIBED', 'the subscription ended').toBody()
// How long closing waits for leaves to reach the share (and the other nodes).
const CLOSE_GRACE_MS = 1000

export class Presence implements SubscriptionObserver {
  private readonly sockets = new Map<RealtimeSocket, SocketPresence>()
  /** Members leaving: closing waits for them. */
  private readonly leaving = new Set<Promise<void>>()
  /** Events announced in this turn of the event loop, sent at its end. */
  private announcements: Array<{ projectId: string, event: PresenceEvent, then?: (() => void) | undefined }> = []
  private readonly memberContext: MemberContext
  private readonly stopHearing: () => void

  constructor (private readonly deps: PresenceDependencies, private readonly limits: PresenceLimits) {
    this.memberContext = {
      share: deps.share,
      membersLimit: limits.members,
      logger: deps.logger,
      announce: (entry, type, then) => this.announce(entry, type, then)
    }
    // Other nodes' events, to this node's sockets in the room.
    this.stopHearing = deps.feed.onPresence((projectId, json) => this.sendToRoom(projectId, json))
  }

  /** The Socket.IO events it answers, for the event router. */
  handlers (): Record<string, EventHandler> {
    return {
      [EVENTS.presenceSet]: (socket, payload, reply) => this.answering(reply, () => this.set(socket, payload, reply)),
      [EVENTS.presenceList]: (socket, payload, reply) => this.answering(reply, () => this.list(socket, payload, reply)),
      [EVENTS.presenceLeave]: (socket, payload, reply) => this.answering(reply, () => this.leave(socket, payload, reply))
    }
  }

  started (socket: RealtimeSocket, ref: string, projectId: string): void {
    void socket.join(presenceRoom(projectId))
    this.of(socket).rooms.set(ref, projectId)
  }

  ended (socket: RealtimeSocket, ref: string, replaced: boolean): void {
    if (replaced) return
    const mine = this.sockets.get(socket)
    if (!mine) return
    const projectId = mine.rooms.get(ref)
    if (projectId !== undefined) {
      void socket.leave(presenceRoom(projectId))
      mine.rooms.delete(ref)
    }
    void this.end(mine, ref, SUBSCRIPTION_ENDED)
    if (mine.rooms.size === 0 && mine.members.size === 0) this.sockets.delete(socket)
  }

  /** The connection closed. */
  forget (socket: RealtimeSocket): void {
    const mine = this.sockets.get(socket)
    if (!mine) return
    for (const ref of [...mine.members.keys()]) void this.end(mine, ref, SUBSCRIPTION_ENDED)
    this.sockets.delete(socket)
  }

  /** After the connections were closed: lets their leaves reach the share, then closes it. */
  async close (): Promise<void> {
    for (const socket of [...this.sockets.keys()]) this.forget(socket)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled([...this.leaving]),
      new Promise<void>(resolve => { timer = setTimeout(resolve, CLOSE_GRACE_MS); timer.unref() })
    ])
    clearTimeout(timer)
    // The leaves just announced go out now, while the relay can still carry them.
    this.sendAnnouncements()
    this.stopHearing()
    await this.deps.share.close()
  }

  private async set (socket: RealtimeSocket, payload: unknown, reply: Reply): Promise<void> {
    requireUnnarrowedKey(socket)
    const request = readRequest(payload, EVENTS.presenceSet)
    const existing = this.sockets.get(socket)?.members.get(request.key)
    const projectId = existing ? existing.entry.projectId : this.deps.subscriptions.activeProjectId(socket, request.key)
    if (projectId === null) {
      // Errors as for subscribe first: a stranger learns no more than subscribing would tell.
      if (await this.readAccess(socket, request, reply) !== null) reply(failure('NOT_SUBSCRIBED', `subscribe to ${request.key} before presence:set`))
      return
    }
    checkPresenceState(request.state, this.limits.stateBytes)
    const state = request.state as JsonObject
    if (existing) { existing.set(state, reply); return }
    const mine = this.of(socket)
    const member: LocalMember = new LocalMember(this.memberContext, {
      projectId,
      project: request.key,
      // [rules, issue 31] An app user by its verified sub (docs/design.md §17); never the stand-in's id.
      member: { id: socket.id, actor: socket.data.identity.app ? { type: 'app', name: socket.data.identity.app.sub } : actorOf(socket.data.identity), state, since: new Date().toISOString() }
    }, () => {
      // Refused: a later presence:set may try to join again.
      if (mine.members.get(request.key) === member) mine.members.delete(request.key)
    })
    mine.members.set(request.key, member)
    member.join(reply)
  }

  private async list (socket: RealtimeSocket, payload: unknown, reply: Reply): Promise<void> {
    requireUnnarrowedKey(socket)
    const request = readRequest(payload, EVENTS.presenceList)
    const projectId = this.deps.subscriptions.activeProjectId(socket, request.key) ?? await this.readAccess(socket, request, reply)
    if (projectId === null) return
    let members
    try {
      members = (await this.deps.share.list(projectId)).sort(compareMembers)
    } catch (e) {
      this.deps.logger.error({ err: e }, 'presence: listing failed')
      reply(failure('STORE_UNAVAILABLE'))
      return
    }
    const limit = this.limits.members
    const ack: PresenceListAck = members.length > limit ? { ok: true, members: members.slice(0, limit), count: members.length } : { ok: true, members }
    reply(ack)
  }

  private async leave (socket: RealtimeSocket, payload: unknown, reply: Reply): Promise<void> {
    const request = readRequest(payload, EVENTS.presenceLeave)
    const mine = this.sockets.get(socket)
    if (mine) await this.end(mine, request.key, null)
    reply({ ok: true })
  }

  /**
   * Read access, checked as subscribe checks it (the credential again, then the project);
   * the project's id, or null after answering why not. A credential that stopped working
   * also ends the connection, as on subscribe.
   */
  private async readAccess (socket: RealtimeSocket, request: PresenceRequest, reply: Reply): Promise<string | null> {
    const { identities, projects, subscriptions } = this.deps
    const current = await identities.resolve(socket.data.token)
    if (!current.identity) {
      reply(failure(current.failure))
      subscriptions.revokeSocket(socket, current.failure)
      return null
    }
    try {
      const project = await projects.find(request.ref.owner, request.ref.slug)
      await projects.authorize(current.identity, project, 'read')
      return project.id
    } catch (e) {
      if (!isContentdError(e)) throw e
      reply(failureOf(e.toBody()))
      return null
    }
  }

  /** Ends the socket's member in the project, if it has one; resolves once it has left. */
  private end (mine: SocketPresence, key: string, reason: ErrorBody | null): Promise<void> {
    const member = mine.members.get(key)
    if (!member) return Promise.resolve()
    mine.members.delete(key)
    const left = member.leave(reason)
    this.leaving.add(left)
    void left.finally(() => this.leaving.delete(left))
    return left
  }

  /**
   * Sends a presence event to the project's subscribers on every node, with the others
   * announced in the same turn of the event loop: sent together, each connection gets them
   * in one write (write-batching.ts) rather than one write each. Under load a turn holds
   * more of them, so the cost per event falls as the rate rises; when idle, nothing waits.
   * `then` runs once the event is sent (the acks go after it).
   */
  announce (entry: SharedMember, type: PresenceChangeType, then?: () => void): void {
    this.announcements.push({ projectId: entry.projectId, event: { project: entry.project, type, member: entry.member }, then })
    if (this.announcements.length === 1) setImmediate(() => this.sendAnnouncements())
  }

  private sendAnnouncements (): void {
    const announcements = this.announcements
    this.announcements = []
    // Serialized once: this node's room and the other nodes' get the same text.
    for (const { projectId, event } of announcements) {
      const json = JSON.stringify(event)
      this.sendToRoom(projectId, json)
      this.deps.feed.announcePresence(projectId, json)
    }
    for (const { then } of announcements) then?.()
  }

  /** To the project's presence room on this node only (the other nodes have their own). */
  private sendToRoom (projectId: string, json: string): void {
    this.deps.io.local.to(presenceRoom(projectId)).emit(EVENTS.presence, new PreEncoded(json))
  }

  private of (socket: RealtimeSocket): SocketPresence {
    let mine = this.sockets.get(socket)
    if (!mine) {
      mine = { rooms: new Map(), members: new Map() }
      this.sockets.set(socket, mine)
    }
    return mine
  }

  /** Runs a handler, answering a refusal it throws (a ContentdError) with its body. */
  private async answering (reply: Reply, handler: () => Promise<void>): Promise<void> {
    try {
      await handler()
    } catch (e) {
      if (!isContentdError(e)) throw e
      reply(failureOf(e.toBody()))
    }
  }
}

/**
 * Presence shows who watches the whole project and their shared state: a key narrowed to
 * paths or operations may not see or join it, as it may not subscribe to the whole project.
 * Checked before anything else, the payload included (docs/design.md §13b "Presence").
 */
function requireUnnarrowedKey (socket: RealtimeSocket): void {
  requireKeyScope(socket.data.identity.key, { kind: 'whole' })
}

/** `{ project, state? }` with nothing else; the same project rules as subscribe. */
function readRequest (payload: unknown, event: typeof EVENTS.presenceSet | typeof EVENTS.presenceList | typeof EVENTS.presenceLeave): PresenceRequest {
  const fields: readonly string[] = EVENT_MEMBERS[event]
  const shape = `${event} needs { ${fields.join(', ')} }`
  if (!isPlainObject(payload)) throw new ContentdError('INVALID_BODY', shape)
  const unknown = unknownMembersError(event, payload)
  if (unknown) throw unknown
  const ref = projectRefOf(payload)
  if (!ref || (fields.includes('state') && !('state' in payload))) throw new ContentdError('INVALID_BODY', shape)
  if (!ref.owner.startsWith('@')) throw new ContentdError('INVALID_USERNAME')
  return { ref, key: formatProjectRef(ref.owner, ref.slug), state: payload.state }
}
