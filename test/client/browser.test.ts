// The client SDK in a real browser (Debian's chromium through playwright-core), used the
// way a page without a bundler would: a page on its own origin imports the built ES modules
// the contentd server serves at /shared/ (dist/shared/), with an import map pointing the one
// bare specifier, `socket.io-client`, at the ESM client Socket.IO serves itself. The page
// keeps a live copy that must equal the stored content, writes with the SDK, and gets
// ContentdErrors with status and code.
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SUCCESS_MESSAGES } from '../../shared/operation-table.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

const CHROMIUM = '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) {
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is required on CI (.ci/run installs chromium)`)
  console.warn(`\n*** SKIPPING the SDK browser test: ${CHROMIUM} is not installed (apt-get install chromium) ***\n`)
}

/** The page a user would write, loading everything from the contentd server at `api`. */
const pageFor = (api: string) => `<!doctype html>
<meta charset="utf-8">
<title>SDK in the browser</title>
<script type="importmap">{ "imports": { "socket.io-client": "${api}/socket.io/socket.io.esm.min.js" } }</script>
<script type="module">
  import * as sdk from '${api}/shared/client/index.js'
  window.sdk = sdk
</script>
`

/** What the page keeps on window (types for the functions run inside it). */
interface LiveState { content: unknown, version: number | undefined, updates: number, error: ErrorSummary | null }
interface ErrorSummary { isContentdError: boolean, name: string, status: number, code: string, message: string }
interface Sdk {
  createClient (options: { baseUrl: string, token?: string }): any
  ContentdError: new (...args: any[]) => Error
}
interface PageGlobals { sdk: Sdk, client: any, live: LiveState, subscription: any }

describe.skipIf(!hasChromium)('client SDK in chromium', () => {
  let app: TestApp
  /** Serves the page alone, on another loopback port: another origin than the API's. */
  let pageServer: Server
  let browser: Browser
  let page: Page
  const problems: string[] = []
  /** Every URL the page requested from the contentd server. */
  const requested: string[] = []

  beforeAll(async () => {
    app = await startTestApp({}, { realtime: true })
    pageServer = createServer((_req, res) => { res.setHeader('content-type', 'text/html'); res.end(pageFor(app.url)) })
    await new Promise<void>(resolve => pageServer.listen(0, '127.0.0.1', resolve))
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']
    })
    page = await browser.newPage()
    page.on('console', message => { if (message.type() === 'error') problems.push(message.text()) })
    page.on('pageerror', error => problems.push(error.message))
    page.on('request', request => { if (request.url().startsWith(app.url)) requested.push(request.url().slice(app.url.length)) })
    await page.goto(`http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`)
    await page.waitForFunction(() => 'sdk' in window, undefined, { timeout: 5000 })
  })
  afterAll(async () => {
    await browser?.close()
    pageServer?.closeAllConnections()
    await new Promise(resolve => pageServer ? pageServer.close(resolve) : resolve(undefined))
    await app?.close()
  })

  it('loads as ES modules from another origin with only socket.io-client mapped', () => {
    expect(requested).toEqual(expect.arrayContaining(['/socket.io/socket.io.esm.min.js', '/shared/client/index.js', '/shared/client/realtime.js', '/shared/client/subscription.js', '/shared/operations.js', '/shared/events.js']))
    // Nothing but the SDK's modules and Socket.IO's client; the zod-based schemas stay out.
    expect(requested.filter(url => !/^\/(shared\/[a-z/-]+\.js|socket\.io\/socket\.io\.esm\.min\.js)$/.test(url))).toEqual([])
    expect(requested).not.toContain('/shared/schemas.js')
    expect(problems).toEqual([])
  })

  it('keeps a live copy equal to the stored content, writes, and reports ContentdErrors', async () => {
    const { key, path } = await ownerWithProject(app.url, 'browsersdk')
    await call(app.url, 'POST', `${path}/content`, { token: key, body: { stats: { visits: 1 }, posts: ['first'], title: 'Hello' } })

    const snapshotVersion = await page.evaluate(async ({ baseUrl, token }) => {
      const g = window as unknown as PageGlobals
      g.client = g.sdk.createClient({ baseUrl, token })
      g.live = { content: undefined, version: undefined, updates: 0, error: null }
      g.subscription = g.client.project('@browsersdk/demo').subscribe((content: unknown, version: number) => {
        // A copy: the SDK updates its own object in place.
        g.live = { ...g.live, content: structuredClone(content), version, updates: g.live.updates + 1 }
      }, { onError: (e: any) => { g.live.error = { isContentdError: true, name: e.name, status: e.status, code: e.code, message: e.message } } })
      await g.subscription.ready
      return g.live.version
    }, { baseUrl: app.url, token: key })
    expect(snapshotVersion).toBe(1)

    // Every kind of change, made over HTTP, reaches the page's copy within a second.
    const changes: Array<[string, unknown]> = [
      ['increment', { path: 'stats.visits', value: 41 }],
      ['decrement', { path: 'stats.visits', value: 2 }],
      ['set', { path: 'stats.label', value: { text: 'visits', unicode: 'é😀' } }],
      ['push', { path: 'posts', value: { id: 2 } }],
      ['insert', { path: 'posts', index: 0, value: 'zero' }],
      ['delete', { path: 'title' }],
      ['set', { path: 'posts.1', value: null }]
    ]
    for (const [op, body] of changes) {
      const response = await call(app.url, 'POST', `${path}/content/${op}`, { token: key, body })
      expect(response.status, `${op} ${response.text}`).toBe(200)
      const version = Number(JSON.parse(response.headers.get('etag') as string))
      await page.waitForFunction(v => (window as unknown as PageGlobals).live.version === v, version, { timeout: 1000 })
      const stored = await call(app.url, 'GET', `${path}/content`, { token: key })
      expect(await page.evaluate(() => (window as unknown as PageGlobals).live.content), `after ${op}`).toEqual(stored.body)
    }
    expect(await page.evaluate(() => (window as unknown as PageGlobals).live.updates)).toBe(1 + changes.length)

    // A write from the page is stored (seen over HTTP) and comes back to its live copy.
    const written = await page.evaluate(() => (window as unknown as PageGlobals).client.project('@browsersdk/demo').set('from.page', { ok: true, n: 7 }))
    expect(written).toEqual({ message: SUCCESS_MESSAGES.set, version: 2 + changes.length, replayed: false })
    expect((await call(app.url, 'GET', `${path}/content?path=from.page`, { token: key })).body).toEqual({ ok: true, n: 7 })
    await page.waitForFunction(v => (window as unknown as PageGlobals).live.version === v, written.version, { timeout: 1000 })
    expect(await page.evaluate(() => (window as unknown as PageGlobals).live.content)).toEqual((await call(app.url, 'GET', `${path}/content`, { token: key })).body)

    // Failures are ContentdErrors with the server's status and code.
    const failures = await page.evaluate(async ({ baseUrl }) => {
      const g = window as unknown as PageGlobals
      const summary = (e: any): ErrorSummary => ({ isContentdError: e instanceof g.sdk.ContentdError, name: e.name, status: e.status, code: e.code, message: e.message })
      const results: ErrorSummary[] = []
      const demo = g.client.project('@browsersdk/demo')
      for (const attempt of [() => demo.get('no.such.path'), () => demo.increment('posts'), () => g.sdk.createClient({ baseUrl, token: 'cdk_not_a_real_key' }).me()]) {
        try { await attempt(); results.push({ isContentdError: false, name: 'resolved', status: 0, code: '', message: '' }) } catch (e) { results.push(summary(e)) }
      }
      return results
    }, { baseUrl: app.url })
    expect(failures).toEqual([
      expect.objectContaining({ isContentdError: true, name: 'ContentdError', status: 404, code: 'PATH_NOT_FOUND' }),
      expect.objectContaining({ isContentdError: true, name: 'ContentdError', status: 400, code: 'NOT_A_NUMBER' }),
      expect.objectContaining({ isContentdError: true, name: 'ContentdError', status: 401, code: 'INVALID_TOKEN' })
    ])
    expect(await page.evaluate(() => (window as unknown as PageGlobals).live.error)).toBeNull()
    // A browser error page is logged for each failed fetch (404, 400, 401); nothing else.
    expect(problems.filter(p => !/status of (404|400|401)/.test(p))).toEqual([])
  })

  it('reports a refused subscription (bad token) through onError and ready', async () => {
    const refusal = await page.evaluate(async ({ baseUrl }) => {
      const g = window as unknown as PageGlobals
      const client = g.sdk.createClient({ baseUrl, token: 'cdk_not_a_real_key' })
      let reported: ErrorSummary | null = null
      const subscription = client.project('@browsersdk/demo').subscribe(() => {}, {
        onError: (e: any) => { reported = { isContentdError: e instanceof g.sdk.ContentdError, name: e.name, status: e.status, code: e.code, message: e.message } }
      })
      try { await subscription.ready; return { ready: 'resolved', reported } } catch (e: any) { return { ready: e.code as string, reported } } finally { client.close() }
    }, { baseUrl: app.url })
    expect(refusal).toEqual({ ready: 'INVALID_TOKEN', reported: expect.objectContaining({ isContentdError: true, status: 401, code: 'INVALID_TOKEN' }) })
  })
})
