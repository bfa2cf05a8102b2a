// RoomJoins's ordering rules, driven directly: changes arriving out of order, twice, or
// around a subscriber's snapshot still reach each member once, in version order.
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ChangeEvent } from '../../shared/events.js'
import { RoomJoins, type RoomMember } from '../../server/realtime/room-joins.js'

const change = (version: number): ChangeEvent => ({ project: '@a/p', version, op: 'increment', path: 'n', value: 1, at: '2024-01-01T00:00:00.000Z', actor: { type: 'user', name: '@a' } })

const GAP_TIMEOUT_MS = 60_000

/** A member records what it would receive: history sends, and room broadcasts once joined. */
function setup () {
  const members: Array<RoomMember & { got: number[], inRoom: boolean }> = []
  const feed = new RoomJoins({
    broadcast: c => { for (const m of members) if (m.inRoom) m.got.push(c.version) },
    gapTimeoutMs: GAP_TIMEOUT_MS,
    historySize: 4
  })
  const member = () => {
    const m = { got: [] as number[], inRoom: false, join () { m.inRoom = true }, send (c: ChangeEvent) { m.got.push(c.version) } }
    members.push(m)
    return m
  }
  return { feed, member }
}

describe('RoomJoins', () => {
  it('holds a change until the one before it arrives, and drops repeats', () => {
    const { feed, member } = setup()
    const m = member()
    expect(feed.activate(m, 10, () => m.got.push(-1))).toBe('joined')
    feed.receive(change(12))
    feed.receive(change(11))
    feed.receive(change(11))
    feed.receive(change(9))
    feed.receive(change(13))
    expect(m.got).toEqual([-1, 11, 12, 13])
    feed.close()
  })

  it('a snapshot newer than the room waits, and joins right before the next change after it', () => {
    const { feed, member } = setup()
    const first = member()
    feed.activate(first, 5, () => {})
    const late = member()
    expect(feed.activate(late, 7, () => late.got.push(-7))).toBe('waiting')
    feed.receive(change(7))
    feed.receive(change(6))
    feed.receive(change(8))
    expect(first.got).toEqual([6, 7, 8])
    expect(late.got).toEqual([-7, 8])
    feed.close()
  })

  it('a snapshot a little older than the room catches up from history; too old is stale', () => {
    const { feed, member } = setup()
    const first = member()
    feed.activate(first, 0, () => {})
    for (let v = 1; v <= 6; v++) feed.receive(change(v))
    const behind = member()
    expect(feed.activate(behind, 4, () => behind.got.push(-4))).toBe('joined')
    feed.receive(change(7))
    expect(behind.got).toEqual([-4, 5, 6, 7])
    const tooOld = member()
    let sent = false
    expect(feed.activate(tooOld, 1, () => { sent = true })).toBe('stale')
    expect(sent).toBe(false)
    feed.close()
  })

  describe('a version that never arrives', () => {
    // The gap timeout runs on timers the test moves: no minute of waiting.
    afterEach(() => { vi.useRealTimers() })

    it('holds later changes back for the gap timeout, then delivers them and goes on', () => {
      vi.useFakeTimers()
      const { feed, member } = setup()
      const m = member()
      feed.activate(m, 10, () => {})
      feed.receive(change(12))
      feed.receive(change(13))
      vi.advanceTimersByTime(GAP_TIMEOUT_MS - 1)
      expect(m.got).toEqual([])
      vi.advanceTimersByTime(1)
      expect(m.got).toEqual([12, 13])
      // Version 11 turning up late is a repeat now; the feed carries on from 13.
      feed.receive(change(11))
      feed.receive(change(14))
      expect(m.got).toEqual([12, 13, 14])
      feed.close()
    })

    it('a gap filled in time cancels the timeout', () => {
      vi.useFakeTimers()
      const { feed, member } = setup()
      const m = member()
      feed.activate(m, 10, () => {})
      feed.receive(change(12))
      feed.receive(change(11))
      expect(m.got).toEqual([11, 12])
      expect(vi.getTimerCount()).toBe(0)
      feed.close()
    })
  })
})
