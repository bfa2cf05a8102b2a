// The client's one Socket.IO connection (docs/design.md §7), opened on the first subscribe
// and shared by all of its subscriptions. It routes `change` events to the live copies of
// their project, has every copy catch up after a reconnect (from its version, through the
// change log; a snapshot only when that is too old), and ends subscriptions the server revokes.
//
// The server holds one subscription per project per connection, however many live copies
// of it the client keeps: copies that want a snapshot while a subscribe for their project
// is on its way share that request, so several `subscribe()` calls on one project — and
// the re-subscribing of all copies after a reconnect — send one subscribe per project.
// A project's presence (presence.ts) holds the subscription the same way, with a copy that
// keeps no content, and gets the project's `presence` events.
import { io, type Socket } from 'socket.io-client'
import { EVENTS, type ChangeEvent, type ConnectErrorData, type RevokedEvent, type SubscribeAck } from '../events.js'
import type { PresenceEvent } from '../presence.js'
import { ContentdClientError } from './errors.js'
import { ClientPresence } from './presence.js'
import { LiveCopy, statusOf, type ContentListener, type SubscribeOptions, type Subscription } from './subscription.js'
import type { EventFailure } from '../events.js'
import type { LiveQuery } from '../query.js'
import { ClientQuery, QUERY_EVENT, type QueryEventPayload, type QuerySubscribeAck, type QueryListener, type QuerySubscribeOptions, type QuerySubscription } from './live-query.js'
import type { PathChangeEvent } from '../live-path.js'
import { LivePathValue, type PathAck, type PathListener, type PathSubscribeOptions, type PathSubscription } from './path-subscription.js'

export interface RealtimeOptions {
  baseUrl: string
  /** A token or key; or, for an app user, a function giving the current token (asked at each connect). */
  token?: string | (() => Promise<string | undefined>) | undefined
  /** Passed to socket.io-client's io() (e.g. { transports: ['websocket'] }). */
  socketOptions?: Record<string, unknown> | undefined
}

/**
 * The realtime connection: `idle` before the first subscribe and after close(); `connecting`
 * while (re)connecting, socket.io retrying by itself; `online`; `offline` when the server
 * refused or ended the connection and no retry will follow (a bad or revoked credential).
 */
export type ConnectionState = 'idle' | 'connecting' | 'online' | 'offline'
export type ConnectionListener = (state: ConnectionState) => void

export class LiveContent {
  private socket: Socket | undefined
  private state: ConnectionState = 'idle'
  private readonly stateListeners = new Set<ConnectionListener>()
  private connectedBefore = false
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined
  private readonly copies = new Map<string, Set<LiveCopy>>()
  /** The subscribe request on its way for each project, shared by the copies that want a snapshot meanwhile. */
  private readonly inFlight = new Map<string, Promise<SubscribeAck>>()
  private readonly presences = new Map<string, ClientPresence>()
  /** Live queries by "project\npath": the server holds one per path per connection. */
  private readonly queries = new Map<string, ClientQuery>()
  /** Live values of paths (docs/design.md §15), by project and path. */
  private readonly pathValues = new Map<string, Set<LivePathValue>>()

  constructor (private readonly options: RealtimeOptions) {}

  /** The project's presence, one per client and project. */
  presence (project: string): ClientPresence {
    let presence = this.presences.get(project)
    if (!presence) {
      presence = new ClientPresence(project, hooks => this.hold(project, hooks))
      this.presences.set(project, presence)
    }
    return presence
  }

  /**
   * Keeps the project subscribed without a copy of its content, for presence: `subscribed`
   * runs at every (re)subscription with the socket, `failed` when the subscription ends for good.
   */
  private hold (project: string, hooks: { subscribed: (socket: Socket) => void, failed: (error: ContentdClientError) => void }): { close (): void } {
    const socket = this.connect()
    const copy = new LiveCopy(project, () => hooks.subscribed(socket), { onError: hooks.failed }, since => this.requestSnapshot(socket, project, since), closed => this.forget(closed), false)
    this.add(copy)
    return copy
  }

  subscribe (project: string, onContent: ContentListener, options: SubscribeOptions): Subscription {
    const socket = this.connect()
    const copy = new LiveCopy(project, onContent, options, since => this.requestSnapshot(socket, project, since), closed => this.forget(closed))
    this.add(copy)
    return copy
  }

