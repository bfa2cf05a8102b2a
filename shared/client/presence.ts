// One project's presence in the SDK (docs/design.md §14, docs/sdk.md#presence): a live list
// of who is looking at the project, and this client's own place in it.
//
// The client has one member per project (one connection, however many ProjectClient objects
// name the project). While the app shows a state or listens for changes, the presence holds
// the project's server subscription (realtime.ts; shared with the content copies). At every
// (re)subscription it asks for the list, replaying over it the events that arrived meanwhile
// (PresenceRoster), and shows the app's state again if the server does not have it (after a
// reconnect the connection, and so the member id, is new). While disconnected the list is
// empty.
//
// `set()` sends at most one state per 100 ms, the latest winning, as the server would
// coalesce them anyway: every call resolves once the server has that state or a later one.
import type { Socket } from 'socket.io-client'
import { EVENTS } from '../events.js'
import { isPlainObject, type JsonObject } from '../json.js'
import { PresenceRoster, type PresenceEvent, type PresenceLeaveAck, type PresenceListAck, type PresenceMember, type PresenceSetAck } from '../presence.js'
import { ContentdClientError } from './errors.js'
import { statusOf } from './subscription.js'

/** Called with every member, oldest first, whenever the list changes. */
export type PresenceListener = (members: PresenceMember[]) => void
export type PresenceErrorListener = (error: ContentdClientError) => void

export interface ProjectPresence {
  /** Every member, this client's own included once it has joined, oldest first; empty while disconnected. */
  readonly members: PresenceMember[]
  /** This client's own member, once the server shows it. */
  readonly self: PresenceMember | undefined
  /**
   * Shows `state` (a JSON object, at most PRESENCE_STATE_LIMIT bytes) to everyone subscribed
   * to the project: joins the first time, updates after. Resolves once the server has it or
   * a later state; rejects with a ContentdError (PRESENCE_STATE_TOO_LARGE, PRESENCE_FULL,
   * FORBIDDEN…), and the state shown before stays.
   */
  set (state: JsonObject): Promise<void>
  /** Stops showing this client; the list keeps coming while 'change' listeners remain. */
  leave (): Promise<void>
  /** 'change': the list changed (with the new list). 'error': the project's subscription ended (refused, revoked). Returns a function that removes the listener. */
  on (event: 'change', listener: PresenceListener): () => void
  on (event: 'error', listener: PresenceErrorListener): () => void
  /** Leaves, forgets every listener and lets the subscription go (unless content copies hold it). */
  close (): void
}

/** How the presence holds the project's subscription (LiveContent.hold). */
export type SubscriptionHolder = (hooks: {
  subscribed: (socket: Socket) => void
  failed: (error: ContentdClientError) => void
}) => { close (): void }

interface Waiter {
  resolve: () => void
  reject: (error: ContentdClientError) => void
}

const SEND_INTERVAL_MS = 100

export class ClientPresence implements ProjectPresence {
  private readonly roster = new PresenceRoster()
  private readonly changeListeners = new Set<PresenceListener>()
  private readonly errorListeners = new Set<PresenceErrorListener>()
  private held: { close (): void } | undefined
  /** The socket while the project is subscribed on it; undefined otherwise. */
  private socket: Socket | undefined
  /** What the app wants shown (null: nothing), and what the server last accepted. */
  private wanted: JsonObject | null = null
  private shown: JsonObject | null = null
  /** `wanted` has not been sent since it changed (or the server lost it). */
  private unsent = false
  private waiters: Waiter[] = []
  private sending: Waiter[] | null = null
  private pause: ReturnType<typeof setTimeout> | undefined
  /** Bumped whenever the subscription starts again: answers to older requests are ignored. */
  private generation = 0

  constructor (readonly project: string, private readonly holdSubscription: SubscriptionHolder) {}

  get members (): PresenceMember[] {
    return this.socket ? this.roster.members : []
  }

  get self (): PresenceMember | undefined {
    return this.socket?.id === undefined ? undefined : this.roster.get(this.socket.id)
  }

