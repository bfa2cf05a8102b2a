// Webhook delivery (docs/design.md §11) in one process, against real loopback receivers: the
// app with its dispatcher on a manual clock (retries and the 3-day limit move with it, not
// with the wall clock), polling every 20 ms.
//
// The dispatcher reads the clock when an attempt's answer arrives, to schedule the retry. So
// a test moves the clock only once the attempt it is waiting on is *recorded* (`recorded`),
// never as soon as the receiver has the request: moved in between, the retry would be
// scheduled from the later time and never come due.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { createLogger } from '../../server/logger.js'
import { Metrics } from '../../server/observability/metrics.js'
import { createWebhooks, type Webhooks } from '../../server/webhooks/index.js'
import { sendWebhook } from '../../server/webhooks/sender.js'
import { manualClock } from '../support/clock.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { until } from '../support/wait.js'
import { eventually, startReceiver, type Receiver } from './receiver.js'

const HISTORY_LIMIT = 30
const clock = manualClock()
let app: TestApp
let webhooks: Webhooks
const metrics = new Metrics()
const receivers: Receiver[] = []
let serial = 0

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true', HISTORY_LIMIT: String(HISTORY_LIMIT) }, { clock })
  webhooks = createWebhooks({ config: app.config, store: app.store, logger: createLogger('silent'), metrics, now: clock.now, pollIntervalMs: 20 })
  webhooks.dispatcher.start()
})
afterAll(async () => {
  await webhooks.dispatcher.stop()
  for (const r of receivers) await r.stop()
  await app.close()
})

async function receiver (answer?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(answer)
  receivers.push(r)
  return r
}

/** A new owner with a project, and a webhook on it to `url`. */
async function project (url: string, filters: Record<string, unknown> = {}) {
  serial += 1
  const owner = await ownerWithProject(app.url, `hook${serial}`)
  const created = await call(app.url, 'POST', `${owner.path}/webhooks`, { token: owner.session, body: { url, ...filters } })
  expect(created.status, created.text).toBe(201)
  const hook = created.body as { id: string, secret: string }
  const write = async (op: string, body: unknown) => {
    const r = await call(app.url, 'POST', `${owner.path}/content/${op}`, { token: owner.key, body })
    expect(r.status, r.text).toBe(200)
  }
  const view = async () => {
    const r = await call(app.url, 'GET', `${owner.path}/webhooks`, { token: owner.session })
    expect(r.status).toBe(200)
    return (r.body.webhooks as Array<Record<string, unknown>>).find(w => w.id === hook.id) as Record<string, any>
  }
  const deliveries = async () => {
    const r = await call(app.url, 'GET', `${owner.path}/webhooks/${hook.id}/deliveries`, { token: owner.session })
    expect(r.status, r.text).toBe(200)
    return r.body.deliveries as Array<Record<string, any>>
  }
  /** Waits until attempt `attempt` (the newest delivery) is recorded with its outcome and the next retry. */
  const recorded = (attempt: number, timeoutMs?: number) =>
    eventually(async () => (await deliveries())[0]?.attempt === attempt, `attempt ${attempt} recorded`, timeoutMs)
  return { ...owner, hook, write, view, deliveries, recorded }
}

/**
 * Moves the manual clock and wakes the dispatcher, which would otherwise notice only at its
 * next poll: the 3-day test takes some 80 steps, and each poll waited for adds up.
 */
function advance (ms: number): void {
  clock.advance(ms)
  webhooks.dispatcher.wake()
}

/** Lets the dispatcher look (several polls) and shows nothing more arrived. */
const settle = () => new Promise(resolve => setTimeout(resolve, 150))

