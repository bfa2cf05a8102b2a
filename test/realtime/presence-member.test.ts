// A member's coalescing, on a fake clock: the server-side half of the black-box test in
// presence.test.ts, which can only see event times after delivery.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createLogger } from '../../server/logger.js'
import { LocalMember, PRESENCE_WINDOW_MS } from '../../server/realtime/presence-member.js'
import { LocalPresenceShare, type SharedMember } from '../../server/realtime/presence-share.js'

/** The in-memory share, answering each update only after `latency()` ms, like Redis would. */
class SlowShare extends LocalPresenceShare {
  constructor (private readonly latency: () => number) { super() }
  override async update (entry: SharedMember): Promise<void> {
    await new Promise(resolve => setTimeout(resolve, this.latency()))
    await super.update(entry)
  }
}

function member (latency: () => number) {
  const announced: Array<{ at: number, type: string, seq: unknown }> = []
  const entry: SharedMember = {
    projectId: 'p1',
    project: '@alice/demo',
    member: { id: 's1', actor: { type: 'user', name: 'alice' }, state: {}, since: new Date(0).toISOString() }
  }
  const local = new LocalMember({
    share: new SlowShare(latency),
    membersLimit: 10,
    logger: createLogger('silent'),
    announce (shared, type, then) {
      announced.push({ at: Date.now(), type, seq: shared.member.state.seq })
      then?.()
    }
  }, entry, () => { throw new Error('refused') })
  return { local, announced }
}

beforeEach(() => { vi.useFakeTimers({ now: 0 }) })
afterEach(() => { vi.useRealTimers() })

describe('a presence member', () => {
  it(`sends at most one event per ${PRESENCE_WINDOW_MS} ms, however long the share takes, the latest state winning and every set acknowledged`, async () => {
    // Latencies that vary from 0 to 90 ms: with a window counted from when an update is taken,
    // a slow update followed by a fast one would put two events 10 ms apart.
    let turn = 0
    const { local, announced } = member(() => [90, 0, 45, 5, 70][turn++ % 5] as number)
    const acks: object[] = []
    local.join(ack => acks.push(ack))
    let sent = 0
    for (let ms = 0; ms < 2000; ms += 3) {
      local.set({ seq: sent++ }, ack => acks.push(ack))
      await vi.advanceTimersByTimeAsync(3)
    }
    await vi.advanceTimersByTimeAsync(1000)

    expect(acks).toHaveLength(sent + 1)
    expect(acks.every(ack => JSON.stringify(ack) === '{"ok":true}')).toBe(true)
    expect(announced[0]?.type).toBe('join')
    expect(announced.at(-1)?.seq).toBe(sent - 1)
    // Far fewer events than sets, each at least a window after the one before.
    expect(announced.length).toBeGreaterThan(10)
    expect(announced.length * 5).toBeLessThan(sent)
    for (let i = 1; i < announced.length; i++) {
      expect((announced[i] as { at: number }).at - (announced[i - 1] as { at: number }).at).toBeGreaterThanOrEqual(PRESENCE_WINDOW_MS)
    }
    const seqs = announced.slice(1).map(event => event.seq as number)
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y))
  })

  it('sends a set at once when no event went out within the window', async () => {
    const { local, announced } = member(() => 0)
    local.join(() => {})
    await vi.advanceTimersByTimeAsync(PRESENCE_WINDOW_MS)
    local.set({ seq: 1 }, () => {})
    await vi.advanceTimersByTimeAsync(0)
    expect(announced.map(event => [event.at, event.type])).toEqual([[0, 'join'], [PRESENCE_WINDOW_MS, 'update']])
  })

  it('drops what waits for its window when it leaves, answering it, and sends nothing after the leave', async () => {
    const { local, announced } = member(() => 0)
    local.join(() => {})
    await vi.advanceTimersByTimeAsync(0)
    const acks: object[] = []
    local.set({ seq: 1 }, ack => acks.push(ack))
    await local.leave(null)
    await vi.advanceTimersByTimeAsync(1000)
    expect(acks).toEqual([{ ok: true }])
    expect(announced.map(event => event.type)).toEqual(['join', 'leave'])
  })
})