  /**
   * A live query (docs/design.md §16). Listeners of the same query on the same path share one
   * server subscription; a different query on a path this client already queries is refused
   * (the server keeps one query per path and connection).
   */
  query (project: string, path: string, query: LiveQuery, listener: QueryListener, options: QuerySubscribeOptions): QuerySubscription {
    const socket = this.connect()
    const key = `${project}\n${path}`
    let live = this.queries.get(key)
    if (live && JSON.stringify(live.query) !== JSON.stringify(query)) {
      throw new ContentdClientError(400, 'INVALID_QUERY', `this client already has another live query on "${path}"; close it first`)
    }
    if (!live) {
      const created = new ClientQuery(project, path, query, () => new Promise<QuerySubscribeAck | EventFailure>(resolve => {
        socket.emit(EVENTS.subscribe, { project, path, query }, (ack: QuerySubscribeAck | EventFailure) => resolve(ack))
      }), closed => {
        if (this.queries.get(key) !== closed) return
        this.queries.delete(key)
        if (this.socket?.connected) this.socket.emit(EVENTS.unsubscribe, { project, path })
      })
      this.queries.set(key, created)
      live = created
      queueMicrotask(() => created.resync())
    }
    const shared = live
    const stop = shared.listen(listener, options)
    return {
      project,
      path,
      ready: shared.ready,
      get items () { return shared.items },
      get version () { return shared.version },
      close: stop
    }
  }

  /**
   * The live value at one path (docs/design.md §15). Each value sends its own path subscribe;
   * the server keeps one per connection, project and path (a later one replaces it), so values
   * of the same path follow the latest one's `prev` chain, re-asking when they fall out of it.
   */
  subscribePath (project: string, path: string, listener: PathListener, options: PathSubscribeOptions): PathSubscription {
    const socket = this.connect()
    const key = pathKey(project, path)
    const value = new LivePathValue(project, path, listener, options, since => new Promise<PathAck>(resolve => {
      socket.emit(EVENTS.subscribe, since === undefined ? { project, path } : { project, path, since }, (ack: PathAck) => resolve(ack))
    }), closed => {
      const set = this.pathValues.get(key)
      if (!set) return
      set.delete(closed)
      if (set.size > 0) return
      this.pathValues.delete(key)
      if (this.socket?.connected) this.socket.emit(EVENTS.unsubscribe, { project, path })
    })
    let set = this.pathValues.get(key)
    if (!set) { set = new Set(); this.pathValues.set(key, set) }
    set.add(value)
    value.resync()
    return value
  }

  private add (copy: LiveCopy): void {
    let set = this.copies.get(copy.project)
    if (!set) { set = new Set(); this.copies.set(copy.project, set) }
    // A copy of this project that is already live has exactly what a snapshot would give.
    const live = [...set].find(other => other.isLive)
    set.add(copy)
    // Not before subscribe() has returned: listeners may refer to the subscription.
    if (live) queueMicrotask(() => copy.startFrom(live))
    // A copy started from a kept one (SubscribeOptions.from) asks only for what it missed.
    else if (copy.version !== undefined) copy.resume()
    else copy.resync()
  }

  get connection (): ConnectionState { return this.state }

  /** Calls `listener` with every new connection state; returns the function that stops it. */
  onConnection (listener: ConnectionListener): () => void {
    this.stateListeners.add(listener)
    return () => { this.stateListeners.delete(listener) }
  }

  /** Ends every subscription and the socket. */
  close (): void {
    for (const presence of this.presences.values()) presence.close()
    for (const query of [...this.queries.values()]) query.close()
    for (const set of [...this.copies.values()]) for (const copy of [...set]) copy.close()
    for (const set of [...this.pathValues.values()]) for (const value of [...set]) value.close()
    clearTimeout(this.reconnectTimer)
    const socket = this.socket
    this.socket = undefined
    socket?.disconnect()
    this.inFlight.clear()
    this.connectedBefore = false
    this.setState('idle')
  }

  private setState (state: ConnectionState): void {
    if (state === this.state) return
    this.state = state
    for (const listener of [...this.stateListeners]) listener(state)
  }

