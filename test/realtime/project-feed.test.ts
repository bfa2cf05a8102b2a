// ProjectFeed's ordering rules, driven directly: changes arriving out of order, twice, or
// around a subscriber's snapshot still reach each member once, in version order.
import { describe, expect, it } from 'vitest'
import type { ChangeEvent } from '../../shared/events.js'
import { ProjectFeed, type FeedMember } from '../../server/realtime/project-feed.js'

const change = (version: number): ChangeEvent => ({ project: '@a/p', version, op: 'increment', path: 'n', value: 1, at: '2024-01-01T00:00:00.000Z' })

/** A member records what it would receive: history sends, and room broadcasts once joined. */
function setup () {
  const members: Array<FeedMember & { got: number[], inRoom: boolean }> = []
  const feed = new ProjectFeed({
    broadcast: c => { for (const m of members) if (m.inRoom) m.got.push(c.version) },
    gapTimeoutMs: 60_000,
    historySize: 4
  })
  const member = () => {
    const m = { got: [] as number[], inRoom: false, join () { m.inRoom = true }, send (c: ChangeEvent) { m.got.push(c.version) } }
    members.push(m)
    return m
  }
  return { feed, member }
}

describe('ProjectFeed', () => {
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
})
