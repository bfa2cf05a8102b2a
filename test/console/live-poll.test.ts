// The console's live re-reading of lists the server pushes nothing for (console/live-poll.ts):
// the backoff, and that a hidden tab reads nothing, with a fake timer and visibility.
import { describe, expect, it } from 'vitest'
import { nextDelay, pollWhileVisible, POLL_FASTEST_MS, POLL_SLOWEST_MS, type PollEnvironment } from '../../console/live-poll.js'

/** A timer run by hand and a visibility switched by hand. */
function fakeEnvironment () {
  const timers = new Map<number, { run: () => void, ms: number }>()
  let next = 0
  let hidden = false
  const listeners = new Set<() => void>()
  const env: PollEnvironment = {
    setTimeout: (run, ms) => { timers.set(++next, { run, ms }); return next },
    clearTimeout: timer => { timers.delete(timer as number) },
    hidden: () => hidden,
    onVisibility: changed => { listeners.add(changed); return () => listeners.delete(changed) }
  }
  return {
    env,
    /** The waits now pending. */
    pending: () => [...timers.values()].map(t => t.ms),
    /** Fires the one pending timer and lets the read settle. */
    async fire () {
      const [id, timer] = [...timers.entries()][0] as [number, { run: () => void }]
      timers.delete(id)
      timer.run()
      for (let i = 0; i < 5; i++) await Promise.resolve()
    },
    async setHidden (value: boolean) {
      hidden = value
      for (const listener of listeners) listener()
      for (let i = 0; i < 5; i++) await Promise.resolve()
    },
    listeners
  }
}

describe('live poll', () => {
  it('waits twice as long after each read that changed nothing, up to the slowest, and the fastest after a change', () => {
    expect(nextDelay(undefined, false)).toBe(POLL_FASTEST_MS)
    expect(nextDelay(POLL_FASTEST_MS, false)).toBe(2 * POLL_FASTEST_MS)
    expect(nextDelay(POLL_SLOWEST_MS, false)).toBe(POLL_SLOWEST_MS)
    expect(nextDelay(POLL_SLOWEST_MS, true)).toBe(POLL_FASTEST_MS)
  })

  it('reads on that schedule, and a failed read counts as no change', async () => {
    const fake = fakeEnvironment()
    const answers = [false, false, true, false]
    let reads = 0
    const stop = pollWhileVisible(async () => {
      reads++
      if (reads === 5) throw new Error('offline')
      return answers[reads - 1] ?? false
    }, fake.env)
    const waits: number[] = []
    for (let i = 0; i < 6; i++) { waits.push(...fake.pending()); await fake.fire() }
    expect(waits).toEqual([1000, 2000, 4000, 1000, 2000, 4000])
    expect(reads).toBe(6)
    stop()
    expect(fake.pending()).toEqual([])
    expect(fake.listeners.size).toBe(0)
  })

  it('reads nothing while the tab is hidden, and at once when it shows again', async () => {
    const fake = fakeEnvironment()
    let reads = 0
    const stop = pollWhileVisible(async () => { reads++; return false }, fake.env)
    await fake.fire()
    await fake.fire()
    expect(fake.pending()).toEqual([4000])
    await fake.setHidden(true)
    expect(fake.pending()).toEqual([])
    expect(reads).toBe(2)
    await fake.setHidden(false)
    expect(reads).toBe(3)
    // Back to the fastest pace after coming back.
    expect(fake.pending()).toEqual([1000])
    stop()
  })
})
