// The resume and Server-Sent Events rows of the results (bench/scenarios/resume.mjs): their
// table and their goals, kept apart from report.mjs's other tables.
const fmt = (n, digits = 0) => n === undefined || n === null || Number.isNaN(n) ? '—' : Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

const streamRows = results => [results.resume].flat().filter(Boolean)
const ok = r => r && !r.failed && !r.error

export function streamTable (results) {
  const found = streamRows(results)
  if (found.length === 0) return null
  const lines = ['| scenario | samples | p50 ms | p99 ms | result |', '|---|---:|---:|---:|---|']
  for (const r of found) {
    if (r.error) { lines.push(`| ${r.scenario} | — | — | — | FAILED: ${r.error} |`); continue }
    lines.push(`| ${r.scenario} | ${fmt(r.samples)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.failed ? 'FAILED' : 'ok'}${r.note ? ` (${r.note})` : ''} |`)
  }
  return lines.join('\n')
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
