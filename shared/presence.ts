// Presence (docs/design.md §14): who is looking at a project right now and what they are
// doing, shared live between its subscribers. Not content: never stored with the project,
// versioned, logged or sent to webhooks. The payloads of the protocol, the one rule a state
// obeys, and the bookkeeping a client needs to keep a live list from `presence` events.
import type { Actor } from './actor.js'
import { ContentdError } from './errors.js'
import type { EventFailure } from './events.js'
import { isPlainObject, MAX_VALUE_DEPTH, type JsonObject } from './json.js'

/** One connection showing itself in one project. */
export interface PresenceMember {
  /** Per connection (the Socket.IO socket id): stable while the connection lives, new after a reconnect. */
  id: string
  /** An app user (docs/design.md §17) shows as `{type: "app", name: <sub>}`. */
  actor: Actor | { type: 'app', name: string }
  /** What the member shows: a cursor, a selected path, "editing title"… */
  state: JsonObject
  /** When the member joined (ISO 8601); an update keeps it. */
  since: string
}

export type PresenceChangeType = 'join' | 'update' | 'leave'

/** Sent to the project's subscribers; `member` is the whole member, its last state on `leave`. */
export interface PresenceEvent {
  project: string
  type: PresenceChangeType
  member: PresenceMember
}

/** `emit('presence:set', { project, state }, ack)`, after subscribe. */
export interface PresenceSetRequest {
  project: string
  state: JsonObject
}

/** `emit('presence:list', { project }, ack)` and `emit('presence:leave', { project }, ack)`. */
export interface PresenceProjectRequest {
  project: string
}

export type PresenceSetAck = { ok: true } | EventFailure

export type PresenceLeaveAck = { ok: true } | EventFailure

/**
 * Every live member on every node, oldest first. When the project has more members than
 * PRESENCE_MEMBERS_LIMIT (possible only while nodes disagree on the limit), `members` holds
 * the first that many and `count` says how many there are.
 */
export type PresenceListAck = { ok: true, members: PresenceMember[], count?: number } | EventFailure

/**
 * Checks a state sent with presence:set: a JSON object, nesting at most 64 levels, no
 * `__proto__` key anywhere (a client merging it into another object must not change that
 * object's prototype), and at most `limitBytes` of UTF-8 JSON. Returns its JSON text.
 */
export function checkPresenceState (state: unknown, limitBytes: number): string {
  if (!isPlainObject(state)) throw new ContentdError('INVALID_VALUE', 'state must be a JSON object')
  checkNesting(state, 1)
  const json = JSON.stringify(state)
  const bytes = new TextEncoder().encode(json).length
  if (bytes > limitBytes) throw new ContentdError('PRESENCE_STATE_TOO_LARGE', `${bytes} bytes, at most ${limitBytes}`)
  return json
}

function checkNesting (value: unknown, depth: number): void {
  if (typeof value !== 'object' || value === null) return
  if (depth > MAX_VALUE_DEPTH) throw new ContentdError('INVALID_VALUE', `state nests deeper than ${MAX_VALUE_DEPTH} levels`)
  if (Array.isArray(value)) {
    for (const item of value) checkNesting(item, depth + 1)
    return
  }
  for (const key of Object.keys(value)) {
    if (key === '__proto__') throw new ContentdError('INVALID_VALUE', 'state must not have a "__proto__" key')
    checkNesting((value as Record<string, unknown>)[key], depth + 1)
  }
}

/** The order members are listed in: who came first, then by id (so every node agrees). */
export function compareMembers (a: PresenceMember, b: PresenceMember): number {
  return a.since < b.since ? -1 : a.since > b.since ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/**
 * A live member list kept from a `presence:list` answer and the `presence` events around it.
 * Events that arrive while the list request is on its way are replayed over its answer, so
 * nothing that happened meanwhile is lost (join and update put a member in, leave takes it
 * out: replaying one the answer already reflects changes nothing).
 */
export class PresenceRoster {
  private readonly byId = new Map<string, PresenceMember>()
  private held: PresenceEvent[] | null = null

  /** The members, oldest first. */
  get members (): PresenceMember[] {
    return [...this.byId.values()].sort(compareMembers)
  }

  get (id: string): PresenceMember | undefined {
    return this.byId.get(id)
  }

  /** A list request was sent: hold events until its answer. */
  listing (): void {
    this.held = []
  }

  /** The list answer: it replaces the roster, then the events held meanwhile apply. */
  listed (members: PresenceMember[]): void {
    const held = this.held ?? []
    this.held = null
    this.byId.clear()
    for (const member of members) this.byId.set(member.id, member)
    for (const event of held) this.apply(event)
  }

  /** Applies an event; false when it was held for a list answer on its way. */
  receive (event: PresenceEvent): boolean {
    if (this.held) { this.held.push(event); return false }
    this.apply(event)
    return true
  }

  clear (): void {
    this.byId.clear()
    this.held = null
  }

  private apply (event: PresenceEvent): void {
    if (event.type === 'leave') this.byId.delete(event.member.id)
    else this.byId.set(event.member.id, event.member)
  }
}