  set (state: JsonObject): Promise<void> {
    if (!isPlainObject(state)) return Promise.reject(new TypeError('contentd client: presence state must be a plain object'))
    this.wanted = state
    this.unsent = true
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }))
    this.hold()
    this.send()
    return done
  }

  async leave (): Promise<void> {
    const wasShown = this.shown !== null || this.sending !== null
    this.wanted = null
    this.shown = null
    this.unsent = false
    // Superseded by the leave, as the server would have it.
    this.settle(this.waiters.splice(0))
    const socket = this.socket
    if (wasShown && socket) {
      const ack = await new Promise<PresenceLeaveAck>(resolve => socket.emit(EVENTS.presenceLeave, { project: this.project }, resolve))
      if (!ack.ok) throw errorOf(ack)
    }
    if (this.changeListeners.size === 0) this.release()
  }

  on (event: 'change' | 'error', listener: PresenceListener | PresenceErrorListener): () => void {
    if (event === 'change') {
      this.changeListeners.add(listener as PresenceListener)
      this.hold()
      return () => {
        this.changeListeners.delete(listener as PresenceListener)
        if (this.changeListeners.size === 0 && this.wanted === null) this.release()
      }
    }
    this.errorListeners.add(listener as PresenceErrorListener)
    return () => { this.errorListeners.delete(listener as PresenceErrorListener) }
  }

  close (): void {
    if (this.socket?.connected && (this.shown !== null || this.sending !== null)) this.socket.emit(EVENTS.presenceLeave, { project: this.project })
    this.wanted = null
    this.shown = null
    this.unsent = false
    this.fail(this.waiters.splice(0), new ContentdClientError(0, 'REALTIME_ERROR', 'The presence was closed'))
    this.changeListeners.clear()
    this.errorListeners.clear()
    this.release()
  }

  /** A `presence` event for this project. */
  receive (event: PresenceEvent): void {
    if (!this.socket) return
    if (this.roster.receive(event)) this.changed()
  }

  /** The connection dropped: nobody is known to be here until the next list. */
  disconnected (): void {
    if (!this.socket) return
    this.socket = undefined
    this.generation++
    // A request on its way is never answered now: send its state again after the reconnect.
    if (this.sending) {
      this.waiters.unshift(...this.sending)
      this.sending = null
      this.unsent = this.wanted !== null
    }
    this.roster.clear()
    this.changed()
  }

  private hold (): void {
    if (this.held) return
    this.held = this.holdSubscription({
      subscribed: socket => this.subscribed(socket),
      failed: error => this.failed(error)
    })
  }

  private release (): void {
    this.held?.close()
    this.held = undefined
    if (this.socket) {
      this.socket = undefined
      this.generation++
      this.roster.clear()
    }
    clearTimeout(this.pause)
    this.pause = undefined
  }

  /** The project is (again) subscribed: take the list, then show our state if it is missing. */
  private subscribed (socket: Socket): void {
    this.socket = socket
    const generation = ++this.generation
    this.roster.listing()
    socket.emit(EVENTS.presenceList, { project: this.project }, (ack: PresenceListAck) => {
      if (generation !== this.generation) return
      if (!ack.ok) { this.roster.listed([]); this.report(errorOf(ack)); return }
      this.roster.listed(ack.members)
      const mine = this.self
      if (this.wanted !== null && (!mine || JSON.stringify(mine.state) !== JSON.stringify(this.wanted))) this.unsent = true
      this.changed()
      this.send()
    })
  }

  private failed (error: ContentdClientError): void {
    this.held = undefined
    this.socket = undefined
    this.generation++
    this.wanted = null
    this.shown = null
    this.unsent = false
    this.fail([...this.sending ?? [], ...this.waiters.splice(0)], error)
    this.sending = null
    this.roster.clear()
    this.changed()
    this.report(error)
  }

  /** Sends the wanted state when subscribed, nothing is on its way and the last send is 100 ms old. */
  private send (): void {
    const socket = this.socket
    if (!socket || !this.unsent || this.wanted === null || this.sending || this.pause) return
    const state = this.wanted
    const generation = this.generation
    const sending = this.waiters.splice(0)
    this.sending = sending
    this.unsent = false
    this.pause = setTimeout(() => { this.pause = undefined; this.send() }, SEND_INTERVAL_MS)
    socket.emit(EVENTS.presenceSet, { project: this.project, state }, (ack: PresenceSetAck) => {
      if (generation !== this.generation || this.sending !== sending) return
      this.sending = null
      if (ack.ok) {
        // Unless the app has left since: then the leave, sent after this, wins.
        if (this.wanted !== null) this.shown = state
        this.settle(sending)
      } else if (ack.code === 'RATE_LIMITED') {
        // Again once the server says we may (the latest state by then).
        this.waiters.unshift(...sending)
        this.unsent = this.wanted !== null
        clearTimeout(this.pause)
        this.pause = setTimeout(() => { this.pause = undefined; this.send() }, (ack.retryAfter ?? 1) * 1000)
        return
      } else {
        if (this.wanted === state) this.wanted = this.shown
        this.fail(sending, errorOf(ack))
      }
      this.send()
    })
  }

  private settle (waiters: Waiter[]): void {
    for (const waiter of waiters) waiter.resolve()
  }

  private fail (waiters: Waiter[], error: ContentdClientError): void {
    for (const waiter of waiters) waiter.reject(error)
  }

  private changed (): void {
    const members = this.members
    for (const listener of [...this.changeListeners]) listener(members)
  }

  private report (error: ContentdClientError): void {
    for (const listener of [...this.errorListeners]) listener(error)
  }
}

function errorOf (failure: { code: string, message: string }): ContentdClientError {
  return new ContentdClientError(statusOf(failure.code), failure.code as ContentdClientError['code'], failure.message)
}
