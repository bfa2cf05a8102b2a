// Shared by the report's modules: numbers as the tables show them, and the latency table shape.

/** A number with thousands separators and `digits` decimals; '—' when there is none. */
export const fmt = (n, digits = 0) => n === undefined || n === null || Number.isNaN(n) ? '—' : Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** The `| scenario | samples | p50 ms | p99 ms | result |` table of latency rows; null without rows. */
export function latencyTable (rows) {
  if (rows.length === 0) return null
  const lines = ['| scenario | samples | p50 ms | p99 ms | result |', '|---|---:|---:|---:|---|']
  for (const r of rows) {
    if (r.error) { lines.push(`| ${r.scenario} | — | — | — | FAILED: ${r.error} |`); continue }
    lines.push(`| ${r.scenario} | ${fmt(r.samples)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.failed ? 'FAILED' : 'ok'}${r.note ? ` (${r.note})` : ''} |`)
  }
  return lines.join('\n')
}
