// Reading one sample off a server's /metrics (Prometheus text), for black-box tests.
import { call } from './http.js'

/** The value of `series` (name plus labels, exactly as printed, e.g. 'x_total{event="a"}'); 0 when absent. */
export async function metricValue (url: string, token: string, series: string): Promise<number> {
  const r = await call(url, 'GET', '/metrics', { headers: { authorization: `Bearer ${token}` } })
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`)
  const line = r.text.split('\n').find(l => l.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}