  private connect (): Socket {
    if (this.socket) return this.socket
    const token = this.options.token
    // socket.io asks for `auth` at each (re)connect: a provider's token is fresh every time.
    const auth = typeof token === 'function' ? (send: (data: object) => void) => { void token().then(t => { send({ token: t ?? '' }) }, () => { send({ token: '' }) }) } : { token: token ?? '' }
    const socket = io(this.options.baseUrl, { ...this.options.socketOptions, auth })
    // Events of a socket close() has let go of say nothing about the client any more.
    const track = (state: ConnectionState) => { if (this.socket === socket) this.setState(state) }
    socket.on('connect', () => {
      track('online')
      // Subscribe requests made while offline are buffered by socket.io and sent now. After a
      // reconnect, changes may have been missed: each copy asks for those since its version
      // (a snapshot only when the server no longer has them).
      if (this.connectedBefore) {
        for (const copy of this.allCopies()) copy.resume()
        for (const value of this.allPathValues()) value.resume()
        // A query has no log to resume from: a fresh result.
        for (const query of this.queries.values()) query.resync()
      }
      this.connectedBefore = true
    })
    // A request sent before the connection dropped is never answered: forget it, so the
    // copies' next snapshot requests (on reconnect) go out afresh.
    socket.on('disconnect', () => {
      this.inFlight.clear()
      track(socket.active ? 'connecting' : 'offline')
      for (const presence of this.presences.values()) presence.disconnected()
    })
    socket.on('connect_error', (error: Error & { data?: ConnectErrorData }) => {
      // socket.active is false when the server refused us (bad token): no retry will help,
      // except when the refusal was the rate limit: then again once it says we may.
      if (socket.active) { track('connecting'); return }
      const data = error.data
      if (data?.code === 'RATE_LIMITED') {
        track('connecting')
        this.reconnectTimer = setTimeout(() => { if (this.socket === socket) socket.connect() }, (data.retryAfter ?? 1) * 1000)
        return
      }
      const failure = data && typeof data.code === 'string'
        ? new ContentdClientError(statusOf(data.code), data.code, data.message)
        : new ContentdClientError(0, 'REALTIME_ERROR', `Cannot connect: ${error.message}`)
      track('offline')
      for (const copy of this.allCopies()) copy.fail(failure)
      for (const query of [...this.queries.values()]) query.fail(failure)
      for (const value of this.allPathValues()) value.fail(failure)
    })
    socket.on(EVENTS.change, (change: ChangeEvent | PathChangeEvent) => {
      // A path subscription's change names it (docs/design.md §15); whole-project copies never see it.
      if ('subscription' in change) {
        for (const value of [...this.pathValues.get(pathKey(change.project, change.subscription)) ?? []]) value.receive(change)
        return
      }
      const set = this.copies.get(change.project)
      if (set) for (const copy of [...set]) copy.receive(change)
    })
    socket.on(EVENTS.presence, (event: PresenceEvent) => this.presences.get(event.project)?.receive(event))
    socket.on(QUERY_EVENT, (event: QueryEventPayload) => this.queries.get(`${event.project}\n${event.subscription}`)?.receive(event))
    socket.on(EVENTS.revoked, (event: RevokedEvent) => {
      const error = new ContentdClientError(statusOf(event.code), event.code, event.message)
      const path = (event as RevokedEvent & { path?: string }).path
      if (event.project === undefined) for (const value of this.allPathValues()) value.fail(error)
      if (path !== undefined) {
        for (const value of [...this.pathValues.get(pathKey(event.project ?? '', path)) ?? []]) value.fail(error)
        return
      }
      const affected = event.project === undefined ? this.allCopies() : [...(this.copies.get(event.project) ?? [])]
      for (const copy of affected) copy.fail(error)
      for (const query of [...this.queries.values()]) if (event.project === undefined || event.project === query.project) query.fail(error)
    })
    this.socket = socket
    track('connecting')
    return socket
  }

  /** One request per project at a time: copies that want one meanwhile share its answer. */
  private requestSnapshot (socket: Socket, project: string, since: number | undefined): Promise<SubscribeAck> {
    const pending = this.inFlight.get(project)
    if (pending) return pending
    const request = new Promise<SubscribeAck>(resolve => {
      socket.emit(EVENTS.subscribe, since === undefined ? { project } : { project, since }, (ack: SubscribeAck) => {
        if (this.inFlight.get(project) === request) this.inFlight.delete(project)
        resolve(ack)
      })
    })
    this.inFlight.set(project, request)
    return request
  }

  private forget (copy: LiveCopy): void {
    const set = this.copies.get(copy.project)
    if (!set) return
    set.delete(copy)
    if (set.size > 0) return
    this.copies.delete(copy.project)
    // A later copy must not share a request the unsubscribe below cancels.
    this.inFlight.delete(copy.project)
    if (this.socket?.connected) this.socket.emit(EVENTS.unsubscribe, { project: copy.project })
  }

  private allPathValues (): LivePathValue[] {
    return [...this.pathValues.values()].flatMap(set => [...set])
  }

  private allCopies (): LiveCopy[] {
    return [...this.copies.values()].flatMap(set => [...set])
  }
}

const pathKey = (project: string, path: string) => `${project}\n${path}`
