// Reading a contentd server's /metrics from the bench (the server runs with METRICS_TOKEN).

/** The Prometheus text of `baseUrl`'s /metrics. */
export async function metricsText (baseUrl, token) {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  return response.text()
}

/** The value of an unlabelled series (a counter or gauge); 0 when the server has none yet. */
export async function metricValue (baseUrl, token, series) {
  const line = (await metricsText(baseUrl, token)).split('\n').find(l => l.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}

/**
 * Reads an unlabelled histogram `name` from /metrics: { bounds (seconds), counts (cumulative,
 * one per bound, then +Inf) }, the shape bench/lib/load.mjs's histogramPercentile reads.
 */
export async function histogramOf (baseUrl, token, name) {
  return parseHistogram(await metricsText(baseUrl, token), name)
}

/** The histogram `name` in Prometheus text (see histogramOf); throws when it is not there. */
export function parseHistogram (text, name) {
  const bounds = []
  const counts = []
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  for (const match of text.matchAll(new RegExp(`^${escaped}_bucket\\{le="([^"]+)"\\} (\\d+)$`, 'gm'))) {
    bounds.push(match[1] === '+Inf' ? Infinity : Number(match[1]))
    counts.push(Number(match[2]))
  }
  if (bounds.length === 0) throw new Error(`no ${name} in /metrics`)
  return { bounds, counts }
}

/** What was observed between two readings of one histogram. */
export function histogramDelta (after, before) {
  return { bounds: after.bounds, counts: after.counts.map((c, i) => c - (before.counts[i] ?? 0)) }
}
