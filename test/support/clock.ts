// A clock that moves only when a test says so: give it to the services (startTestApp's
// `clock` option) and expire keys and sessions by advancing it, instead of sleeping.
import type { Clock } from '../../server/clock.js'

export interface ManualClock {
  now: Clock
  advance (ms: number): void
}

/** Starts at the real time, so timestamps look ordinary; moves only through advance(). */
export function manualClock (start = Date.now()): ManualClock {
  let time = start
  return {
    now: () => time,
    advance (ms: number) {
      if (!(ms >= 0)) throw new Error(`a clock only moves forward (advance(${ms}))`)
      time += ms
    }
  }
}
