// The offline example page (docs/examples/offline/, no bundler) in real Chromium with real
// IndexedDB: the server is reached through a TCP proxy the test cuts. Writes made while it
// is cut show at once, survive three reloads and a closed tab, then land exactly once when
// the server is back (counter and version). Also prints how long a ~1 MiB kept copy takes
// to show from IndexedDB on a reload with the server unreachable (printed, not asserted:
// the machine is shared).
import { rmSync } from 'node:fs'
import type { Server } from 'node:http'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, launchChromium, requireChromium } from '../support/browser.js'
import { CuttableProxy } from '../support/cuttable-proxy.js'
import { call, ownerWithProject } from '../support/http.js'
import { PROJECT_ROOT, startServerProcess, type ServerProcess } from '../support/server-process.js'

requireChromium('the offline example browser test')

interface Example { server: Server, url: string }
interface PageState { count: string, pending: string, version: string, renders: number, firstRenderMs: number | undefined }

let example: Example
let server: ServerProcess
let proxy: CuttableProxy
let browser: Browser

beforeAll(async () => {
  if (!hasChromium) return
  // A path held in a variable: the example is plain JavaScript, loaded as it is.
  const serveModule = pathToFileURL(join(PROJECT_ROOT, 'docs/examples/offline/serve.mjs')).href
  const { serveExample } = await import(serveModule) as { serveExample: (port?: number) => Promise<Example> }
  example = await serveExample()
  // BODY_LIMIT: the ~1 MiB content is written in one request.
  server = await startServerProcess({ env: { CORS_ORIGINS: new URL(example.url).origin, BODY_LIMIT: String(4 * 1024 * 1024) } })
  proxy = new CuttableProxy(server.port)
  await proxy.start()
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await proxy?.stop()
  await server?.stop()
  if (server) rmSync(server.dataDir, { recursive: true, force: true })
  await new Promise(resolve => example ? example.server.close(resolve) : resolve(undefined))
})

const state = (page: Page): Promise<PageState> => page.evaluate(() => {
  const text = (id: string) => (document.getElementById(id) as HTMLOutputElement).value
  const w = window as unknown as { example?: { renders: number, firstRenderMs: number | undefined } }
  return { count: text('count'), pending: text('pending'), version: text('version'), renders: w.example?.renders ?? 0, firstRenderMs: w.example?.firstRenderMs }
})

async function waitFor (page: Page, what: string, check: (s: PageState) => boolean, timeoutMs = 15_000): Promise<PageState> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const s = await state(page)
    if (check(s)) return s
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; page: ${JSON.stringify(s)}`)
    await new Promise(resolve => setTimeout(resolve, 25))
  }
}

/** The kept copy's version in IndexedDB, read through the page's own store. */
const keptVersion = (page: Page, ref: string): Promise<number | undefined> => page.evaluate(async key => {
  const store = (window as unknown as { example: { store: { get (key: string): Promise<{ version: number } | undefined> } } }).example.store
  return (await store.get(key))?.version
}, `copy/${ref}`)

const serverState = async (path: string, token: string) => {
  const r = await call(server.url, 'GET', `${path}/content`, { token })
  return { content: r.body as Record<string, unknown>, version: Number(JSON.parse(r.headers.get('etag') ?? '"-1"')) }
}

describe.skipIf(!hasChromium)('offline example in Chromium', { timeout: 120_000 }, () => {
  let context: BrowserContext
  beforeAll(async () => { context = await browser.newContext() })
  afterAll(async () => { await context?.close() })

  it('writes made offline survive three reloads and a closed tab, then land exactly once', async () => {
    const { key, path } = await ownerWithProject(server.url, 'offweb')
    const ref = '@offweb/demo'
    const url = `${example.url}#server=http://127.0.0.1:${proxy.port}&token=${key}&project=${ref}`
    let page = await context.newPage()
    const pageErrors: string[] = []
    page.on('pageerror', error => pageErrors.push(error.message))
    await page.goto(url)
    await waitFor(page, 'the first content', s => s.version === '0' && s.count === '0')
    for (let tries = 0; (await keptVersion(page, ref)) !== 0; tries++) {
      if (tries > 200) throw new Error('the copy was not kept')
      await new Promise(resolve => setTimeout(resolve, 25))
    }

    proxy.cut()
    for (let i = 0; i < 5; i++) await page.click('#increment')
    await waitFor(page, 'five writes shown at once', s => s.count === '5' && s.pending === '5')
    // Durable in IndexedDB before the page goes away.
    for (let tries = 0; ; tries++) {
      const queued = await page.evaluate(async () => (await (window as unknown as { example: { store: { keys (p: string): Promise<string[]> } } }).example.store.keys('outbox/')).length)
      if (queued === 5) break
      if (tries > 200) throw new Error(`${queued} writes in IndexedDB, not 5`)
      await new Promise(resolve => setTimeout(resolve, 25))
    }

    for (let reload = 0; reload < 3; reload++) {
      await page.reload()
      await waitFor(page, `the writes after reload ${reload + 1}`, s => s.renders > 0 && s.count === '5' && s.pending === '5' && s.version === '0')
    }
    await page.close()
    page = await context.newPage()
    page.on('pageerror', error => pageErrors.push(error.message))
    await page.goto(url)
    await waitFor(page, 'the writes in a new tab', s => s.count === '5' && s.pending === '5')
    expect(await serverState(path, key)).toEqual({ content: {}, version: 0 })

    proxy.reopen()
    await waitFor(page, 'the outbox sent', s => s.pending === '0' && s.version === '5' && s.count === '5', 30_000)
    expect(await serverState(path, key)).toEqual({ content: { n: 5 }, version: 5 })
    expect(pageErrors).toEqual([])
    await page.close()
  })

  it('a ~1 MiB kept copy shows from IndexedDB with the server unreachable (timing printed)', async () => {
    const { key, path } = await ownerWithProject(server.url, 'offbig')
    const ref = '@offbig/demo'
    // About 1 MiB of JSON: 4096 items of 256 characters, and the counter.
    const items = Array.from({ length: 4096 }, (_, i) => `${i}:`.padEnd(256, 'x'))
    const updated = await call(server.url, 'POST', `${path}/content`, { token: key, body: { n: 7, items } })
    expect(updated.status).toBe(200)
    const bytes = Buffer.byteLength(JSON.stringify({ n: 7, items }))
    expect(bytes).toBeGreaterThan(1024 * 1024)
    const url = `${example.url}#server=http://127.0.0.1:${proxy.port}&token=${key}&project=${ref}`
    const page = await context.newPage()
    await page.goto(url)
    await waitFor(page, 'the large content', s => s.version === '1' && s.count === '7')
    for (let tries = 0; (await keptVersion(page, ref)) !== 1; tries++) {
      if (tries > 400) throw new Error('the large copy was not kept')
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    proxy.cut()
    const timings: number[] = []
    for (let reload = 0; reload < 3; reload++) {
      await page.reload()
      const shown = await waitFor(page, 'the kept large copy', s => s.renders > 0 && s.count === '7' && s.version === '1')
      timings.push(shown.firstRenderMs as number)
    }
    proxy.reopen()
    console.log(`offline: a ${(bytes / 1048576).toFixed(2)} MiB kept copy shown from IndexedDB in ${timings.map(t => t.toFixed(1)).join(', ')} ms (script start to first render, 3 reloads, server unreachable)`)
    expect(timings.every(t => Number.isFinite(t) && t > 0)).toBe(true)
    await page.close()
  })
})
