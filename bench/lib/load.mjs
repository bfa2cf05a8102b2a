// One autocannon run, reduced to the figures the report prints. Every response is counted:
// a run with non-2xx answers, errors or timeouts is marked as failed, never averaged away.
import autocannon from 'autocannon'
import { cpuMs } from './processes.mjs'
import { metricsText } from './server-metrics.mjs'

export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10)
/**
 * Seconds each ratio scenario (the ceiling and the increments) is measured, over all its
 * rounds: three times BENCH_DURATION unless BENCH_RATIO_DURATION says. In rounds of 2 s (10 s
 * over 5 rounds) the change log's ratio read 0.83–0.95× for one build and about 0.04 lower
 * than in rounds of 6 s, whichever build (BENCHMARKS.md, Method).
 */
export const RATIO_DURATION_S = Number(process.env.BENCH_RATIO_DURATION ?? 3 * DURATION_S)
export const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 2)
function run (options) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => error ? reject(error) : resolve(result))
    // Ctrl-C during a run: let run.mjs clean up its children.
    process.once('SIGINT', () => instance.stop())
  })
}

/**
 * Warms the server up (JIT, caches) for WARMUP_S, then measures for DURATION_S — or for
 * exactly `amount` requests, when every request must be answered before counting.
 */
export async function measure ({ url, method = 'POST', headers = {}, body, connections = 32, amount, warmup = true, duration = DURATION_S, pid, eventLoop }) {
  const base = { url, method, headers: { 'content-type': 'application/json', ...headers }, body, connections, pipelining: 1, timeout: 30 }
  if (warmup && WARMUP_S > 0) await run({ ...base, duration: WARMUP_S })
  // eventLoop(): the server's event-loop delay histogram (eventLoopDelayReader), read around the run.
  const loopBefore = eventLoop ? await eventLoop() : undefined
  const cpuBefore = pid ? cpuMs(pid) : 0
  const result = await run(amount ? { ...base, amount } : { ...base, duration })
  // Server CPU per request: steadier than req/s when other work shares the machine.
  const cpuPerRequest = pid ? (cpuMs(pid) - cpuBefore) / Math.max(1, result.requests.total) : undefined
  const loopAfter = eventLoop ? await eventLoop() : undefined
  const ok = result['2xx']
  const failures = result.non2xx + result.errors + result.timeouts
  return {
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    failed: failures > 0 || ok === 0,
    statusCodes: result.statusCodeStats,
    seconds: result.duration,
    requests: result.requests.total,
    cpuPerRequest,
    eventLoopDelay: loopBefore && loopAfter ? subtractHistogram(loopAfter, loopBefore) : undefined
  }
}

/**
 * Reads a server's contentd_event_loop_delay_seconds histogram from /metrics (its
 * METRICS_TOKEN): { bounds (seconds), counts (cumulative, one per bound, then +Inf) }.
 */
export function eventLoopDelayReader (baseUrl, token) {
  return async () => {
    const text = await metricsText(baseUrl, token)
    const bounds = []
    const counts = []
    for (const match of text.matchAll(/^contentd_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)) {
      bounds.push(match[1] === '+Inf' ? Infinity : Number(match[1]))
      counts.push(Number(match[2]))
    }
    if (bounds.length === 0) throw new Error('no contentd_event_loop_delay_seconds in /metrics')
    return { bounds, counts }
  }
}

function subtractHistogram (after, before) {
  return { bounds: after.bounds, counts: after.counts.map((c, i) => c - before.counts[i]) }
}

function mergeStatusCodes (all) {
  const merged = {}
  for (const codes of all) for (const [code, stat] of Object.entries(codes)) merged[code] = { count: (merged[code]?.count ?? 0) + (stat?.count ?? 0) }
  return merged
}

function addHistograms (histograms) {
  const [first] = histograms
  return { bounds: first.bounds, counts: first.counts.map((_, i) => histograms.reduce((n, h) => n + h.counts[i], 0)) }
}

/**
 * The p-th percentile of a cumulative histogram in milliseconds, interpolated linearly
 * within its bucket (as Prometheus' histogram_quantile does); `within` the share of samples
 * at or below `limitSeconds`, exact when the limit is a bucket bound.
 */
export function histogramPercentile ({ bounds, counts }, p) {
  const total = counts.at(-1)
  if (!total) return undefined
  const rank = p / 100 * total
  let lower = 0
  let below = 0
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i] >= rank) {
      if (bounds[i] === Infinity) return lower * 1000
      return (lower + (bounds[i] - lower) * (rank - below) / Math.max(1, counts[i] - below)) * 1000
    }
    lower = bounds[i]
    below = counts[i]
  }
  return undefined
}

export function histogramShareWithin ({ bounds, counts }, limitSeconds) {
  const i = bounds.indexOf(limitSeconds)
  return i === -1 || !counts.at(-1) ? undefined : counts[i] / counts.at(-1)
}

/**
 * Several measurements made in alternating rounds instead of one after the other: each
 * `setup` gets `duration` seconds (default DURATION_S) split into `rounds` slices, and every
 * round runs each once (the order rotating from round to round). On a shared machine the
 * load drifts over a run; interleaving exposes every scenario to the same drift, so ratios
 * between them hold up where back-to-back runs of 10 s each differ by ±20%. Returns one
 * combined result per setup: req/s over all slices, p50 the median of the slices', p99 the
 * worst slice's, CPU per request over all slices, and `perRound` req/s for the spread.
 */
export async function measureInterleaved (setups, rounds, duration = DURATION_S) {
  const slice = Math.max(1, duration / rounds)
  // All servers are warmed up at once, for as long as one after the other would take. Warmed
  // one after the other, the contentd server warmed last usually ran its rounds at about half
  // the CPU per request of the others (a V8 regime with few full collections and little JIT
  // work), whichever scenario it was: the order, not the code, decided a ratio such as the
  // change log's (0.55x or 1.93x). Warmed together, none falls into it (BENCHMARKS.md, Method).
  await Promise.all(setups.map(setup => measure({ ...setup, duration: WARMUP_S * setups.length, warmup: false })))
  const slices = setups.map(() => [])
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < setups.length; k++) {
      const i = (round + k) % setups.length
      slices[i].push(await measure({ ...setups[i], duration: slice, warmup: false }))
    }
  }
  return slices.map(combine)
}

function combine (runs) {
  const sum = key => runs.reduce((total, r) => total + (r[key] ?? 0), 0)
  const seconds = sum('seconds')
  const cpu = runs.every(r => r.cpuPerRequest !== undefined) ? runs.reduce((total, r) => total + r.cpuPerRequest * r.requests, 0) / Math.max(1, sum('requests')) : undefined
  const p50s = runs.map(r => r.p50).sort((a, b) => a - b)
  const loops = runs.map(r => r.eventLoopDelay).filter(Boolean)
  return {
    reqPerSec: sum('requests') / seconds,
    p50: p50s[Math.floor(p50s.length / 2)],
    p99: Math.max(...runs.map(r => r.p99)),
    ok: sum('ok'),
    non2xx: sum('non2xx'),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    failed: runs.some(r => r.failed),
    statusCodes: mergeStatusCodes(runs.map(r => r.statusCodes ?? {})),
    seconds,
    requests: sum('requests'),
    cpuPerRequest: cpu,
    perRound: runs.map(r => r.requests / r.seconds),
    cpuPerRound: runs.map(r => r.cpuPerRequest),
    ...(loops.length === runs.length ? { eventLoopDelay: addHistograms(loops), eventLoopDelayPerRound: loops } : {})
  }
}
