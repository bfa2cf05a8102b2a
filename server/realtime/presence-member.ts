// One connection's presence in one project, from its first `presence:set` to its leave.
//
// Everything a member does to the share (join, updates, leave) runs one after the other, in
// the order asked, whatever the share's latency: so its `join`, `update` and `leave` events
// go out in that order, and each only after the share holds what it announces (a
// `presence:list` sent after an event never answers with something older).
//
// Updates are coalesced (docs/design.md §14): at most one is sent per PRESENCE_WINDOW_MS (the
// join counts as one). One asked for inside the window waits for its end; if more come
// meanwhile, the latest state wins and every one of them is acknowledged with it. The window
// opens when an update is taken and runs until PRESENCE_WINDOW_MS after its event went out,
// so however long the share takes to answer (Redis), two events are never closer than that.
import { ContentdError, type ErrorBody } from '../../shared/errors.js'
import type { JsonObject } from '../../shared/json.js'
import type { PresenceChangeType } from '../../shared/presence.js'
import type { Logger } from '../logger.js'
import type { Reply } from './event-router.js'
import type { PresenceShare, SharedMember } from './presence-share.js'
import { failure, failureOf } from './replies.js'

/** 10 updates a second per member, at most. */
export const PRESENCE_WINDOW_MS = 100

export interface MemberContext {
  share: PresenceShare
  membersLimit: number
  logger: Logger
  /**
   * Sends a presence event to the project's subscribers on every node, then calls `then`
   * (the member's acks: a client sees its own event before the ack of what it set).
   */
  announce (entry: SharedMember, type: PresenceChangeType, then?: () => void): void
}

const OK = { ok: true } as const

export class LocalMember {
  /** As shared and announced; replaced (never changed in place) by every update. */
  entry: SharedMember
  private joined = false
  private announced = false
  private gone = false
  private pending: JsonObject | null = null
  private waiting: Reply[] = []
  private window: NodeJS.Timeout | null = null
  private chain: Promise<void> = Promise.resolve()

  /** `onRefused`: the share refused the join (full, or unreachable); the member never existed. */
  constructor (private readonly context: MemberContext, entry: SharedMember, private readonly onRefused: () => void) {
    this.entry = entry
  }

  /** Joins the share (unless its project is full), then tells the room. */
  join (reply: Reply): void {
    const { context } = this
    this.run(async () => {
      let refusal: ErrorBody | null = null
      try {
        if (!await context.share.join(this.entry, context.membersLimit)) refusal = new ContentdError('PRESENCE_FULL', `at most ${context.membersLimit} members`).toBody()
      } catch (e) {
        context.logger.error({ err: e }, 'presence: joining failed')
        refusal = new ContentdError('STORE_UNAVAILABLE').toBody()
      }
      if (refusal) {
        this.gone = true
        this.onRefused()
        this.answerWaiting(refusal)
        reply(failureOf(refusal))
        return
      }
      this.joined = true
      // Left while the share was answering: the leave queued behind this takes it out unseen.
      if (this.gone) { reply(OK); return }
      this.announced = true
      context.announce(this.entry, 'join', () => reply(OK))
      this.openWindow()
    })
  }

  /** A new state: sent now when no window is open, else at the window's end (latest wins). */
  set (state: JsonObject, reply: Reply): void {
    if (this.gone) { reply(failure('NOT_SUBSCRIBED')); return }
    if (this.joined && this.window === null) { this.send(state, [reply]); return }
    this.pending = state
    this.waiting.push(reply)
  }

  /**
   * Leaves: out of the share, and a `leave` event if a join was announced. Updates still
   * waiting for their window are dropped, and answered with `reason` (or `{ok: true}`: a
   * leave the member asked for supersedes them). Resolves once done.
   */
  leave (reason: ErrorBody | null): Promise<void> {
    if (!this.gone) {
      this.gone = true
      if (this.window) clearTimeout(this.window)
      this.window = null
      this.answerWaiting(reason)
      this.run(async () => {
        if (!this.joined) return
        try {
          await this.context.share.leave(this.entry)
        } catch (e) {
          this.context.logger.error({ err: e }, 'presence: leaving failed')
        }
        if (this.announced) this.context.announce(this.entry, 'leave')
      })
    }
    return this.chain
  }

  private send (state: JsonObject, replies: Reply[]): void {
    this.openWindow()
    this.run(async () => {
      const entry: SharedMember = { ...this.entry, member: { ...this.entry.member, state } }
      try {
        await this.context.share.update(entry)
      } catch (e) {
        this.context.logger.error({ err: e }, 'presence: update failed')
        for (const reply of replies) reply(failure('STORE_UNAVAILABLE'))
        return
      }
      this.entry = entry
      this.context.announce(entry, 'update', () => { for (const reply of replies) reply(OK) })
      // The window counts from the event, not from when the update was taken.
      if (!this.gone) this.openWindow()
    })
  }

  private openWindow (): void {
    if (this.window) clearTimeout(this.window)
    this.window = setTimeout(() => {
      this.window = null
      if (this.gone || this.pending === null) return
      const state = this.pending
      const replies = this.waiting
      this.pending = null
      this.waiting = []
      this.send(state, replies)
    }, PRESENCE_WINDOW_MS)
    this.window.unref()
  }

  private answerWaiting (reason: ErrorBody | null): void {
    const waiting = this.waiting
    this.pending = null
    this.waiting = []
    for (const reply of waiting) reply(reason ? failureOf(reason) : OK)
  }

  /** Queues a step behind the member's earlier ones; a failing step does not stop later ones. */
  private run (step: () => Promise<void>): void {
    this.chain = this.chain.then(step).catch((e: unknown) => { this.context.logger.error({ err: e }, 'presence step failed') })
  }
}
