// The ordering primitive every live consumer shares (server/feed/version-order.ts), driven
// directly: no transport, no store, no timers. A "log" here is an array the test hands to
// readMissing, as the SSE stream and the path follower read theirs.
import { describe, expect, it } from 'vitest'
import { MAX_HELD, VersionOrder, type PumpSteps } from '../../server/feed/version-order.js'

interface Change { version: number }
const change = (version: number): Change => ({ version })

/** Offers changes and releases what follows on, recording the versions dealt with. */
function released (order: VersionOrder<Change>, versions: number[]): number[] {
  const got: number[] = []
  for (const v of versions) if (order.offer(change(v))) order.release(c => got.push(c.version))
  return got
}

/** Steps whose log holds versions 1..logUpTo; a read returns at most `page` of them. */
function logSteps (order: VersionOrder<Change>, logUpTo: number, page = 1000) {
  const got: Array<{ version: number, from: 'live' | 'log' }> = []
  const reads: number[] = []
  let stopped = false
  const steps: PumpSteps<Change> = {
    deliver: c => { got.push({ version: c.version, from: 'live' }) },
    readMissing: async since => {
      reads.push(since)
      const last = Math.min(logUpTo, since + page)
      for (let v = since + 1; v <= last; v++) got.push({ version: v, from: 'log' })
      order.advanceTo(last)
      if (last < logUpTo) order.markBehind()
      return true
    },
    stopped: () => stopped
  }
  return { steps, got, reads, stop: () => { stopped = true } }
}

describe('VersionOrder', () => {
  it('puts out-of-order arrivals back in version order', () => {
    const order = new VersionOrder<Change>(MAX_HELD, 0)
    expect(released(order, [3, 1, 4, 2, 5])).toEqual([1, 2, 3, 4, 5])
    expect(order.version).toBe(5)
    expect(order.heldCount).toBe(0)
  })

  it('drops repeats and versions already dealt with: each version is dealt with once', () => {
    const order = new VersionOrder<Change>(MAX_HELD, 10)
    expect(order.offer(change(10))).toBe(false)
    expect(order.offer(change(7))).toBe(false)
    expect(order.offer(change(12))).toBe(true)
    // Heard twice while held (live, and again through Redis): still one change of that version.
    order.offer(change(12))
    expect(order.heldCount).toBe(1)
    const got: number[] = []
    order.offer(change(11))
    order.release(c => got.push(c.version))
    expect(got).toEqual([11, 12])
    expect(order.offer(change(12))).toBe(false)
    expect(order.offer(change(11))).toBe(false)
  })

  it('holds a change behind a gap until the gap fills', () => {
    const order = new VersionOrder<Change>(MAX_HELD, 0)
    expect(released(order, [2, 3])).toEqual([])
    expect(order.heldCount).toBe(2)
    expect(order.highestHeld()).toBe(3)
    expect(released(order, [1])).toEqual([1, 2, 3])
  })

  it('holds everything until it knows where to start (no version yet)', () => {
    const order = new VersionOrder<Change>(MAX_HELD)
    expect(order.version).toBeNull()
    expect(released(order, [5, 6, 1])).toEqual([])
    expect(order.takeNext()).toBeUndefined()
    expect(order.heldCount).toBe(3)
  })

  it('a reset to a snapshot version drops what it covers and goes on from there', () => {
    const order = new VersionOrder<Change>(MAX_HELD)
    released(order, [3, 4, 5, 7])
    order.startAt(4)
    expect(order.heldCount).toBe(2)
    const got: number[] = []
    order.release(c => got.push(c.version))
    expect(got).toEqual([5])
    expect(order.version).toBe(5)
    // The held 7 still waits for 6; a resume from an older version says the log may have more.
    expect(order.claimCatchUp()).toBe(true)
    const resumed = new VersionOrder<Change>(MAX_HELD)
    resumed.startAt(2, true)
    expect(resumed.claimCatchUp()).toBe(true)
    expect(resumed.claimCatchUp()).toBe(false)
  })

  it('past the bound it lets go of everything held and remembers to read the log', () => {
    const bound = 3
    const order = new VersionOrder<Change>(bound, 0)
    released(order, [2, 3, 4])
    expect(order.heldCount).toBe(bound)
    // The fourth held change is one too many: all are let go, not just the newest.
    expect(order.offer(change(5))).toBe(true)
    expect(order.heldCount).toBe(0)
    expect(order.claimCatchUp()).toBe(true)
    // Claimed: the caller reads the log now, so a second look finds nothing missing.
    expect(order.claimCatchUp()).toBe(false)
    expect(MAX_HELD).toBe(1000)
  })

  it('being behind past the bound survives a start, which may come after what was let go', () => {
    const order = new VersionOrder<Change>(2)
    released(order, [10, 11, 12])
    expect(order.heldCount).toBe(0)
    order.startAt(5)
    expect(order.claimCatchUp()).toBe(true)
  })

  it('with no count bound (a room) it holds until it skips the gap', () => {
    const order = new VersionOrder<Change>(Infinity, 0)
    expect(released(order, Array.from({ length: 2000 }, (_, i) => i + 3))).toEqual([])
    expect(order.heldCount).toBe(2000)
    expect(order.skipGap()).toBe(true)
    expect(order.version).toBe(2)
    const got: number[] = []
    order.release(c => got.push(c.version))
    expect(got).toHaveLength(2000)
    expect(got[0]).toBe(3)
    expect(order.skipGap()).toBe(false)
    // Version 1 or 2 turning up late is a repeat now.
    expect(order.offer(change(1))).toBe(false)
  })

  it('advanceTo never moves back', () => {
    const order = new VersionOrder<Change>(MAX_HELD, 8)
    order.advanceTo(5)
    expect(order.version).toBe(8)
    order.advanceTo(9)
    expect(order.version).toBe(9)
  })
})

