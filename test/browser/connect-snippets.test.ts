// The Connect tab's examples (console/snippets.ts), copied off the page and run as shown
// (issue 34: "the Connect page's snippets run as shown"): curl in bash, the SDK example in
// Node, the page without a bundler and the EventSource example in Chromium on another origin,
// as an app would. Each with the key the page made and filled in, read-write then read-only.
import { execFile, spawn } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ARTIFACTS, hasChromium, launchChromium, requireChromium } from '../support/browser.js'
import { call, createProject } from '../support/http.js'
import { PROJECT_ROOT } from '../support/server-process.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

requireChromium('the Connect snippets browser test')

const PROJECT = '@cara/site'
const API = `/api/${PROJECT}`
/** CI is slow: every wait for the page or a child process allows this long. */
const WAIT = 15_000

describe.skipIf(!hasChromium)("the Connect tab's snippets, run as shown", () => {
  let app: TestApp
  let browser: Browser
  let page: Page
  let session = ''
  /** Another origin, as an app's own site: serves the page snippet, or an empty page. */
  let site: Server
  let siteUrl = ''
  let sitePage = '<!doctype html><title>app</title>'

  const stored = async () => (await call(app.url, 'GET', `${API}/content`, { token: session })).body as { data: { visits: number } }
  const snippet = (title: string) => page.locator('section.snippet', { has: page.getByRole('heading', { name: title, exact: true }) }).locator('pre')
  const shell = (script: string) => promisify(execFile)('bash', ['-c', script], { encoding: 'utf8', timeout: WAIT })

  /** Makes a key with the Connect tab's button; the examples are filled in with it once the server lists it. */
  async function createKey (button: string): Promise<string> {
    const field = page.getByLabel(/^New API key/)
    // A key made before may still be shown: wait for the new one (seen racing under load).
    const shown = await field.count() > 0 ? await field.inputValue() : ''
    await page.getByRole('button', { name: button }).click()
    await expect.poll(() => field.inputValue(), { timeout: WAIT }).not.toBe(shown)
    const secret = await field.inputValue()
    expect(secret).toMatch(/^cdk_/)
    await expect.poll(() => snippet('curl').textContent(), { timeout: WAIT }).toContain(secret)
    return secret
  }

  beforeAll(async () => {
    app = await startTestApp({}, { realtime: true })
    const signup = await call(app.url, 'POST', '/api/auth/signup', { body: { username: 'cara', password: 'correct horse battery staple' } })
    session = signup.body.token as string
    await createProject(app.url, session, 'site')
    expect((await call(app.url, 'POST', `${API}/content`, { token: session, body: { data: { visits: 0 } } })).status).toBe(200)
    site = createServer((req, res) => { res.writeHead(200, { 'content-type': 'text/html' }).end(req.url === '/page' ? sitePage : '<!doctype html><title>app</title>') })
    await new Promise<void>(resolve => site.listen(0, '127.0.0.1', resolve))
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
    browser = await launchChromium()
    const context = await browser.newContext()
    context.setDefaultTimeout(WAIT)
    // Signed in as the console keeps it (console/session.ts), only on the console's origin.
    await context.addInitScript(`if (location.origin === ${JSON.stringify(app.url)}) sessionStorage.setItem('contentd.session', ${JSON.stringify(JSON.stringify({ token: session, username: signup.body.username }))})`)
    page = await context.newPage()
    await page.goto(`${app.url}/#/${PROJECT}/connect`)
    await page.getByRole('heading', { name: 'Key for these examples' }).waitFor()
  })
  afterAll(async () => {
    await browser?.close()
    await new Promise(resolve => site?.close(resolve))
    await app?.close()
  })

  it('read-write key: the curl lines read and add 1; the SDK example adds 1 and prints the live content', async () => {
    await createKey('Create a read-write key')
    const curl = await snippet('curl').textContent() as string
    expect(curl).toContain('/content/increment')
    const run = await shell(curl)
    // Two answers, one after the other: the content, then the increment's.
    expect(run.stdout).toContain(JSON.stringify({ data: { visits: 0 } }))
    expect(run.stdout).toContain('"message":"Value incremented successfully"')
    expect((await stored()).data.visits).toBe(1)

    // The SDK example as a module of an app inside this package (so 'contentd/client' resolves
    // to this clone, as after `npm install /path/to/contentd`); it subscribes, so it is stopped.
    const sdk = await snippet('Node or a bundler').textContent() as string
    mkdirSync(ARTIFACTS, { recursive: true })
    const file = join(ARTIFACTS, `connect-sdk-${process.pid}.mjs`)
    writeFileSync(file, sdk)
    const child = spawn(process.execPath, [file], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
    try {
      await expect.poll(() => output, { timeout: WAIT }).toMatch(/visits: 2/)
      expect((await stored()).data.visits).toBe(2)
      // Live: a change made elsewhere is printed too.
      expect((await call(app.url, 'POST', `${API}/content/set`, { token: session, body: { path: 'data.visits', value: 10 } })).status).toBe(200)
      await expect.poll(() => output, { timeout: WAIT }).toMatch(/visits: 10/)
    } finally {
      child.kill()
      rmSync(file, { force: true })
    }
  })

  it('read-only key: curl only reads; the page without a bundler and EventSource follow the content from another origin', async () => {
    const secret = await createKey('Create a read-only key')
    const curl = await snippet('curl').textContent() as string
    expect(curl).not.toContain('/content/increment')
    expect(JSON.parse((await shell(curl)).stdout)).toEqual(await stored())

    const app2 = await browser.newPage()
    try {
      // The page without a bundler, as the app's own page on its own origin.
      sitePage = await snippet('A web page without a bundler').textContent() as string
      expect(sitePage).toContain(secret)
      await app2.goto(`${siteUrl}/page`)
      const visits = (await stored()).data.visits
      await expect.poll(async () => JSON.parse(await app2.evaluate(() => document.body.textContent ?? 'null')) as unknown, { timeout: WAIT }).toEqual({ data: { visits } })
      expect((await call(app.url, 'POST', `${API}/content/increment`, { token: session, body: { path: 'data.visits', value: 1 } })).status).toBe(200)
      await expect.poll(async () => JSON.parse(await app2.evaluate(() => document.body.textContent ?? 'null')) as unknown, { timeout: WAIT }).toEqual({ data: { visits: visits + 1 } })

      // EventSource, run in a page of that origin; what it logs is collected.
      const logged: unknown[][] = []
      app2.on('console', message => { void Promise.all(message.args().map(a => a.jsonValue() as Promise<unknown>)).then(args => logged.push(args)) })
      await app2.goto(`${siteUrl}/blank`)
      const events = await snippet('Server-Sent Events (EventSource, no library)').textContent() as string
      await app2.evaluate(events)
      await expect.poll(() => logged.find(args => args[0] === 'content'), { timeout: WAIT }).toEqual(['content', { data: { visits: visits + 1 } }])
      expect((await call(app.url, 'POST', `${API}/content/set`, { token: session, body: { path: 'data.visits', value: 100 } })).status).toBe(200)
      await expect.poll(() => logged.find(args => args[0] === 'change'), { timeout: WAIT }).toEqual(['change', expect.objectContaining({ op: 'set', path: 'data.visits', value: 100 })])
    } finally {
      await app2.close()
    }
  })
})
