// atTime ends a socket when its credential expires, even months ahead (a plain setTimeout
// overflows past 24.8 days and fires at once). Driven on fake timers and a fake Date.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { atTime } from '../../server/services/expiry.js'

const DAY_MS = 24 * 3600_000

beforeEach(() => { vi.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00.000Z') }) })
afterEach(() => { vi.useRealTimers() })

describe('atTime', () => {
  it('runs the callback at the moment given, not before', () => {
    let ran = 0
    atTime(Date.now() + 5000, () => { ran++ })
    vi.advanceTimersByTime(4999)
    expect(ran).toBe(0)
    vi.advanceTimersByTime(1)
    expect(ran).toBe(1)
  })

  it('waits out a moment 90 days ahead instead of firing at once', () => {
    let ran = 0
    atTime(Date.now() + 90 * DAY_MS, () => { ran++ })
    vi.advanceTimersByTime(30 * DAY_MS)
    expect(ran).toBe(0)
    vi.advanceTimersByTime(60 * DAY_MS - 1)
    expect(ran).toBe(0)
    vi.advanceTimersByTime(1)
    expect(ran).toBe(1)
  })

  it('runs at once for a moment already past, and never after being cancelled', () => {
    let ran = 0
    atTime(Date.now() - 1, () => { ran++ })
    expect(ran).toBe(1)
    const cancel = atTime(Date.now() + 40 * DAY_MS, () => { ran++ })
    vi.advanceTimersByTime(30 * DAY_MS)
    cancel()
    vi.advanceTimersByTime(30 * DAY_MS)
    expect(ran).toBe(1)
  })
})