describe('VersionOrder.pump', () => {
  it('delivers what follows on in the caller\'s turn, reading nothing when nothing is missing', () => {
    const order = new VersionOrder<Change>(MAX_HELD, 0)
    const { steps, got, reads } = logSteps(order, 0)
    order.offer(change(2))
    order.offer(change(1))
    void order.pump(steps)
    // Synchronous deliveries are done before pump's promise is even looked at.
    expect(got).toEqual([{ version: 1, from: 'live' }, { version: 2, from: 'live' }])
    expect(reads).toEqual([])
  })

  it('fills a gap from the log, then delivers the held change after it once', async () => {
    const order = new VersionOrder<Change>(MAX_HELD, 0)
    const { steps, got, reads } = logSteps(order, 3)
    order.offer(change(4))
    order.offer(change(3))
    await order.pump(steps)
    expect(reads).toEqual([0])
    // 3 came from the log, so the held live 3 is a repeat; 4 follows live.
    expect(got).toEqual([1, 2, 3].map(version => ({ version, from: 'log' })).concat([{ version: 4, from: 'live' }]))
    expect(order.heldCount).toBe(0)
  })

  it('reads page after page while the log has more', async () => {
    const order = new VersionOrder<Change>(MAX_HELD, 0, true)
    const { steps, got, reads } = logSteps(order, 25, 10)
    await order.pump(steps)
    expect(reads).toEqual([0, 10, 20])
    expect(got.map(g => g.version)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1))
  })

  it('after the bound is hit, the log supplies what was let go', async () => {
    const order = new VersionOrder<Change>(2, 0)
    const { steps, got } = logSteps(order, 5)
    for (const v of [2, 3, 4, 5]) order.offer(change(v))
    expect(order.heldCount).toBe(1)
    await order.pump(steps)
    expect(got.map(g => g.version)).toEqual([1, 2, 3, 4, 5])
  })

  it('one pump at a time: a change offered during a read is dealt with by the running one', async () => {
    const order = new VersionOrder<Change>(MAX_HELD, 0)
    const got: number[] = []
    let release!: () => void
    const steps: PumpSteps<Change> = {
      deliver: c => { got.push(c.version) },
      readMissing: async since => {
        await new Promise<void>(resolve => { release = resolve })
        got.push(since + 1)
        order.advanceTo(since + 1)
        return true
      },
      stopped: () => false
    }
    order.offer(change(2))
    const running = order.pump(steps)
    order.offer(change(3))
    await order.pump(steps)
    expect(got).toEqual([])
    release()
    await running
    expect(got).toEqual([1, 2, 3])
  })

  it('awaits an asynchronous delivery before the next, and stops when the consumer does', async () => {
    const order = new VersionOrder<Change>(MAX_HELD, 0)
    const got: number[] = []
    let stopped = false
    const steps: PumpSteps<Change> = {
      deliver: async c => {
        await Promise.resolve()
        got.push(c.version)
        if (c.version === 2) stopped = true
      },
      readMissing: async () => { throw new Error('nothing is missing') },
      stopped: () => stopped
    }
    for (const v of [1, 2, 3]) order.offer(change(v))
    await order.pump(steps)
    expect(got).toEqual([1, 2])
    // Stopped inside the delivery of 2: it was not counted as dealt with.
    expect(order.version).toBe(1)
  })

  it('lets the consumer end on a failed read, and can pump again afterwards', async () => {
    const order = new VersionOrder<Change>(MAX_HELD, 0)
    order.offer(change(3))
    const failing: PumpSteps<Change> = { deliver: () => {}, readMissing: async () => { throw new Error('HISTORY_EXPIRED') }, stopped: () => false }
    await expect(order.pump(failing)).rejects.toThrow('HISTORY_EXPIRED')
    const { steps, got } = logSteps(order, 2)
    order.offer(change(4))
    await order.pump(steps)
    expect(got.map(g => g.version)).toEqual([1, 2, 3, 4])
  })

  it('readMissing answering false stops the pump with the held change still held', async () => {
    const order = new VersionOrder<Change>(MAX_HELD, 0)
    const reads: number[] = []
    order.offer(change(5))
    await order.pump({ deliver: () => {}, readMissing: async since => { reads.push(since); return false }, stopped: () => false })
    expect(reads).toEqual([0])
    expect(order.heldCount).toBe(1)
  })
})
