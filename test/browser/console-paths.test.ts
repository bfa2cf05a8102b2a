// Live paths in the console (docs/console.md#watch-a-path, docs/design.md §15), in real
// Chromium: a path watched from the tree's row menu shows its value and follows writes made
// there by another client, and not writes elsewhere; a key narrowed to the path, made in the
// tab, watches it too; the History tab's path filter shows exactly what the server's
// `changes?path=` answers, and asks the server for it. axe-core checks each screen for
// serious or critical violations.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, launchChromium, requireChromium, screenshot, seriousViolations } from '../support/browser.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

requireChromium('the console live-paths test')

const PROJECT = '@pw/demo'

describe.skipIf(!hasChromium)('live paths in the console', () => {
  let app: TestApp
  let browser: Browser
  let page: Page
  let session = ''
  let key = ''
  let api = ''
  /** Every URL the page asked for, to tell what it asked the server. */
  const requested: string[] = []
  const problems: string[] = []

  const write = async (op: string, body: Record<string, unknown>) => {
    const answer = await call(app.url, 'POST', `${api}/content/${op}`, { token: key, body })
    expect(answer.status).toBe(200)
    return Number(JSON.parse(answer.headers.get('etag') as string))
  }
  const pathChanges = async (path: string, token = session) => {
    const answer = await call(app.url, 'GET', `${api}/content/changes?path=${encodeURIComponent(path)}&since=0&limit=1000`, { token })
    expect(answer.status).toBe(200)
    return answer.body.changes as Array<{ version: number, op: string, path: string }>
  }
  const watchPanel = (path: string) => page.locator(`.watch-panel[data-watch="${path}"]`)
  const watchedValue = async (path: string) => JSON.parse(await watchPanel(path).locator('.watch-value').textContent() as string)
  const recentVersions = async (path: string) => (await watchPanel(path).locator('.watch-recent .change').evaluateAll(items => items.map(i => Number(i.getAttribute('data-version')))))
  const shownVersion = () => page.locator('.live .version').textContent()

  beforeAll(async () => {
    app = await startTestApp({}, { realtime: true })
    ;({ session, key, path: api } = await ownerWithProject(app.url, 'pw'))
    await call(app.url, 'POST', `${api}/content`, { token: key, body: { votes: { up: 0, down: 0 }, title: 'Hello', stats: { n: 0 } } })
    browser = await launchChromium()
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    await context.addInitScript(([token]) => { sessionStorage.setItem('contentd.session', JSON.stringify({ token, username: '@pw' })) }, [session])
    context.setDefaultTimeout(8000)
    page = await context.newPage()
    page.on('request', request => requested.push(request.url()))
    page.on('pageerror', error => problems.push(error.message))
  }, 60_000)
  afterAll(async () => { await browser?.close(); await app?.close() })

  it('watches a path from the row menu: its value, live, and not the writes elsewhere', async () => {
    await page.goto(`${app.url}/#/${PROJECT}/content`)
    await page.locator('.row[data-path="votes"]').waitFor()

    // The menu opens from the keyboard too (its button), takes the focus, and Escape gives it back.
    const more = page.getByRole('button', { name: 'More actions for title' })
    await more.focus()
    await page.keyboard.press('Enter')
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Watch this path')
    expect(await seriousViolations(page)).toEqual([])
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByRole('menu').count()).toBe(0)
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('More actions for title')

    // So does Shift+F10 (the context-menu key) on what has the focus in the row.
    await page.getByRole('button', { name: /^Edit title/ }).focus()
    await page.keyboard.press('Shift+F10')
    await page.getByRole('menu', { name: 'Actions for title' }).waitFor()
    // The menu takes the focus just after it shows (Escape goes where the focus is, as a person's would).
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Watch this path')
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByRole('menu').count()).toBe(0)

    // A right click on the row opens the same menu.
    await page.locator('.row[data-path="votes"]').click({ button: 'right' })
    await page.getByRole('menu', { name: 'Actions for votes' }).getByRole('menuitem', { name: 'Watch this path' }).click()
    await expect.poll(() => watchedValue('votes')).toEqual({ up: 0, down: 0 })

    // Another client writes there: the value follows, and the change joins the recent ones.
    const up = await write('increment', { path: 'votes.up' })
    await expect.poll(() => watchedValue('votes')).toEqual({ up: 1, down: 0 })
    expect(await watchPanel('votes').locator('.watch-version').textContent()).toBe(`v${up}`)
    // Writes elsewhere reach the page's tree but not the watch.
    const elsewhere = [await write('increment', { path: 'stats.n' }), await write('set', { path: 'title', value: 'Bye' })]
    await expect.poll(shownVersion).toBe(`v${elsewhere[1]}`)
    expect(await watchPanel('votes').locator('.watch-version').textContent()).toBe(`v${up}`)
    // A write above the path reaches it (projected: the path's new value).
    const replaced = await write('set', { path: 'votes', value: { up: 7 } })
    await expect.poll(() => watchedValue('votes')).toEqual({ up: 7 })
    // The recent changes are exactly the path's own, as the server's changes?path= lists them (newest first).
    const touching = (await pathChanges('votes')).map(c => c.version).reverse().slice(0, 10)
    expect(touching.slice(0, 2)).toEqual([replaced, up])
    await expect.poll(() => recentVersions('votes')).toEqual(touching)
    expect(touching).not.toContain(elsewhere[0])
    expect(problems).toEqual([])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'console-watch', { docName: 'console-watch' })

    await watchPanel('votes').getByRole('button', { name: 'Stop watching votes' }).click()
    await expect.poll(() => watchPanel('votes').count()).toBe(0)
    // The focus goes back to the row's menu button.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('More actions for votes')
  }, 90_000)

  it('watches with a key narrowed to the path, made in this tab', async () => {
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByRole('heading', { name: 'API keys' }).waitFor()
    await page.getByLabel('Name', { exact: true }).fill('widget')
    await page.getByRole('checkbox', { name: PROJECT }).check()
    await page.getByLabel('Paths').fill('votes')
    await page.getByRole('button', { name: 'Create key' }).click()
    const secret = await page.getByLabel('New API key widget').inputValue()
    await page.getByRole('button', { name: 'I have copied it' }).click()
    // The key reads only its path: the whole content is refused to it.
    expect((await call(app.url, 'GET', `${api}/content`, { token: secret })).body.code).toBe('KEY_SCOPE_DENIED')

    // Back to the content in the same tab (the key's secret is kept in its memory only).
    await page.evaluate(project => { location.hash = `#/${project}/content` }, PROJECT)
    await page.locator('.row[data-path="votes.up"]').waitFor()
    await page.locator('.row[data-path="votes.up"]').click({ button: 'right' })
    await page.getByRole('menuitem', { name: 'Watch this path' }).click()
    await expect.poll(() => watchedValue('votes.up')).toBe(7)
    await watchPanel('votes.up').getByLabel('Watch as').selectOption({ label: 'key widget (paths votes)' })
    await expect.poll(() => watchPanel('votes.up').locator('.watch-meta').textContent()).toContain('live as key widget')
    await expect.poll(() => watchedValue('votes.up')).toBe(7)
    const up = await write('increment', { path: 'votes.up' })
    await expect.poll(() => watchedValue('votes.up')).toBe(8)
    expect(await watchPanel('votes.up').locator('.watch-version').textContent()).toBe(`v${up}`)
    // Its recent changes came from the key's own changes?path= read, inside its path.
    expect(await recentVersions('votes.up')).toEqual((await pathChanges('votes.up', secret)).map(c => c.version).reverse().slice(0, 10))
    expect(await watchPanel('votes.up').locator('[role="alert"]').count()).toBe(0)
    // A key narrowed elsewhere is not offered for a path outside it: no key may watch title, so no choice.
    await page.locator('.row[data-path="title"]').click({ button: 'right' })
    await page.getByRole('menuitem', { name: 'Watch this path' }).click()
    await expect.poll(() => watchedValue('title')).toBe('Bye')
    expect(await watchPanel('title').getByLabel('Watch as').count()).toBe(0)
    expect(await watchPanel('votes.up').getByLabel('Watch as').locator('option').allTextContents()).toEqual(['@pw (you)', 'key widget (paths votes)'])
    expect(await seriousViolations(page)).toEqual([])
  }, 90_000)

  it('filters the history by path through the server\'s changes?path=', async () => {
    await page.evaluate(project => { location.hash = `#/${project}/history` }, PROJECT)
    await page.locator('.change').first().waitFor()
    const before = requested.length
    await page.getByLabel('Filter changes by path').fill('votes.up')
    await page.getByText('Changes that touch votes.up').waitFor()
    const listed = async () => page.locator('.timeline .change').evaluateAll(items => items.map(i => Number(i.getAttribute('data-version'))))
    const expected = async () => (await pathChanges('votes.up')).map(c => c.version).reverse()
    await expect.poll(listed).toEqual(await expected())
    // It asked the server for the path, and read no page of the whole log to filter it.
    const asked = requested.slice(before).filter(url => url.includes('/content/changes'))
    expect(asked.length).toBeGreaterThan(0)
    expect(asked.every(url => new URL(url).searchParams.get('path') === 'votes.up')).toBe(true)
    // The whole-content write and the write above the path are in it (projected); the others are not.
    const all = (await call(app.url, 'GET', `${api}/content/changes?since=0`, { token: session })).body.changes as Array<{ version: number, path?: string }>
    const titles = all.filter(c => c.path === 'title' || c.path === 'stats.n').map(c => c.version)
    expect((await listed()).some(v => titles.includes(v))).toBe(false)
    expect(await page.locator('.change-projected').count()).toBeGreaterThan(0)
    expect(await seriousViolations(page)).toEqual([])

    // A change to the path made now joins the top; one elsewhere does not.
    const other = await write('increment', { path: 'votes.down' })
    const up = await write('increment', { path: 'votes.up' })
    await expect.poll(async () => (await listed())[0]).toBe(up)
    expect(await listed()).not.toContain(other)
    expect(await listed()).toEqual(await expected())

    // An invalid path is refused next to the filter, before any request.
    const sent = requested.length
    await page.getByLabel('Filter changes by path').fill('votes..up')
    await expect.poll(() => page.locator('#history-filter-error').textContent()).toMatch(/path/i)
    expect(requested.slice(sent).filter(url => url.includes('/content/changes'))).toEqual([])
    await page.getByLabel('Filter changes by path').fill('')
    await expect.poll(async () => (await listed()).length).toBe(all.length + 2)
  }, 90_000)
})
