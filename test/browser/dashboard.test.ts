// The dashboard in a real browser (Debian's chromium through playwright-core): sign in,
// open a project, see an HTTP change appear live, create an API key in the UI and use it.
// Screenshots (desktop and 375 px wide) go to test-artifacts/ for people to look at. With
// UPDATE_SCREENSHOTS=1 the desktop one also replaces the README's docs/images/dashboard.png
// (only then, so ordinary runs leave the working tree clean).
import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, Recorder, subscribe } from '../realtime/client.js'
import { call, PASSWORD, ownerWithProject } from '../support/http.js'
import { PROJECT_ROOT } from '../support/server-process.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

const CHROMIUM = '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) {
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is required on CI (.ci/run installs chromium)`)
  console.warn(`\n*** SKIPPING the browser test: ${CHROMIUM} is not installed (apt-get install chromium) ***\n`)
}
const ARTIFACTS = join(PROJECT_ROOT, 'test-artifacts')
const README_SCREENSHOT = join(PROJECT_ROOT, 'docs', 'images', 'dashboard.png')
const updateScreenshots = process.env.UPDATE_SCREENSHOTS === '1'

describe.skipIf(!hasChromium)('dashboard in chromium', () => {
  let app: TestApp
  let browser: Browser
  let page: Page
  const problems: string[] = []

  beforeAll(async () => {
    app = await startTestApp({}, { realtime: true })
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']
    })
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    // CSP violations and script errors show up here; the page must have none.
    page.on('console', message => { if (message.type() === 'error') problems.push(message.text()) })
    page.on('pageerror', error => problems.push(error.message))
    mkdirSync(ARTIFACTS, { recursive: true })
  })
  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it('signs in, shows a project live, and makes a working API key', async () => {
    const { key, path } = await ownerWithProject(app.url, 'dash')
    await call(app.url, 'POST', `${path}/content`, { token: key, body: { stats: { count: 1, label: 'visits' }, items: ['a', 'b'], published: true } })

    await page.goto(app.url + '/')
    await page.getByLabel('Username').fill('dash')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: '@dash/demo' }).click()
    const count = page.locator('#tree span.value[data-path="stats.count"]')
    await expect.poll(() => count.textContent(), { timeout: 5000 }).toBe('1')
    await expect.poll(() => page.locator('#connection-text').textContent()).toBe('Live')

    // A change over HTTP shows up in the page within a second.
    expect((await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'stats.count', value: 41 } })).status).toBe(200)
    await page.waitForFunction(() => document.querySelector('#tree span.value[data-path="stats.count"]')?.textContent === '42', undefined, { timeout: 1000 })
    expect(await page.locator('#content-meta').textContent()).toBe('Version 2')

    // A key made in the UI works over HTTP.
    await page.getByLabel('Name', { exact: true }).fill('from-the-ui')
    await page.getByLabel('Permission').selectOption('write')
    await page.getByRole('button', { name: 'Create key' }).click()
    const newKey = page.getByLabel('New API key')
    await expect.poll(() => newKey.inputValue()).toMatch(/^cdk_/)
    const uiKey = await newKey.inputValue()
    const used = await call(app.url, 'POST', `${path}/content/set`, { token: uiKey, body: { path: 'stats.label', value: 'set with the UI key' } })
    expect(used.status).toBe(200)
    await page.waitForFunction(() => document.querySelector('#tree span.value[data-path="stats.label"]')?.textContent === '"set with the UI key"', undefined, { timeout: 1000 })
    await expect.poll(() => page.locator('#key-list').textContent()).toContain('from-the-ui')

    await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true })
    if (updateScreenshots) {
      mkdirSync(join(README_SCREENSHOT, '..'), { recursive: true })
      copyFileSync(join(ARTIFACTS, 'dashboard.png'), README_SCREENSHOT)
    }
    await page.setViewportSize({ width: 375, height: 812 })
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-375.png'), fullPage: true })
    // Nothing wider than the phone's screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
    expect(problems).toEqual([])
  })

  it('shows who else is viewing the project and which path each has selected, and tells them what this tab selects', async () => {
    const { key, path } = await ownerWithProject(app.url, 'peek')
    await call(app.url, 'POST', `${path}/content`, { token: key, body: { title: 'Hello', stats: { count: 1 } } })
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Username').fill('peek')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: '@peek/demo' }).click()
    const viewers = page.locator('#viewer-list')
    await expect.poll(() => viewers.textContent(), { timeout: 5000 }).toBe('@peek (you)')

    // An editor (the "writer" key, its own connection) selects stats.count.
    const editor = new Recorder(await connect(app.url, key))
    try {
      expect((await subscribe(editor.socket, '@peek/demo')).ok).toBe(true)
      expect(await editor.socket.emitWithAck('presence:set', { project: '@peek/demo', state: { path: 'stats.count' } })).toEqual({ ok: true })
      await expect.poll(() => page.locator('#viewer-list li').allTextContents(), { timeout: 5000 }).toEqual(['@peek (you)', 'key writer · stats.count'])
      const watched = page.locator('#tree .leaf[data-path="stats.count"]')
      await expect.poll(() => watched.getAttribute('class')).toContain('watched')
      expect(await watched.getAttribute('title')).toBe('Selected by key writer')

      // What this tab selects reaches the editor, as the signed-in user, never a token.
      await page.locator('#tree .leaf[data-path="title"]').click()
      await editor.until(() => editor.presence.some(e => e.type === 'update' && e.member.state.path === 'title'), 'the tab\'s selection')
      const update = editor.presence.find(e => e.type === 'update' && e.member.state.path === 'title')
      expect(update?.member.actor).toEqual({ type: 'user', name: '@peek' })
      expect(await page.locator('#tree .leaf[data-path="title"]').getAttribute('class')).toContain('selected')
      expect(await page.locator('#viewer-list li').allTextContents()).toEqual(['@peek (you) · title', 'key writer · stats.count'])
      // A change re-renders the tree; the marks stay.
      expect((await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'stats.count' } })).status).toBe(200)
      await page.waitForFunction(() => document.querySelector('#tree span.value[data-path="stats.count"]')?.textContent === '2', undefined, { timeout: 1000 })
      expect(await watched.getAttribute('class')).toContain('watched')
      expect(await page.locator('#tree .leaf[data-path="title"]').getAttribute('class')).toContain('selected')
    } finally {
      editor.socket.close()
    }
    // The editor leaves: gone from the list and from the tree.
    await expect.poll(() => page.locator('#viewer-list li').allTextContents(), { timeout: 5000 }).toEqual(['@peek (you) · title'])
    expect(await page.locator('#tree .watched').count()).toBe(0)
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-presence.png'), fullPage: true })
    expect(problems).toEqual([])
  })
})