describe('webhook delivery', () => {
  it('POSTs every change after creation, in version order, as its change entry, signed (Standard Webhooks)', async () => {
    const r = await receiver()
    serial += 1
    const owner = await ownerWithProject(app.url, `order${serial}`)
    // A change before the webhook exists is not delivered.
    await call(app.url, 'POST', `${owner.path}/content/set`, { token: owner.key, body: { path: 'before', value: true } })
    const created = await call(app.url, 'POST', `${owner.path}/webhooks`, { token: owner.session, body: { url: r.url, description: 'all' } })
    expect(created.status).toBe(201)
    expect(created.body).toEqual({ id: expect.stringMatching(/^whk_/), url: r.url, paths: null, ops: null, secret: expect.stringMatching(/^whsec_/), createdAt: expect.any(String) })
    // 20 changes, partly concurrent (one group commit), from one key.
    await Promise.all(Array.from({ length: 10 }, (_, i) => call(app.url, 'POST', `${owner.path}/content/push`, { token: owner.key, body: { path: 'list', value: i } })))
    for (let i = 0; i < 10; i++) await call(app.url, 'POST', `${owner.path}/content/increment`, { token: owner.key, body: { path: 'n' } })
    await until(() => r.received.length >= 20, '20 deliveries')
    await settle()
    expect(r.received).toHaveLength(20)
    r.verifyAll(created.body.secret)
    const log = await call(app.url, 'GET', `${owner.path}/content/changes?since=1`, { token: owner.key })
    expect(r.entries()).toEqual(log.body.changes)
    expect(r.entries().map(e => e.version)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2))
    expect(r.received.map(x => x.headers['webhook-id'])).toEqual(r.entries().map(e => `msg_${created.body.id}_${e.version}`))
    expect(r.received[0]!.headers['content-type']).toBe('application/json')
    // A signature made with another secret does not verify.
    expect(() => new Webhook('whsec_' + Buffer.alloc(32, 7).toString('base64')).verify(r.received[0]!.body, r.received[0]!.headers)).toThrow()
    const text = await metrics.registry.metrics()
    expect(text).toContain(`contentd_webhook_lag_versions{webhook="${created.body.id}"} 0`)
    expect(Number(/contentd_webhook_deliveries_total\{outcome="delivered"\} (\d+)/.exec(text)?.[1])).toBeGreaterThanOrEqual(20)
  })

  it('delivers only changes at or below `paths` with an op in `ops`; update and revert match every filter', async () => {
    const r = await receiver()
    const p = await project(r.url, { paths: ['site', 'shop.stock'], ops: ['set', 'push'] })
    await p.write('set', { path: 'site.title', value: 'Hi' }) // v1 yes
    await p.write('increment', { path: 'site.views' }) // v2 no: op
    await p.write('set', { path: 'other.x', value: 1 }) // v3 no: path
    await p.write('push', { path: 'site.tags', value: 'a' }) // v4 yes
    await p.write('set', { path: 'sitemap', value: 1 }) // v5 no: "sitemap" is not below "site"
    await p.write('set', { path: 'shop.stock.apples', value: 3 }) // v6 yes
    await p.write('set', { path: 'shop', value: {} }) // v7 no: above shop.stock, not at or below it
    await call(app.url, 'POST', `${p.path}/content`, { token: p.key, body: { site: { title: 'New' } } }) // v8 yes: update
    await p.write('delete', { path: 'site.title' }) // v9 no: op
    await p.write('revert', { version: 1 }) // v10 yes: revert
    await p.write('set', { path: 'z', value: 0 }) // v11 no
    await eventually(async () => (await p.view()).cursor === 11, 'the cursor past v11')
    expect(r.entries().map(e => e.version)).toEqual([1, 4, 6, 8, 10])
    expect(r.entries().map(e => e.op)).toEqual(['set', 'push', 'set', 'update', 'revert'])
    r.verifyAll(p.hook.secret)
  })

  it('retries a failing change with backoff (1 s, 2 s, 4 s...) on the same webhook-id, then goes on in order', async () => {
    const r = await receiver((_req, index) => index < 3 ? 500 : 204)
    const p = await project(r.url)
    await p.write('set', { path: 'a', value: 1 })
    await p.write('set', { path: 'b', value: 2 })
    const delays: number[] = []
    for (const [index, expectedDelay] of [1000, 2000, 4000].entries()) {
      await p.recorded(index + 1)
      const view = await p.view()
      const due = Date.parse(view.nextAttemptAt) - clock.now()
      delays.push(due)
      expect(view.failingSince).not.toBeNull()
      const before = r.received.length
      advance(expectedDelay - 1)
      await settle()
      expect(r.received.length, 'no retry before it is due').toBe(before)
      advance(1)
      // At least: once attempt 4 succeeds, v2 follows at once, maybe before the next look.
      await until(() => r.received.length >= before + 1, `attempt ${before + 1}`)
    }
    expect(delays).toEqual([1000, 2000, 4000])
    await until(() => r.received.length === 5, 'v2 after v1 succeeded')
    expect(r.entries().map(e => e.version)).toEqual([1, 1, 1, 1, 2])
    expect(new Set(r.received.slice(0, 4).map(x => x.headers['webhook-id'])).size).toBe(1)
    r.verifyAll(p.hook.secret)
    await eventually(async () => (await p.view()).cursor === 2, 'cursor at v2')
    const list = await p.deliveries()
    expect(list.map(d => [d.version, d.status, d.outcome, d.attempt])).toEqual([
      [2, 204, 'delivered', 1], [1, 204, 'delivered', 4], [1, 500, 'failed', 3], [1, 500, 'failed', 2], [1, 500, 'failed', 1]
    ])
    expect(list[2]).toMatchObject({ error: 'HTTP 500', durationMs: expect.any(Number), at: expect.any(String) })
    expect((await p.view()).failingSince).toBeNull()
  })

  it('treats a redirect as a failure and never follows it', async () => {
    const r = await receiver(302)
    const p = await project(r.url)
    await p.write('set', { path: 'a', value: 1 })
    await eventually(async () => (await p.deliveries()).length === 1, 'one attempt')
    expect((await p.deliveries())[0]).toMatchObject({ status: 302, outcome: 'failed', error: 'HTTP 302 (redirects are not followed)' })
    expect(r.received).toHaveLength(1)
  })

  it('disables a webhook after 3 days of failures, says why, and stops trying', async () => {
    const r = await receiver()
    await r.stop() // a dead receiver: connections are refused
    const p = await project(r.url)
    await p.write('set', { path: 'a', value: 1 })
    await p.recorded(1)
    const started = clock.now()
    // Some 80 steps: each waits on the stored webhook (cheap) rather than on API reads, which
    // on a loaded machine made this test approach its time limit; the API is checked after.
    const stored = async () => (await app.store.webhooks.find(p.hook.id))!
    let hook = await stored()
    for (let attempt = 2; hook.disabledAt === null; attempt++) {
      expect(clock.now() - started, 'disabled within 3 days and an hour').toBeLessThanOrEqual(3 * 86_400_000 + 3_600_000)
      advance(Date.parse(hook.nextAttemptAt!) - clock.now())
      await eventually(async () => (hook = await stored()).failures === attempt, `attempt ${attempt} recorded`, 5000)
    }
    const view = await p.view()
    expect(view.enabled).toBe(false)
    expect(clock.now() - started).toBeGreaterThanOrEqual(3 * 86_400_000)
    expect(view.disabledReason).toMatch(/^Disabled at .*: every attempt since .* failed \(3 days\); the last at version 1: ECONNREFUSED/)
    expect(view.nextAttemptAt).toBeNull()
    const attempts = (await p.deliveries())[0]!.attempt
    expect(attempts).toBeGreaterThan(70) // hourly once the backoff reaches an hour
    await p.write('set', { path: 'b', value: 2 })
    advance(86_400_000)
    await settle()
    expect((await p.deliveries())[0]!.attempt, 'no attempt once disabled').toBe(attempts)
  })

  it('reports changes that left the retained history before delivery as lost, then delivers the rest', async () => {
    const r = await receiver(500)
    const p = await project(r.url)
    await p.write('set', { path: 'a', value: 0 })
    await p.recorded(1)
    for (let i = 1; i <= HISTORY_LIMIT + 10; i++) await p.write('set', { path: 'a', value: i })
    r.answer = 204
    clock.advance(1000) // no wake: the dispatcher's own poll finds the retry that came due
    // v1..v11 are gone (the newest 30 of 41 are kept): reported lost, v12..v41 delivered.
    await eventually(async () => (await p.view()).cursor === HISTORY_LIMIT + 11, 'the cursor at v41')
    expect(r.entries().slice(1).map(e => e.version)).toEqual(Array.from({ length: HISTORY_LIMIT }, (_, i) => i + 12))
    const lost = (await p.deliveries()).filter(d => d.outcome === 'lost')
    expect(lost).toEqual([{ version: 11, status: null, outcome: 'lost', attempt: 0, error: 'versions 1–11 left the retained history (HISTORY_LIMIT) before delivery; not sent', at: expect.any(String), durationMs: 0 }])
    expect(await metrics.registry.metrics()).toMatch(/contentd_webhook_deliveries_total\{outcome="lost"\} 11/)
  })

  it('a receiver that does not answer holds up neither writes nor other webhooks', async () => {
    let release: () => void = () => undefined
    const released = new Promise<void>(resolve => { release = resolve })
    const slow = await receiver(async () => { await released; return 204 })
    const fast = await receiver()
    serial += 1
    const owner = await ownerWithProject(app.url, `slow${serial}`)
    for (const url of [slow.url, fast.url]) {
      expect((await call(app.url, 'POST', `${owner.path}/webhooks`, { token: owner.session, body: { url } })).status).toBe(201)
    }
    for (let i = 0; i < 5; i++) {
      const w = await call(app.url, 'POST', `${owner.path}/content/increment`, { token: owner.key, body: { path: 'n' } })
      expect(w.status).toBe(200)
    }
    await until(() => fast.received.length === 5, 'the fast receiver has every change')
    expect(slow.received, 'the slow one is still on its first').toHaveLength(1)
    release()
    await until(() => slow.received.length === 5, 'the slow receiver catches up')
    expect(slow.entries().map(e => e.version)).toEqual([1, 2, 3, 4, 5])
  })

  it('pings on POST …/test, signed, and answers how it went', async () => {
    const r = await receiver()
    const p = await project(r.url)
    const ping = await call(app.url, 'POST', `${p.path}/webhooks/${p.hook.id}/test`, { token: p.session })
    expect(ping.status).toBe(200)
    expect(ping.body).toEqual({ delivered: true, status: 204, durationMs: expect.any(Number) })
    r.verifyAll(p.hook.secret)
    expect(JSON.parse(r.received[0]!.body)).toEqual({ type: 'ping', webhook: p.hook.id, project: `@${p.path.split('@')[1]}`, at: expect.any(String) })
    r.answer = 503
    const failed = await call(app.url, 'POST', `${p.path}/webhooks/${p.hook.id}/test`, { token: p.session })
    expect(failed.body).toEqual({ delivered: false, status: 503, error: 'HTTP 503', durationMs: expect.any(Number) })
  })
})

