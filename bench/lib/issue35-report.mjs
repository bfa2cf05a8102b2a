// Issue 35's measured goals (bench/scenarios/net-floor.mjs, sse-cpu.mjs and the 100 KB set of
// http.mjs) and the tables of the first two, kept apart from report.mjs's other rows. Each
// goal is a ratio of two measurements made in the same run; a goal whose two sides did not
// both run reads "not measured".
import { fmt } from './format.mjs'

const ok = r => r && !r.failed && !r.error && !r.pending
const measured = r => r && !r.error && !r.pending

/** The plain-`net` floor's row, beside the wide fan-out's table. */
export function floorTable (results) {
  const found = [results.netFloor].flat().filter(Boolean)
  if (found.length === 0) return null
  const lines = ['| scenario | sockets | rounds | frame bytes | deliveries | lost | after first write p50 ms | p99 ms | max ms | write loop p50 / max ms | server CPU µs/delivery (in the loop) | result |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|']
  for (const r of found) {
    if (r.error) { lines.push(`| ${r.scenario} | ${Array(10).fill('—').join(' | ')} | FAILED: ${r.error} |`); continue }
    lines.push(`| ${r.scenario} | ${fmt(r.sockets)} | ${fmt(r.rounds)} | ${fmt(r.frameBytes)} | ${fmt(r.deliveries)} | ${fmt(r.lost)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.max, 1)} | ${fmt(r.loopP50, 1)} / ${fmt(r.loopMax, 1)} | ${fmt(r.cpuMicrosPerDelivery, 2)} (${fmt(r.loopCpuMicrosPerDelivery, 2)}) | ${r.failed ? 'FAILED' : 'ok'} (${r.note}) |`)
  }
  return lines.join('\n')
}

/** Server CPU per change, SSE and Socket.IO, round by round. */
export function sseCpuTable (results) {
  const r = results.sseCpu
  if (!r) return null
  const lines = ['| round | order | SSE ms/change | Socket.IO ms/change | SSE / Socket.IO | result |', '|---|---|---:|---:|---:|---|']
  if (r.error) return [...lines, `| — | — | — | — | — | FAILED: ${r.error} |`].join('\n')
  r.rounds.forEach((round, i) => lines.push(`| ${i + 1} | ${round.order} | ${fmt(round.sseMs, 2)} | ${fmt(round.socketMs, 2)} | ${fmt(round.sseMs / round.socketMs, 2)}× | ${round.complete ? 'ok' : `FAILED (${round.note})`} |`))
  lines.push(`| all | — | ${fmt(r.sseMs, 2)} | ${fmt(r.socketMs, 2)} | ${fmt(r.ratio, 2)}× | ${r.failed ? 'FAILED' : 'ok'} (${r.note}) |`)
  return lines.join('\n')
}

/** [issue, name, value, target, met, show] rows for the goals table. */
export function issue35Goals (results) {
  const wide = [results.fanoutWide].flat().find(measured)
  const floor = [results.netFloor].flat().find(ok)
  const floorRatio = wide && floor && !wide.failed ? wide.p99 / floor.p99 : undefined
  const sse = ok(results.sseCpu) ? results.sseCpu : undefined
  const sets = [results.set100k].flat().filter(Boolean)
  const now = sets.find(r => r.variant === 'now' && ok(r))
  const before = sets.find(r => r.variant === 'baseline' && ok(r))
  const setRatio = now && before ? now.cpuPerRequest / before.cpuPerRequest : undefined
  // Round by round (change i of the fan-out against round i of the floor), when both have every round.
  const roundRatios = (a, b) => a && b && a.length === b.length && a.every(x => x !== undefined) && b.every(x => x > 0) ? a.map((x, i) => x / b[i]) : []
  const spread = values => values.length > 1 ? `; rounds ${fmt(Math.min(...values), 2)}–${fmt(Math.max(...values), 2)}` : ''
  return [
    ['35', `fan-out to ${fmt(wide?.subscribers ?? 10000)} Socket.IO subscribers, p99 after commit ÷ the plain-\`net\` floor measured in the same run`, floorRatio, '≤ 1.2×', v => v <= 1.2,
      v => `${fmt(v, 2)}× (${fmt(wide.p99, 1)} / ${fmt(floor.p99, 1)} ms${spread(roundRatios(wide.perRoundP99, floor.perRoundP99))}; server CPU ${fmt(wide.cpuMicrosPerDelivery, 2)} / ${fmt(floor.cpuMicrosPerDelivery, 2)} µs per delivery)`],
    ['35', `SSE fan-out to ${fmt(sse?.subscribers ?? 1000)} streams, server CPU per change ÷ Socket.IO's to as many subscribers (same changes)`, sse?.ratio, '≤ 1.2×', v => v <= 1.2,
      v => `${fmt(v, 2)}× (${fmt(sse.sseMs, 2)} / ${fmt(sse.socketMs, 2)} ms per change${spread(sse.rounds.map(r => r.sseMs / r.socketMs))})`],
    ['35', `set of a 100 KB value, server CPU per request ÷ today's (commit ${before?.ref ?? '89649a9'})`, setRatio, '≤ 0.5×', v => v <= 0.5,
      v => `${fmt(v, 2)}× (${fmt(now.cpuPerRequest, 2)} / ${fmt(before.cpuPerRequest, 2)} ms per request${spread(now.cpuPerRound?.map((c, i) => c / before.cpuPerRound[i]) ?? [])})`]
  ]
}
