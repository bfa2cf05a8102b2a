// Runs a callback when a credential expires, even months ahead (setTimeout alone overflows
// past 24.8 days and would fire at once).
const LONGEST_TIMER_MS = 2 ** 31 - 1

export function atTime (when: number, callback: () => void): () => void {
  let timer: NodeJS.Timeout
  const arm = () => {
    const delay = when - Date.now()
    if (delay <= 0) { callback(); return }
    timer = setTimeout(delay > LONGEST_TIMER_MS ? arm : callback, Math.min(delay, LONGEST_TIMER_MS))
    timer.unref()
  }
  arm()
  return () => clearTimeout(timer)
}
