// Keeping a list live that the server pushes nothing for: the project list (versions, new
// shares) and webhook progress (delivered up to, enabled). The SDK's realtime connection
// carries one project's content at a time, and subscribing to every project would send all of
// their content; one small GET is cheaper. So the console re-reads such a list while the tab is
// visible: after 1 s, then twice as long each time nothing changed, at most every 16 s, back to
// 1 s on a change; not at all while the tab is hidden, and at once when it shows again.
// Pure apart from the timer and visibility it is given: test/console/live-poll.test.ts.
import { useEffect } from 'preact/hooks'

export const POLL_FASTEST_MS = 1000
export const POLL_SLOWEST_MS = 16_000

/** The wait before the next read: the fastest after a change, else twice the last, capped. */
export function nextDelay (previousMs: number | undefined, changed: boolean): number {
  if (previousMs === undefined || changed) return POLL_FASTEST_MS
  return Math.min(previousMs * 2, POLL_SLOWEST_MS)
}

/** What the poller needs of the page: a timer and the tab's visibility. */
export interface PollEnvironment {
  setTimeout (run: () => void, ms: number): unknown
  clearTimeout (timer: unknown): void
  hidden (): boolean
  /** Calls `changed` when the tab is shown or hidden; returns the unsubscribe. */
  onVisibility (changed: () => void): () => void
}

export const browserEnvironment = (): PollEnvironment => ({
  setTimeout: (run, ms) => globalThis.setTimeout(run, ms),
  clearTimeout: timer => globalThis.clearTimeout(timer as ReturnType<typeof setTimeout>),
  hidden: () => document.hidden,
  onVisibility: changed => {
    document.addEventListener('visibilitychange', changed)
    return () => document.removeEventListener('visibilitychange', changed)
  }
})

/**
 * Calls `read` (which says whether what it read differs from before) on the schedule above
 * until stopped. A failed read counts as no change. Returns stop().
 */
export function pollWhileVisible (read: () => Promise<boolean>, env: PollEnvironment = browserEnvironment()): () => void {
  let delay: number | undefined
  let timer: unknown
  let stopped = false
  let reading = false
  const schedule = () => {
    if (stopped || env.hidden()) return
    delay = nextDelay(delay, false)
    timer = env.setTimeout(() => { void tick() }, delay)
  }
  const tick = async () => {
    timer = undefined
    if (stopped || env.hidden() || reading) return
    reading = true
    let changed = false
    try { changed = await read() } catch { changed = false }
    reading = false
    if (changed) delay = undefined
    schedule()
  }
  const stopVisibility = env.onVisibility(() => {
    if (timer !== undefined) env.clearTimeout(timer)
    timer = undefined
    // Shown again: read at once, and from then on as after a change.
    if (!env.hidden()) { delay = undefined; void tick() }
  })
  delay = undefined
  schedule()
  return () => {
    stopped = true
    if (timer !== undefined) env.clearTimeout(timer)
    stopVisibility()
  }
}

/** Keeps `read` polling while the component is shown (a new `read` restarts the schedule). */
export function useLivePoll (read: () => Promise<boolean>): void {
  useEffect(() => pollWhileVisible(read), [read])
}
