// The other user of the abuse scenarios (fairness, attacks): ordinary increments of a counter
// at a steady pace, each one timed, while someone else does what they can to the server.
import { call } from './contentd.mjs'

// A request the server has not answered in this long counts as failed (and this long), so a
// server stalled by an attack ends the phase instead of hanging the benchmark.
const GIVE_UP_MS = 30_000

/** Increments of `counter`, one every `paceMs`, for `ms`: the latency of each, and any failures. */
export async function victimPhase (base, key, path, ms, paceMs) {
  const latencies = []
  let failures = 0
  const end = performance.now() + ms
  let next = performance.now()
  while (performance.now() < end) {
    const started = performance.now()
    let status = 0
    try {
      status = (await call(base, 'POST', `${path}/content/increment`, { token: key, body: { path: 'counter' }, signal: AbortSignal.timeout(GIVE_UP_MS) })).status
    } catch { /* the server is gone or reset the connection: a failure, timed like the others */ }
    latencies.push(performance.now() - started)
    if (status !== 200) failures++
    next += paceMs
    const wait = next - performance.now()
    if (wait > 0) await new Promise(resolve => setTimeout(resolve, wait))
    else next = performance.now()
  }
  return { latencies, failures }
}
