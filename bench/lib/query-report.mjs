// The live-query goals of the results (issue 30; bench/scenarios/queries.mjs), kept apart from
// report.mjs's other rows. Their rows in the fan-out table come from report.mjs's fanoutTable.
import { fmt } from './format.mjs'

const ok = r => r && !r.failed && !r.error && !r.pending

/** [issue, name, value, target, met, show] rows for the goals table. */
export function queryGoals (results) {
  const rows = [results.queries].flat().filter(Boolean)
  const one = rows.find(r => r.query === 'one')
  const many = rows.find(r => r.query === 'many')
  const children = fmt(one?.children ?? 50_000)
  const encodings = results.queryEncodings
  const ms = v => `${fmt(v, 1)} ms`
  const upperBound = 'from the start of the change\'s transaction (its entry\'s `at`; an upper bound on after commit)'
  return [
    ['30', `live query, top 10 of ${children} children, one subscriber: p99 of a score increment's \`query\` event, ${upperBound}`, ok(one) ? one.transactionP99 : undefined, '≤ 5 ms after commit', v => v <= 5, ms],
    ['30', `live query, top 10 of ${children} children: server CPU per change, the query subscriber / a path subscription to the same path (same changes)`, one?.cpuRatio, '≤ 2×', v => v <= 2, v => `${fmt(v, 2)}× (${fmt(one.cpuQueryMs, 2)} / ${fmt(one.cpuPathMs, 2)} ms per change, ${fmt(one.cpuChanges)} changes)`],
    ['30', 'serializations of `query` events, 3 Socket.IO subscribers and 1 SSE stream of one result: for 30 changes that alter no result / for 1 that alters it', ok(encodings) ? encodings : undefined, '0 / 1 (counted)', v => v.unaltered === 0 && v.altered === 1, v => `${v.unaltered} / ${v.altered}`],
    ['30', `${fmt(many?.subscribers ?? 1000)} live-query subscribers (10 distinct queries), one project: p99 ${upperBound}`, ok(many) ? many.transactionP99 : undefined, '≤ 50 ms after commit', v => v <= 50, ms]
  ]
}
