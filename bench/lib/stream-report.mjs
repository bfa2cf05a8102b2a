// The resume and Server-Sent Events rows of the results (bench/scenarios/resume.mjs): their
// table and their goals, kept apart from report.mjs's other tables.
import { fmt, latencyTable } from './format.mjs'

const streamRows = results => [results.resume].flat().filter(Boolean)
const ok = r => r && !r.failed && !r.error

export function streamTable (results) {
  return latencyTable(streamRows(results))
}

/** [name, value, target, met, show] rows for the goals table. */
export function streamGoals (results) {
  const find = prefix => streamRows(results).find(r => ok(r) && r.scenario.startsWith(prefix))
  const ms = v => `${fmt(v, 1)} ms`
  return [
    ['resume after 1,000 missed changes, Socket.IO: p50', find('resume after 1000 missed changes, Socket.IO')?.p50, '≤ 50 ms', v => v <= 50, ms],
    ['resume after 1,000 missed changes, SSE: p50', find('resume after 1000 missed changes, SSE')?.p50, '≤ 50 ms', v => v <= 50, ms],
    ['SSE fan-out to 1,000 streams: p99 after commit', find('SSE fan-out')?.p99, '≤ 50 ms', v => v <= 50, ms]
  ]
}
