// One autocannon run, reduced to the figures the report prints. Every response is counted:
// a run with non-2xx answers, errors or timeouts is marked as failed, never averaged away.
import autocannon from 'autocannon'
import { cpuMs } from './processes.mjs'

export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10)
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
export async function measure ({ url, method = 'POST', headers = {}, body, connections = 32, amount, warmup = true, pid }) {
  const base = { url, method, headers: { 'content-type': 'application/json', ...headers }, body, connections, pipelining: 1, timeout: 30 }
  if (warmup && WARMUP_S > 0) await run({ ...base, duration: WARMUP_S })
  const cpuBefore = pid ? cpuMs(pid) : 0
  const result = await run(amount ? { ...base, amount } : { ...base, duration: DURATION_S })
  // Server CPU per request: steadier than req/s when other work shares the machine.
  const cpuPerRequest = pid ? (cpuMs(pid) - cpuBefore) / Math.max(1, result.requests.total) : undefined
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
    cpuPerRequest
  }
}
