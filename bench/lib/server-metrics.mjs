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