describe('no SSRF at delivery', () => {
  it('does not contact a name that resolves to loopback (localhost), and records why', async () => {
    const r = await receiver()
    const result = await sendWebhook({
      url: `https://localhost:${r.port}/hook`, secret: 'whsec_' + Buffer.alloc(32, 1).toString('base64'), messageId: 'msg_1', payload: '{}', now: Date.now(), allowPrivate: false
    })
    expect(result).toMatchObject({ ok: false, status: null })
    expect(result.error).toMatch(/^not contacted: localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/)
    const literal = await sendWebhook({ url: `https://127.0.0.1:${r.port}/hook`, secret: 'whsec_' + Buffer.alloc(32, 1).toString('base64'), messageId: 'msg_1', payload: '{}', now: Date.now(), allowPrivate: false })
    expect(literal.error).toBe('not contacted: 127.0.0.1 is a loopback address')
    const plain = await sendWebhook({ url: r.url, secret: 'whsec_' + Buffer.alloc(32, 1).toString('base64'), messageId: 'msg_1', payload: '{}', now: Date.now(), allowPrivate: false })
    expect(plain.error).toMatch(/^http: URLs are refused/)
    expect(r.received).toHaveLength(0)
  })

  // docs/design.md §13b: the review's forms, as what a name resolves to at delivery time.
  it.each(['::ffff:0:127.0.0.1', '64:ff9b:1::127.0.0.1', '203.0.113.7', '2001:db8::7'])('does not contact a name that resolves to %s at delivery', async (address) => {
    const r = await receiver()
    const result = await sendWebhook({
      url: `https://rebind.example:${r.port}/hook`, secret: 'whsec_' + Buffer.alloc(32, 1).toString('base64'), messageId: 'msg_1', payload: '{}', now: Date.now(),
      allowPrivate: false, resolve: async () => [address]
    })
    expect(result).toMatchObject({ ok: false, status: null })
    expect(result.error).toMatch(new RegExp(`^not contacted: rebind\\.example resolves to ${address.replace(/\./g, '\\.')}, which is a`))
    expect(r.received).toHaveLength(0)
  })

  it('a dispatcher without WEBHOOK_ALLOW_PRIVATE records the refusal instead of sending', async () => {
    const r = await receiver()
    const p = await project(`https://localhost:${r.port}/hook`)
    // This app's own dispatcher allows private targets; a strict one on the same store runs
    // first: stop the lenient one for the duration.
    await webhooks.dispatcher.stop()
    const strict = createWebhooks({ config: { ...app.config, webhooks: { ...app.config.webhooks, allowPrivate: false } }, store: app.store, logger: createLogger('silent'), now: clock.now, pollIntervalMs: 20 })
    strict.dispatcher.start()
    try {
      await p.write('set', { path: 'a', value: 1 })
      await eventually(async () => (await p.deliveries()).length === 1, 'the refused attempt')
      expect((await p.deliveries())[0]).toMatchObject({ version: 1, status: null, outcome: 'failed', error: expect.stringMatching(/^not contacted: localhost resolves to .*loopback/) })
      expect(r.received).toHaveLength(0)
    } finally {
      await strict.dispatcher.stop()
    }
  })
})
