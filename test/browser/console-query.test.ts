// The console's Query tab in real Chromium (docs/queries.md): a live query typed into the form
// shows the ordered children, follows a write made over the HTTP API, and shows the server's
// refusal of a bad query. axe-core checks the tab for serious or critical violations.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, launchChromium, requireChromium, screenshot, seriousViolations } from '../support/browser.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

requireChromium('the console query test')

describe.skipIf(!hasChromium)('the console Query tab', () => {
  let app: TestApp
  let browser: Browser
  let page: Page
  let session = ''
  let key = ''
  let path = ''

  beforeAll(async () => {
    app = await startTestApp({}, { realtime: true })
    ;({ session, key, path } = await ownerWithProject(app.url, 'qa'))
    await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'leaderboard', value: { ann: { score: 5 }, bo: { score: 9 }, cy: { score: 7 }, di: { score: 1 } } } })
    browser = await launchChromium()
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await context.addInitScript(([token]) => { sessionStorage.setItem('contentd.session', JSON.stringify({ token, username: 'qa' })) }, [session])
    page = await context.newPage()
  }, 60_000)
  afterAll(async () => { await browser?.close(); await app?.close() })

  const keys = async () => page.locator('.query-items .query-key').allTextContents()

  it('shows a live, ordered result that follows writes', async () => {
    await page.goto(`${app.url}/#/@qa/demo/query`)
    await page.getByLabel('Path').fill('leaderboard')
    await page.getByLabel('Order by').fill('score')
    await page.getByLabel('Direction').selectOption('desc')
    await page.getByLabel('Limit').fill('3')
    await page.getByRole('button', { name: 'Run live' }).click()
    await expect.poll(keys).toEqual(['bo', 'cy', 'ann'])
    await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'leaderboard.di.score', value: 20 } })
    await expect.poll(keys).toEqual(['di', 'bo', 'cy'])
    expect(await page.locator('.query-items li').first().locator('.query-value').textContent()).toBe('{"score":21}')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'console-query')
  }, 60_000)

  it('shows the refusal of a query over a path that holds a scalar', async () => {
    await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'title', value: 'x' } })
    await page.getByLabel('Path').fill('title')
    await page.getByRole('button', { name: 'Run live' }).click()
    await expect.poll(async () => page.locator('.query-panel').textContent()).toMatch(/no children to query|not valid/i)
  }, 60_000)
})
