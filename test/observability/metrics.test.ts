// /metrics (Prometheus text via prom-client) and /readyz on the embedded store.
import { afterEach, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp | undefined
afterEach(async () => { await app?.close(); app = undefined })

/** The value of one sample line, e.g. sample(text, 'contentd_operations_total{op="push"}'). */
function sample (text: string, series: string): number | undefined {
  const line = text.split('\n').find(l => l.startsWith(series + ' '))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('GET /metrics', () => {
  it('counts requests by route pattern and status, operations by type, and times requests', async () => {
    app = await startTestApp({ METRICS: 'open' })
    const { key, path } = await ownerWithProject(app.url, 'alice')
    for (let i = 0; i < 3; i++) await call(app.url, 'POST', `${path}/content/push`, { token: key, body: { path: 'list', value: i } })
    await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'list' } }) // 400: not a number
    await call(app.url, 'GET', '/no/such/thing')

    const r = await call(app.url, 'GET', '/metrics')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/)
    const text = r.text
    expect(sample(text, 'contentd_operations_total{op="push"}')).toBe(3)
    expect(sample(text, 'contentd_operations_total{op="increment"}')).toBe(0)
    expect(sample(text, 'contentd_http_requests_total{method="POST",route="/api/:username/:projectSlug/content/push",status="200"}')).toBe(3)
    expect(sample(text, 'contentd_http_requests_total{method="POST",route="/api/:username/:projectSlug/content/increment",status="400"}')).toBe(1)
    expect(sample(text, 'contentd_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1)
    expect(sample(text, 'contentd_http_request_duration_seconds_count{method="POST",route="/api/:username/:projectSlug/content/push"}')).toBe(3)
    // Concrete names never become labels (bounded cardinality, no user data in metrics).
    expect(text).not.toContain('@alice')
    expect(text).toContain('contentd_active_sockets')
    expect(text).toContain('contentd_broadcast_lag_seconds')
  })

  it('records event-loop delay: a 120 ms block of the loop shows as a late timer', async () => {
    app = await startTestApp({ METRICS: 'open' })
    const read = async () => (await call(app!.url, 'GET', '/metrics')).text
    await new Promise(resolve => setTimeout(resolve, 100))
    const before = await read()
    const blockedUntil = performance.now() + 120
    while (performance.now() < blockedUntil) { /* the app shares this test's event loop */ }
    await new Promise(resolve => setTimeout(resolve, 50))
    const after = await read()
    const count = (text: string) => sample(text, 'contentd_event_loop_delay_seconds_count') ?? 0
    const over50ms = (text: string) => count(text) - (sample(text, 'contentd_event_loop_delay_seconds_bucket{le="0.05"}') ?? 0)
    expect(count(after)).toBeGreaterThan(count(before))
    expect(over50ms(after) - over50ms(before)).toBeGreaterThanOrEqual(1)
  })

  it('is closed by default: without METRICS_TOKEN configured nobody reads it, and the answer says what to set', async () => {
    app = await startTestApp()
    const anonymous = await call(app.url, 'GET', '/metrics')
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.code).toBe('AUTH_REQUIRED')
    expect(anonymous.body.message).toMatch(/METRICS_TOKEN.*METRICS=open/)
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer')
    const guessed = await call(app.url, 'GET', '/metrics', { token: 'any-token-at-all-0123456789' })
    expect(guessed.status).toBe(401)
    expect(guessed.text).not.toContain('contentd_http_requests_total')
  })

  it('METRICS=open serves it without credentials (a private network scraping it)', async () => {
    app = await startTestApp({ METRICS: 'open' })
    const r = await call(app.url, 'GET', '/metrics')
    expect(r.status).toBe(200)
    expect(r.text).toContain('contentd_http_requests_total')
  })

  it('requires Authorization: Bearer <METRICS_TOKEN> when a token is configured', async () => {
    const token = 'metrics-secret-0123456789'
    app = await startTestApp({ METRICS_TOKEN: token })
    const anonymous = await call(app.url, 'GET', '/metrics')
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.code).toBe('AUTH_REQUIRED')
    const wrong = await call(app.url, 'GET', '/metrics', { token: token + 'x' })
    expect(wrong.status).toBe(401)
    expect(wrong.body.code).toBe('INVALID_TOKEN')
    const right = await call(app.url, 'GET', '/metrics', { token })
    expect(right.status).toBe(200)
    expect(right.text).toContain('contentd_http_requests_total')
  })

  it('is not served at all when METRICS=off', async () => {
    app = await startTestApp({ METRICS: 'off' })
    const r = await call(app.url, 'GET', '/metrics')
    expect(r.status).toBe(404)
    expect(r.body.code).toBe('NOT_FOUND')
  })
})

describe('GET /readyz', () => {
  it('is 200 while the store answers and 503 STORE_UNAVAILABLE once it does not', async () => {
    app = await startTestApp()
    const ready = await call(app.url, 'GET', '/readyz')
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ status: 'ready', checks: { store: 'ok' } })
    await app.store.close()
    const unready = await call(app.url, 'GET', '/readyz')
    expect(unready.status).toBe(503)
    expect(unready.body).toEqual({ message: 'The store is unavailable; retry later', code: 'STORE_UNAVAILABLE' })
  })
})
