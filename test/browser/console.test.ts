// The console at "/" in real Chromium, clicked through as a new user would: sign up, create
// a project, edit every kind of value (each edit checked over the HTTP API, and sent with
// If-Match), resolve a conflict with a concurrent write, the raw JSON editor, search, the
// Connect tab (its curl snippet is run), API keys, members, deleting a project, deep links
// that survive a reload, keyboard-only use, a project page without a refused request, live
// lists, .json download and import, a 375 px
// phone and the dark theme. axe-core checks every screen for serious or critical
// accessibility violations; screenshots go to test-artifacts/ (and with UPDATE_SCREENSHOTS=1
// to docs/images/, for the README and docs/console.md). Speed and page weight: npm run bench.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, launchChromium, requireChromium, screenshot, seriousViolations, type AxeViolation } from '../support/browser.js'
import { createLogger } from '../../server/logger.js'
import { createWebhooks, type Webhooks } from '../../server/webhooks/index.js'
import { call, createKey, PASSWORD, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { eventually, startReceiver, type Receiver } from '../webhooks/receiver.js'

requireChromium('the console browser test')

const USER = 'ada'
const PROJECT = `@${USER}/demo`
const API = `/api/${PROJECT}`

describe.skipIf(!hasChromium)('the console in chromium', () => {
  let app: TestApp
  /** Delivers webhooks in this process, as the server's own dispatcher would. */
  let webhooks: Webhooks
  let receiver: Receiver
  /** Bob's session token, from the members test. */
  let bob = ''
  let browser: Browser
  let context: BrowserContext
  let page: Page
  /** The user's session token, read from the page after sign-up, for checks over HTTP. */
  let session = ''
  const problems: string[] = []
  /** Every content write the page sent: its URL and If-Match header. */
  const writes: Array<{ url: string, ifMatch: string | undefined }> = []
  /** axe's serious and critical violations, by screen. */
  const accessibility: Record<string, AxeViolation[]> = {}

  const stored = async () => (await call(app.url, 'GET', `${API}/content`, { token: session })).body
  const row = (path: string) => page.locator(`.row[data-path="${path}"]`)
  const shownValue = (path: string) => row(path).locator('.shown').first()
  const checkScreen = async (name: string) => { accessibility[name] = await seriousViolations(page) }
  const versionShown = () => page.locator('.live .version').textContent()
  /** The JSON editor labelled `label` (CodeMirror, console/editor/), once it has loaded. */
  const editor = async (label: string) => {
    await page.locator('.code-editor[data-state="ready"]').waitFor({ timeout: 10_000 })
    return page.locator(`.cm-content[aria-label="${label}"]`)
  }
  /** Its whole text, from CodeMirror's own state (only the lines on screen are in the DOM). */
  const editorText = (label: string) => page.evaluate(
    `import('@codemirror/view').then(({ EditorView }) => EditorView.findFromDOM(document.querySelector('.cm-content[aria-label="${label}"]')).state.doc.toString())`
  ) as Promise<string>

  beforeAll(async () => {
    // Webhooks may point at the loopback receiver (docs/webhooks.md, "Where webhooks may point").
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { realtime: true })
    webhooks = createWebhooks({ config: app.config, store: app.store, logger: createLogger('silent'), pollIntervalMs: 20 })
    webhooks.dispatcher.start()
    receiver = await startReceiver()
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, permissions: ['clipboard-read', 'clipboard-write'], colorScheme: 'light' })
    page = await context.newPage()
    // Every Content-Security-Policy refusal on the page, as the page itself hears of it: kept,
    // and said as a console error with what was refused (the browser's own message does not say).
    await page.addInitScript(`document.addEventListener('securitypolicyviolation', e => {
      const what = e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sample || '') + ' at ' + (e.target && e.target.outerHTML ? e.target.outerHTML.slice(0, 200) : '')
      ;(window.cspRefusals ??= []).push(what)
      console.error('CSP refusal: ' + what)
    })`)
    // Well inside the test's own timeout, so a missing element fails with its locator.
    context.setDefaultTimeout(8000)
    page.on('console', message => {
      // A refused request shows as a console error of the browser's own; the tests cause some on purpose.
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(message.text())
    })
    page.on('pageerror', error => problems.push(error.message))
    page.on('request', request => {
      if (request.method() === 'POST' && request.url().includes(`${API}/content`)) writes.push({ url: request.url(), ifMatch: request.headers()['if-match'] })
    })
  })
  afterAll(async () => {
    await browser?.close()
    await webhooks?.dispatcher.stop()
    await receiver?.stop()
    await app?.close()
  })

  it('signs up, shows what to do first, creates a project and lands on its empty content', async () => {
    await page.goto(`${app.url}/`)
    await page.getByLabel('Username').waitFor()
    await checkScreen('sign in')
    await screenshot(page, 'console-sign-in', { docName: 'console-sign-in' })

    await page.getByRole('button', { name: 'Create account' }).first().click()
    await page.getByLabel('Username').fill(USER)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.locator('form').getByRole('button', { name: 'Create account' }).click()
    await page.getByRole('heading', { name: 'Projects' }).waitFor()
    await page.getByText('Create your first project').waitFor()
    // The tab has an icon of its own, served by the console.
    const icon = await page.locator('link[rel="icon"]').getAttribute('href') as string
    const iconResponse = await fetch(new URL(icon, app.url))
    expect([iconResponse.status, iconResponse.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^image\/svg\+xml/)])
    session = await page.evaluate(() => JSON.parse(sessionStorage.getItem('contentd.session') ?? '{}').token as string)
    expect(session).toMatch(/^cds_/)
    await checkScreen('projects, empty')

    await page.getByRole('link', { name: '+ New project' }).click()
    await page.getByLabel('Slug').fill('Not Valid')
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('lower-case')
    await page.getByLabel('Slug').fill('demo')
    await page.getByRole('button', { name: 'Create project' }).click()
    await page.getByText('This project has no content yet').waitFor()
    expect(new URL(page.url()).hash).toBe(`#/${PROJECT}/content`)
    expect((await call(app.url, 'GET', API, { token: session })).body).toMatchObject({ username: `@${USER}`, slug: 'demo', version: 0 })
    await expect.poll(versionShown).toBe('v0')
    await checkScreen('content, empty')
    await screenshot(page, 'console-empty-project', { docName: 'console-empty-project' })
  })

  it('edits every kind of value, each as its API operation with If-Match', async () => {
    const sent = writes.length
    // A key at the root (set), from the empty state.
    await page.getByRole('button', { name: '+ Add the first key' }).click()
    await page.getByLabel('Key', { exact: true }).fill('title')
    await page.getByLabel('value of the new key', { exact: true }).fill('Hello')
    await page.getByRole('button', { name: 'Add key', exact: true }).click()
    await expect.poll(() => shownValue('title').textContent()).toBe('"Hello"')
    expect(await stored()).toEqual({ title: 'Hello' })

    // An object, typed as JSON.
    await page.getByRole('button', { name: '+ Add key' }).click()
    await page.getByLabel('Key', { exact: true }).fill('stats')
    await page.getByLabel('Type of value of the new key').selectOption('json')
    await page.getByLabel('value of the new key', { exact: true }).fill('{"visits": 1, "label": "visits", "tags": []}')
    await page.getByRole('button', { name: 'Add key', exact: true }).click()
    await expect.poll(() => shownValue('stats.visits').textContent()).toBe('1')

    // A key that breaks the rules is refused next to the field, before any request.
    await page.getByRole('button', { name: 'Add a key to stats' }).click()
    await page.getByLabel('Key', { exact: true }).fill('$bad')
    await page.getByRole('button', { name: 'Add key', exact: true }).click()
    await expect.poll(() => page.locator('.add-form .field-error').first().textContent()).toContain('starts with "$"')
    await page.getByLabel('Key', { exact: true }).fill('ratio')
    await page.getByLabel('Type of value of the new key').selectOption('number')
    await page.getByLabel('value of the new key', { exact: true }).fill('0.5')
    await page.getByRole('button', { name: 'Add key', exact: true }).click()
    await expect.poll(() => shownValue('stats.ratio').textContent()).toBe('0.5')

    // + and - on a number: increment and decrement.
    await row('stats.visits').hover()
    await page.getByRole('button', { name: 'Increase stats.visits by 1' }).click()
    await expect.poll(() => shownValue('stats.visits').textContent()).toBe('2')
    await page.getByRole('button', { name: 'Increase stats.visits by 1' }).click()
    await expect.poll(() => shownValue('stats.visits').textContent()).toBe('3')
    await page.getByRole('button', { name: 'Decrease stats.visits by 1' }).click()
    await expect.poll(() => shownValue('stats.visits').textContent()).toBe('2')

    // A scalar edited in place (set); Escape cancels, Enter saves; a type change too.
    await page.getByRole('button', { name: 'Edit title, now "Hello"' }).click()
    await page.getByLabel('new value of title', { exact: true }).fill('never saved')
    await page.keyboard.press('Escape')
    await expect.poll(() => shownValue('title').textContent()).toBe('"Hello"')
    await page.getByRole('button', { name: 'Edit title, now "Hello"' }).click()
    await page.getByLabel('new value of title', { exact: true }).fill('Hello, world')
    await page.keyboard.press('Enter')
    await expect.poll(() => shownValue('title').textContent()).toBe('"Hello, world"')
    await page.getByRole('button', { name: 'Edit stats.label' }).click()
    await page.getByLabel('Type of new value of stats.label').selectOption('boolean')
    await page.getByLabel('new value of stats.label', { exact: true }).selectOption('false')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await expect.poll(() => shownValue('stats.label').textContent()).toBe('false')
    await page.getByRole('button', { name: 'Edit stats.ratio' }).click()
    await page.getByLabel('new value of stats.ratio', { exact: true }).fill('lots')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.locator('.inline-editor .field-error').textContent()).toContain('finite number')
    await page.keyboard.press('Escape')

    // Arrays: push at the end, insert at a position.
    await page.getByRole('button', { name: 'Add an item to stats.tags' }).click()
    await page.getByLabel('value of the new item in stats.tags', { exact: true }).fill('b')
    await page.getByRole('button', { name: 'Add item', exact: true }).click()
    await expect.poll(() => shownValue('stats.tags.0').textContent()).toBe('"b"')
    await page.getByRole('button', { name: 'Add an item to stats.tags' }).click()
    await page.getByLabel('Position').selectOption('index')
    await page.getByLabel('Index', { exact: true }).fill('0')
    await page.getByLabel('value of the new item in stats.tags', { exact: true }).fill('a')
    await page.getByRole('button', { name: 'Add item', exact: true }).click()
    await expect.poll(() => shownValue('stats.tags.1').textContent()).toBe('"b"')
    expect(await stored()).toEqual({ title: 'Hello, world', stats: { visits: 2, label: false, tags: ['a', 'b'], ratio: 0.5 } })

    // Delete: a scalar at once, a container after confirming.
    await row('stats.ratio').hover()
    await page.getByRole('button', { name: 'Delete stats.ratio' }).click()
    await expect.poll(() => row('stats.ratio').count()).toBe(0)
    await page.getByRole('button', { name: 'Delete stats.tags', exact: true }).click()
    await page.getByRole('group', { name: 'Delete stats.tags?' }).getByRole('button', { name: 'Delete', exact: true }).click()
    await expect.poll(() => row('stats.tags').count()).toBe(0)
    expect(await stored()).toEqual({ title: 'Hello, world', stats: { visits: 2, label: false } })
    await checkScreen('content, tree')

    // Every write went out as the matching operation, with If-Match on the version shown.
    const made = writes.slice(sent)
    expect(made.map(w => new URL(w.url).pathname.slice(API.length))).toEqual([
      '/content/set', '/content/set', '/content/set', '/content/increment', '/content/increment', '/content/decrement',
      '/content/set', '/content/set', '/content/push', '/content/insert', '/content/delete', '/content/delete'
    ])
    expect(made.every(w => /^"\d+"$/.test(w.ifMatch ?? ''))).toBe(true)
  })

  it('shows a change made elsewhere at once, and flashes the changed node', async () => {
    await call(app.url, 'POST', `${API}/content/set`, { token: session, body: { path: 'posts', value: [{ id: 1, title: 'First post', likes: 3 }, { id: 2, title: 'Second post', likes: 0, draft: null }] } })
    await shownValue('posts.1.title').waitFor()
    const { headers } = await call(app.url, 'POST', `${API}/content/increment`, { token: session, body: { path: 'posts.0.likes', value: 39 } })
    const version = Number(JSON.parse(headers.get('etag') as string))
    await page.waitForFunction(() => {
      const changed = document.querySelector<HTMLElement>('.row[data-path="posts.0.likes"]')
      return changed?.querySelector('.shown')?.textContent === '42' && changed.getAnimations().length > 0
    }, undefined, { timeout: 2000 })
    await expect.poll(versionShown).toBe(`v${version}`)
    await call(app.url, 'POST', `${API}/content/increment`, { token: session, body: { path: 'posts.0.likes' } })
    await expect.poll(() => shownValue('posts.0.likes').textContent()).toBe('43')
    await page.mouse.move(0, 0)
    await page.waitForTimeout(1500)
    await screenshot(page, 'console-content', { docName: 'dashboard' })
  })

  it('turns a 412 conflict into what changed, and retries the edit on the latest version', async () => {
    await page.getByRole('button', { name: 'Edit title' }).click()
    await page.getByLabel('new value of title', { exact: true }).fill('Mine')
    // Someone else writes while the editor is open.
    const concurrent = await call(app.url, 'POST', `${API}/content/set`, { token: session, body: { path: 'title', value: 'Theirs' } })
    expect(concurrent.status).toBe(200)
    await expect.poll(versionShown).toBe(`v${JSON.parse(concurrent.headers.get('etag') as string)}`)
    const before = writes.length
    await page.keyboard.press('Enter')
    const note = page.locator('.conflict')
    await note.waitFor()
    expect(await note.textContent()).toContain('Not saved: the content changed while you were editing')
    expect(await note.locator('.conflict-values').textContent()).toContain('"Hello, world"')
    expect(await note.locator('.conflict-values').textContent()).toContain('"Theirs"')
    expect(await note.locator('.conflict-changes').textContent()).toContain('set title')
    expect((await stored()).title).toBe('Theirs')
    await checkScreen('content, conflict')
    await screenshot(page, 'console-conflict', { docName: 'console-conflict' })

    await note.getByRole('button', { name: 'Apply my edit to the latest version' }).click()
    await expect.poll(() => shownValue('title').textContent()).toBe('"Mine"')
    expect((await stored()).title).toBe('Mine')
    expect(await note.count()).toBe(0)
    // The first attempt carried the old version, the retry the new one.
    const [first, retry] = writes.slice(before)
    expect(Number(JSON.parse(retry?.ifMatch as string))).toBe(Number(JSON.parse(first?.ifMatch as string)) + 1)
  })

  it('searches by path and by value, and reveals the match', async () => {
    await page.getByLabel('Search paths and values').fill('likes')
    await expect.poll(() => page.locator('.search-hit').count()).toBe(2)
    await page.getByLabel('Search paths and values').fill('second post')
    await expect.poll(() => page.locator('.search-hit').allTextContents()).toEqual(['posts.1.title"Second post"'])
    await page.getByRole('button', { name: 'Collapse all' }).click()
    await expect.poll(() => row('posts.1.title').count()).toBe(0)
    await page.locator('.search-hit').click()
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('.row')?.getAttribute('data-path'))).toBe('posts.1.title')
    await page.getByLabel('Search paths and values').fill('')
    await page.getByRole('button', { name: 'Expand all' }).click()
    await expect.poll(() => row('posts.1.draft').count()).toBe(1)
  })

  it('edits the whole document as JSON, with errors shown at the text', async () => {
    await page.getByRole('button', { name: 'JSON', exact: true }).click()
    const text = await editor('Content as JSON')
    expect(JSON.parse(await editorText('Content as JSON'))).toEqual(await stored())
    await text.fill('{"title": "Raw", oops}')
    await page.getByRole('button', { name: 'Save document' }).click()
    await expect.poll(() => page.locator('.raw-editor .field-error').first().textContent()).toContain('Not valid JSON')
    await text.fill('["not", "an object"]')
    await page.getByRole('button', { name: 'Save document' }).click()
    await expect.poll(() => page.locator('.raw-editor .field-error').first().textContent()).toContain('must be a JSON object')
    const document = { title: 'Raw', stats: { visits: 7 }, posts: [{ id: 1, title: 'First post', likes: 43 }] }
    await text.fill(JSON.stringify(document, null, 2))
    await checkScreen('content, JSON')
    await page.getByRole('button', { name: 'Save document' }).click()
    await expect.poll(stored).toEqual(document)
    expect(writes.at(-1)).toMatchObject({ url: `${app.url}${API}/content` })
    await page.getByRole('button', { name: 'Tree', exact: true }).click()
    await expect.poll(() => shownValue('stats.visits').textContent()).toBe('7')
  })

  it('fills the Connect tab with a new project key, and its curl snippet works as shown', async () => {
    await page.getByRole('link', { name: 'Connect' }).click()
    await page.getByRole('heading', { name: 'Key for these examples' }).waitFor()
    expect(await page.locator('pre').first().textContent()).toContain('$CONTENTD_KEY')
    // This server has Server-Sent Events: the EventSource example is shown.
    expect(await page.getByRole('heading', { name: /EventSource/ }).count()).toBe(1)
    await page.getByRole('button', { name: 'Create a read-only key' }).click()
    const secret = await page.getByLabel(/^New API key/).inputValue()
    expect(secret).toMatch(/^cdk_/)
    // The examples take the key once the server's list (re-read after the creation) has it.
    await expect.poll(() => page.locator('pre').first().textContent()).toContain(secret)
    const curl = await page.locator('pre').first().textContent() as string
    expect(curl).toContain(`${app.url}${API}/content`)
    expect(await page.locator('pre', { hasText: 'new EventSource' }).textContent()).toContain(`${app.url}${API}/content/events?access_token=${secret}`)
    await page.getByRole('button', { name: 'Copy' }).first().click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret)
    await checkScreen('connect')
    await screenshot(page, 'console-connect', { docName: 'console-connect' })

    // A read-only key gets only the read (a write would answer 403), and the install line is the README's.
    expect(curl).not.toContain('/content/increment')
    expect(await page.locator('pre', { hasText: 'npm install' }).textContent()).toContain('npm install /path/to/contentd')
    // The snippet, run by a shell, answers the content. (Asynchronously: the server runs in this process.)
    const run = await promisify(execFile)('bash', ['-c', curl], { encoding: 'utf8', timeout: 10_000 })
    expect(JSON.parse(run.stdout)).toEqual(await stored())
    // The key reaches this project only.
    const keys = (await call(app.url, 'GET', '/api/keys', { token: session })).body.keys
    expect(keys).toEqual([expect.objectContaining({ permission: 'read', projects: [PROJECT] })])
  })

  it('creates a key with permission, scope and expiry, shows it once, and revokes it', async () => {
    await call(app.url, 'POST', '/api/projects', { token: session, body: { slug: 'other' } })
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByRole('heading', { name: 'API keys' }).waitFor()
    await page.getByLabel('Name', { exact: true }).fill('deploy')
    await page.getByRole('radio', { name: /Read and write/ }).check()
    await page.getByRole('checkbox', { name: PROJECT }).check()
    await page.getByLabel('Expires').selectOption('7')
    await page.getByRole('button', { name: 'Create key' }).click()
    const secret = await page.getByLabel('New API key deploy').inputValue()
    expect(secret).toMatch(/^cdk_/)
    await checkScreen('keys')
    await screenshot(page, 'console-keys', { docName: 'console-keys' })

    const listed = (await call(app.url, 'GET', '/api/keys', { token: session })).body.keys.find((k: any) => k.name === 'deploy')
    expect(listed).toMatchObject({ permission: 'write', projects: [PROJECT] })
    const days = (Date.parse(listed.expiresAt) - Date.now()) / 86_400_000
    expect(days).toBeGreaterThan(6.9)
    expect(days).toBeLessThan(7.1)
    expect((await call(app.url, 'POST', `${API}/content/increment`, { token: secret, body: { path: 'stats.visits' } })).status).toBe(200)
    expect((await call(app.url, 'GET', `/api/@${USER}/other/content`, { token: secret })).status).toBe(403)

    await page.getByRole('button', { name: 'I have copied it' }).click()
    expect(await page.getByLabel('New API key deploy').count()).toBe(0)
    await page.getByRole('button', { name: 'Revoke key deploy' }).click()
    await page.getByRole('group', { name: /^Revoke deploy/ }).getByRole('button', { name: 'Revoke', exact: true }).click()
    await expect.poll(() => page.locator('.key-name').allTextContents()).not.toContain('deploy')
    expect((await call(app.url, 'GET', `${API}/content`, { token: secret })).status).toBe(401)
    // The Connect tab offers the live key made there, never the revoked one.
    await page.goto(`${app.url}/#/${PROJECT}/connect`)
    const choice = page.getByLabel('Key used in the examples')
    await expect.poll(() => choice.locator('option').allTextContents()).toEqual([expect.stringContaining('A placeholder'), expect.stringMatching(/read-only \(read,/)])
    expect(await page.locator('pre').first().textContent()).not.toContain(secret)
  })

  it('creates a key narrowed to paths and operations, lists it so, and the server holds it to them', async () => {
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByRole('heading', { name: 'API keys' }).waitFor()
    await page.getByLabel('Name', { exact: true }).fill('counter')
    await page.getByRole('radio', { name: /Read and write/ }).check()
    await page.getByRole('checkbox', { name: PROJECT }).check()
    // A path the server would refuse is refused next to the form, before any request.
    await page.getByLabel('Paths').fill('stats, $bad')
    await page.getByRole('button', { name: 'Create key' }).click()
    await expect.poll(() => page.locator('.key-form [role="alert"]').textContent()).toContain('"$bad"')
    await page.getByLabel('Paths').fill('stats')
    await page.getByRole('group', { name: /^Operations/ }).getByRole('checkbox', { name: 'increment' }).check()
    await page.getByRole('button', { name: 'Create key' }).click()
    const secret = await page.getByLabel('New API key counter').inputValue()
    expect(secret).toMatch(/^cdk_/)
    await page.getByRole('button', { name: 'I have copied it' }).click()

    const listed = (await call(app.url, 'GET', '/api/keys', { token: session })).body.keys.find((k: any) => k.name === 'counter')
    expect(listed).toMatchObject({ permission: 'write', projects: [PROJECT], paths: ['stats'], ops: ['increment'] })
    const item = page.locator('.key-item', { has: page.locator('.key-name', { hasText: 'counter' }) })
    expect(await item.locator('.key-narrowing').textContent()).toBe('paths stats · ops increment')
    // Reads inside its path; the whole content and other operations are refused (nothing written).
    expect((await call(app.url, 'GET', `${API}/content?path=stats`, { token: secret })).status).toBe(200)
    expect((await call(app.url, 'GET', `${API}/content`, { token: secret })).body.code).toBe('KEY_SCOPE_DENIED')
    expect((await call(app.url, 'POST', `${API}/content/set`, { token: secret, body: { path: 'stats.ratio', value: 1 } })).body.code).toBe('KEY_SCOPE_DENIED')
    // The form is empty again for the next key.
    expect([await page.getByLabel('Paths').inputValue(), await page.getByRole('group', { name: /^Operations/ }).getByRole('checkbox', { checked: true }).count()]).toEqual(['', 0])
    await checkScreen('keys, narrowed')
  })

  it('adds a member, changes the role, and removes them', async () => {
    bob = await signup(app.url, 'bob')
    const bobWrites = async () => (await call(app.url, 'POST', `${API}/content/set`, { token: bob, body: { path: 'by', value: 'bob' } })).status
    await page.goto(`${app.url}/#/${PROJECT}/members`)
    await page.getByRole('heading', { name: 'Add a member' }).waitFor()
    await page.getByText('Only you, so far').waitFor()
    await page.getByLabel('Username').fill('nobody-at-all')
    await page.getByRole('button', { name: 'Add member' }).click()
    await expect.poll(() => page.locator('.add-member .field-error').textContent()).toBeTruthy()
    await page.getByLabel('Username').fill('bob')
    await page.getByLabel('Role', { exact: true }).selectOption('viewer')
    await page.getByRole('button', { name: 'Add member' }).click()
    await page.getByLabel('Role of @bob').waitFor()
    expect((await call(app.url, 'GET', `${API}/content`, { token: bob })).status).toBe(200)
    expect(await bobWrites()).toBe(403)
    await checkScreen('members')
    await screenshot(page, 'console-members')

    await page.getByLabel('Role of @bob').selectOption('editor')
    await expect.poll(bobWrites).toBe(200)
    await page.getByRole('button', { name: 'Remove @bob' }).click()
    await page.getByRole('group', { name: /^Remove @bob/ }).getByRole('button', { name: 'Remove', exact: true }).click()
    await page.getByText('Only you, so far').waitFor()
    expect(await bobWrites()).toBe(403)
  })

  it('keeps the place on reload and through sign-in, and shows every tab', async () => {
    await page.goto(`${app.url}/#/${PROJECT}/connect`)
    await page.reload()
    await page.getByRole('heading', { name: 'Key for these examples' }).waitFor()
    expect(await page.getByRole('link', { name: 'Connect' }).getAttribute('aria-current')).toBe('page')
    expect(await page.title()).toBe(`Connect · ${PROJECT} · contentd`)

    // A link opened by someone signed out asks them to sign in, then shows the place.
    const other = await browser.newPage()
    await other.goto(`${app.url}/#/${PROJECT}/settings`)
    await other.getByLabel('Username').fill(USER)
    await other.getByLabel('Password').fill(PASSWORD)
    await other.locator('form').getByRole('button', { name: 'Sign in' }).click()
    await other.getByRole('heading', { name: 'Delete this project' }).waitFor()
    await other.close()

    const tabs = await page.getByRole('navigation', { name: `${PROJECT} sections` }).getByRole('link').allTextContents()
    expect(tabs).toEqual(['Content', 'History', 'Query', 'Connect', 'Schema', 'Rules', 'Webhooks', 'Members', 'Settings'])
    await page.goto(`${app.url}/#/nowhere`)
    await page.getByText('Nothing here').waitFor()
  })

  it('opens a project page and its tabs without a refused or failed request, or a console error', async () => {
    // Issue 34: the console probed four endpoints on every project page (some answered 403
    // or 404 NOT_FOUND, shown in red in the browser's console). Every answer and every
    // console error counts here, not only script errors. The Schema tab and the JSON editor of a
    // project without a schema make no request for it (GET project's hasSchema says there is none;
    // the Rules tab likewise from hasRules and hasAppAuth),
    // and CodeMirror's styles pass the page's Content-Security-Policy (their nonce).
    const noise: string[] = []
    const onConsole = (message: { type (): string, text (): string }) => { if (message.type() === 'error' || message.type() === 'warning') noise.push(`console: ${message.text()}`) }
    const onFailed = (request: { url (): string, failure (): { errorText: string } | null }) => noise.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ''}`)
    const onResponse = (response: { url (): string, status (): number }) => { if (response.status() >= 400) noise.push(`${response.status()}: ${response.url()}`) }
    // A fresh load of the page (a reload would cut off the previous page's requests).
    await page.goto('about:blank')
    page.on('console', onConsole)
    page.on('requestfailed', onFailed)
    page.on('response', onResponse)
    try {
      await page.goto(`${app.url}/#/${PROJECT}/content`)
      await shownValue('title').waitFor()
      await expect.poll(versionShown).toMatch(/^v\d+$/)
      for (const [tab, ready] of [['History', '.change'], ['Connect', 'pre'], ['Webhooks', 'text=No webhooks yet'], ['Members', 'text=Add a member'], ['Settings', 'text=Delete this project'], ['Schema', 'text=No schema yet: every write is accepted'], ['Rules', 'text=No rules yet: app users may do nothing'], ['Content', '.viewer']] as const) {
        await page.getByRole('navigation', { name: `${PROJECT} sections` }).getByRole('link', { name: tab, exact: true }).click()
        await page.locator(ready).first().waitFor()
      }
      await page.getByRole('button', { name: 'JSON', exact: true }).click()
      await editor('Content as JSON')
      await page.getByRole('button', { name: 'Tree', exact: true }).click()
      await page.waitForTimeout(300)
    } finally {
      page.off('console', onConsole)
      page.off('requestfailed', onFailed)
      page.off('response', onResponse)
    }
    expect(noise).toEqual([])
  })

  it('loads CodeMirror only when an editor opens: the first page stays light', async () => {
    type Loaded = { url: string, bytes: number, encoded: number }
    const scripts = () => page.evaluate(() => performance.getEntriesByType('resource')
      .filter(e => /\.m?js$/.test(new URL(e.name).pathname))
      .map(e => ({ url: new URL(e.name).pathname, bytes: (e as PerformanceResourceTiming).decodedBodySize, encoded: (e as PerformanceResourceTiming).encodedBodySize }))) as Promise<Loaded[]>
    const total = (list: Loaded[], key: 'bytes' | 'encoded') => list.reduce((sum, e) => sum + e[key], 0)
    await page.goto('about:blank')
    const answer = await page.goto(`${app.url}/#/${PROJECT}/content`)
    // Styles from this origin or with this answer's nonce; no inline style of any other kind.
    const policy = answer?.headers()['content-security-policy'] ?? ''
    expect(policy).toMatch(/(^|;)style-src 'self' 'nonce-[A-Za-z0-9+/=]{20,}'(;|$)/)
    expect(policy).not.toContain('unsafe-inline')
    await shownValue('title').waitFor()
    const first = await scripts()
    expect(first.some(e => e.url.startsWith('/vendor/@codemirror/'))).toBe(false)
    expect(first.some(e => e.url === '/console/editor/setup.js')).toBe(false)
    await page.getByRole('button', { name: 'JSON', exact: true }).click()
    await editor('Content as JSON')
    const all = await scripts()
    const editorOnly = all.filter(e => !first.some(f => f.url === e.url))
    expect(editorOnly.some(e => e.url.startsWith('/vendor/@codemirror/view/'))).toBe(true)
    expect(editorOnly.some(e => e.url === '/console/editor/setup.js')).toBe(true)
    // CodeMirror's own styles apply (its <style> carries the nonce): its base theme makes the editor a flex box.
    expect(await page.locator('.cm-editor').evaluate(el => getComputedStyle(el).display)).toBe('flex')
    expect(await page.evaluate('window.cspRefusals ?? []')).toEqual([])
    // Measured, not asserted (docs/console.md, "Editors"): uncompressed module bytes, and as sent.
    console.log(`console page weight: first page ${first.length} modules, ${total(first, 'bytes')} B (${total(first, 'encoded')} B sent); ` +
      `the JSON tab adds ${editorOnly.length} modules, ${total(editorOnly, 'bytes')} B (${total(editorOnly, 'encoded')} B sent)`)
    await page.getByRole('button', { name: 'Tree', exact: true }).click()
  })

  it('works from the keyboard alone, with the focus always visible', async () => {
    await page.goto(`${app.url}/#/${PROJECT}/content`)
    await page.reload()
    await shownValue('title').waitFor()
    const focused = () => page.evaluate(() => {
      const element = document.activeElement as HTMLElement | null
      const style = element ? getComputedStyle(element) : null
      return { text: element?.textContent?.trim() ?? '', path: element?.closest('.row')?.getAttribute('data-path') ?? null, outline: style ? `${style.outlineStyle} ${style.outlineWidth}` : '' }
    })
    /** Presses Tab until `wanted` holds for the focused element; fails after 80 presses. */
    const tabTo = async (what: string, wanted: (f: Awaited<ReturnType<typeof focused>>) => boolean) => {
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press('Tab')
        const now = await focused()
        // Whatever has the focus shows it.
        expect(now.outline, `focus ring on ${now.text || now.path}`).not.toMatch(/^none|0px$/)
        if (wanted(now)) return
      }
      throw new Error(`Tab never reached ${what}`)
    }

    // The first Tab reaches "Skip to content", which moves the focus past the navigation.
    await page.keyboard.press('Tab')
    expect((await focused()).text).toBe('Skip to content')
    await page.keyboard.press('Enter')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main')

    // Edit a value: Tab to it, Enter opens the editor with the focus in it, Enter saves.
    await tabTo('the value of stats.visits', f => f.path === 'stats.visits' && f.text.startsWith('Edit'))
    await page.keyboard.press('Enter')
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('new value of stats.visits')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('100')
    await page.keyboard.press('Enter')
    await expect.poll(async () => (await stored()).stats.visits).toBe(100)
    await expect.poll(() => shownValue('stats.visits').textContent()).toBe('100')

    // Collapse a container with Enter on its toggle, open it again with Space.
    await page.locator('.row[data-path="posts"] > .toggle').focus()
    await page.keyboard.press('Enter')
    await expect.poll(() => row('posts.0').count()).toBe(0)
    await page.keyboard.press('Space')
    await expect.poll(() => row('posts.0').count()).toBe(1)

    // Move between tabs: Enter on a link, and the focus lands on the new page's heading.
    await page.getByRole('link', { name: 'Members' }).focus()
    await page.keyboard.press('Enter')
    await page.waitForURL(url => new URL(url).hash === `#/${PROJECT}/members`)
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toMatch(/^H[12]$/)
    await checkScreen('keyboard, members')
  })

  it('lists the history with actors, shows a past version, reverts to it, and adds new changes live', async () => {
    const key = await createKey(app.url, session, { name: 'history script', permission: 'write', projects: [PROJECT] })
    // More changes than one page (50) of the list.
    for (let i = 0; i < 30; i++) expect((await call(app.url, 'POST', `${API}/content/increment`, { token: key.key, body: { path: 'stats.visits' } })).status).toBe(200)
    const before = await stored()
    const set = await call(app.url, 'POST', `${API}/content/set`, { token: key.key, body: { path: 'price', value: 0 } })
    expect(set.status).toBe(200)
    const priced = Number(JSON.parse(set.headers.get('etag') as string))

    await page.goto(`${app.url}/#/${PROJECT}/history`)
    const entry = (version: number) => page.locator(`.change[data-version="${version}"]`)
    await entry(priced).waitFor()
    // Newest first: the key's change on top, with its actor.
    expect(await page.locator('.change').first().getAttribute('data-version')).toBe(String(priced))
    expect(await entry(priced).textContent()).toMatch(/v\d+set.*price.*0.*key history script/)
    expect(await entry(priced - 1).locator('.change-actor').textContent()).toBe('key history script')
    await checkScreen('history')
    await screenshot(page, 'console-history', { docName: 'console-history' })

    // The content before the key's change, read-only, with what differs from now.
    await entry(priced - 1).getByRole('button', { name: `View v${priced - 1}` }).click()
    const view = page.locator('.version-view')
    await view.getByRole('heading', { name: `The content at v${priced - 1}` }).waitFor()
    await view.locator('.row[data-path="title"]').waitFor()
    expect(await view.locator('.row[data-path="price"]').count()).toBe(0)
    expect(await view.locator('.row[data-path="title"] .shown').textContent()).toBe(JSON.stringify(before.title))
    // Read-only: no value to click, no edit buttons.
    expect(await view.getByRole('button', { name: /^Edit / }).count()).toBe(0)
    expect(await view.locator('.diff summary').textContent()).toContain('1 path differs')
    await checkScreen('history, a past version')

    // Revert asks first, then makes one new change; it joins the top of the list live.
    await view.getByRole('button', { name: `Revert to v${priced - 1}` }).click()
    await view.getByRole('group', { name: /^Make the content what it was/ }).getByRole('button', { name: 'Revert', exact: true }).click()
    await expect.poll(stored).toEqual(before)
    await entry(priced + 1).waitFor()
    expect(await entry(priced + 1).textContent()).toContain(`the content of v${priced - 1}`)
    expect(await entry(priced + 1).locator('.change-actor').textContent()).toBe(`@${USER}`)
    const log = (await call(app.url, 'GET', `${API}/content/changes?since=${priced}`, { token: session })).body
    expect(log.changes).toEqual([expect.objectContaining({ version: priced + 1, op: 'revert', revertedTo: priced - 1, actor: { type: 'user', name: `@${USER}` } })])

    // A change made elsewhere while the tab is open appears at the top.
    await call(app.url, 'POST', `${API}/content/increment`, { token: key.key, body: { path: 'stats.visits' } })
    await entry(priced + 2).waitFor()
    expect(await page.locator('.change').first().getAttribute('data-version')).toBe(String(priced + 2))
    // The filter shows the changes that touch a path, as the server's changes?path= lists them
    // (the revert, a whole-content change, among them); test/browser/console-paths.test.ts shows it asks the server.
    await page.getByLabel('Filter changes by path').fill('stats.visits')
    const touching = ((await call(app.url, 'GET', `${API}/content/changes?path=stats.visits&since=0&limit=1000`, { token: session })).body.changes as Array<{ version: number }>).map(c => c.version).reverse()
    expect(touching).toContain(priced + 1)
    expect(touching).not.toContain(priced)
    // The newest of them (at least a page of 50, or all): the newest first, none missing in between.
    await page.getByText('Changes that touch stats.visits').waitFor()
    const listed = () => page.locator('.timeline .change').evaluateAll(items => items.map(i => Number(i.getAttribute('data-version'))))
    await expect.poll(async () => (await listed()).length).toBeGreaterThanOrEqual(Math.min(50, touching.length))
    expect(await listed()).toEqual(touching.slice(0, (await listed()).length))
    await page.getByLabel('Filter changes by path').fill('')
    await entry(priced).waitFor()

    // The first page holds the newest 50 (and those that came live); older ones on demand, down to v1.
    expect(await entry(1).count()).toBe(0)
    await page.getByRole('button', { name: 'Show older changes' }).click()
    await entry(1).waitFor()
    expect(await page.locator('.change').count()).toBe(priced + 2)
    expect(await page.getByRole('button', { name: 'Show older changes' }).count()).toBe(0)
    expect(await entry(1).textContent()).toMatch(new RegExp(`^v1set.*title.*"Hello".*@${USER}`))
  })

  it('adds a webhook (its secret shown once), pings it, shows its deliveries, and deletes it', async () => {
    await page.goto(`${app.url}/#/${PROJECT}/webhooks`)
    await page.getByText('No webhooks yet').waitFor()
    await page.getByLabel('URL').fill(receiver.url)
    await page.getByLabel('Paths').fill('title, stats')
    await page.getByRole('checkbox', { name: 'set' }).check()
    await page.getByRole('checkbox', { name: 'increment' }).check()
    await page.getByLabel('Description').fill('rebuild the site')
    await page.getByRole('button', { name: 'Add webhook' }).click()
    const secretField = page.getByLabel(`Signing secret of the webhook to ${receiver.url}`)
    const secret = await secretField.inputValue()
    expect(secret).toMatch(/^whsec_/)
    await page.getByRole('button', { name: 'Copy' }).click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret)
    const listed = (await call(app.url, 'GET', `${API}/webhooks`, { token: session })).body.webhooks
    expect(listed).toEqual([expect.objectContaining({ url: receiver.url, paths: ['title', 'stats'], ops: ['set', 'increment'], description: 'rebuild the site', enabled: true })])
    const item = page.locator(`.webhook-item[data-webhook="${listed[0].id as string}"]`)
    expect(await item.textContent()).toContain(`delivered up to v${listed[0].cursor as number}`)
    await checkScreen('webhooks')
    await screenshot(page, 'console-webhooks', { docName: 'console-webhooks', fullPage: true })
    await page.getByRole('button', { name: 'I have copied it' }).click()
    expect(await secretField.count()).toBe(0)

    // A test ping reaches the receiver, signed with that secret.
    await item.getByRole('button', { name: 'Send a test ping' }).click()
    await expect.poll(() => item.locator('.ping').textContent()).toMatch(/^Ping delivered: HTTP 204/)
    expect(receiver.received.map(r => JSON.parse(r.body).type)).toEqual(['ping'])
    receiver.verifyAll(secret)

    // A matching change is delivered; the deliveries list shows it.
    const changed = await call(app.url, 'POST', `${API}/content/set`, { token: session, body: { path: 'title', value: 'Hooked' } })
    const version = Number(JSON.parse(changed.headers.get('etag') as string))
    await eventually(async () => receiver.received.length === 2, 'the delivery of the change')
    receiver.verifyAll(secret)
    await eventually(async () => (await call(app.url, 'GET', `${API}/webhooks/${listed[0].id as string}/deliveries`, { token: session })).body.deliveries.length === 1, 'the recorded delivery')
    // The progress shows without a reload (console/live-poll.ts: at most 16 s apart while nothing changes).
    await expect.poll(() => item.textContent(), { timeout: 20_000, interval: 200 }).toContain(`delivered up to v${version}`)
    await item.getByRole('button', { name: 'Deliveries' }).click()
    const rows = item.locator('.deliveries tbody tr')
    await expect.poll(() => rows.count()).toBe(1)
    expect(await rows.first().textContent()).toMatch(new RegExp(`^v${version}delivered204`))
    await checkScreen('webhooks, deliveries')

    await item.getByRole('button', { name: `Delete the webhook to ${receiver.url}` }).click()
    await item.getByRole('group', { name: /^Delete the webhook/ }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByText('No webhooks yet').waitFor()
    expect((await call(app.url, 'GET', `${API}/webhooks`, { token: session })).body.webhooks).toEqual([])
  })

  it('sets a schema (errors shown at its text), refuses a content edit with the schema\'s message, and removes it', async () => {
    const schemaStored = async () => call(app.url, 'GET', `${API}/schema`, { token: session })
    await page.goto(`${app.url}/#/${PROJECT}/schema`)
    await page.getByText('No schema yet: every write is accepted').waitFor()
    await checkScreen('schema, none')

    // A text longer and wider than the editor scrolls, and a keyboard can reach it (axe's
    // scrollable-region-focusable).
    await page.getByRole('button', { name: 'Write a schema' }).click()
    const long = { type: 'object', properties: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`property${i}_${'x'.repeat(i * 4)}`, { type: 'string' }])) }
    await (await editor('Schema as JSON')).fill(JSON.stringify(long, null, 2))
    expect(await page.locator('.schema-editor .cm-scroller').evaluate(e => e.scrollHeight > e.clientHeight && e.scrollWidth > e.clientWidth)).toBe(true)
    await checkScreen('schema, long text')
    await page.reload()
    await page.getByText('No schema yet: every write is accepted').waitFor()

    // The first draft names the content's keys with their types; the content matches it.
    await page.getByRole('button', { name: 'Write a schema' }).click()
    const text = await editor('Schema as JSON')
    const content = await stored()
    expect(Object.keys((JSON.parse(await editorText('Schema as JSON')) as { properties: object }).properties)).toEqual(Object.keys(content))
    const problem = page.locator('.schema-problem')

    // Not JSON: said at the text, before any request.
    await text.fill('{"type": "object",}')
    await page.getByRole('button', { name: 'Save schema' }).click()
    await expect.poll(() => problem.textContent()).toContain('Not valid JSON')
    // Its place, said once (Chromium's own message has it too).
    expect((await problem.textContent())?.match(/line \d+,? column \d+/g)).toEqual(['line 1, column 19'])
    await expect.poll(() => text.getAttribute('aria-invalid')).toBe('true')
    // Not a schema (the server says why: 400 INVALID_SCHEMA); nothing stored.
    await text.fill('{"type": "objekt"}')
    await page.getByRole('button', { name: 'Save schema' }).click()
    await expect.poll(() => problem.textContent()).toMatch(/type/)
    expect(await problem.textContent()).not.toContain('Not valid JSON')
    expect((await schemaStored()).body).toMatchObject({ code: 'SCHEMA_NOT_FOUND' })
    await checkScreen('schema, invalid')
    // A schema the content breaks (409 SCHEMA_VIOLATION): each path that breaks it, listed.
    await text.fill('{"type": "object", "required": ["missing"]}')
    await page.getByRole('button', { name: 'Save schema' }).click()
    await expect.poll(() => problem.locator('.schema-errors').textContent()).toBe("(the whole content): must have required property 'missing'")
    expect((await schemaStored()).status).toBe(404)

    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { title: { type: 'string' }, stats: { type: 'object', properties: { visits: { type: 'integer', minimum: 0 } } } }
    }
    await text.fill(JSON.stringify(schema))
    await page.getByRole('button', { name: 'Save schema' }).click()
    await page.locator('.schema-editor .saved').waitFor()
    expect(await problem.count()).toBe(0)
    expect(await page.locator('.schema-state').textContent()).toContain(`set by @${USER}`)
    expect((await schemaStored()).body).toEqual(schema)
    expect(JSON.parse(await editorText('Schema as JSON'))).toEqual(schema)
    await checkScreen('schema')
    await screenshot(page, 'console-schema', { docName: 'console-schema' })

    // A content edit the schema refuses (422): its message next to the edited value; nothing changed.
    const visits = content.stats.visits as number
    await page.getByRole('link', { name: 'Content', exact: true }).click()
    await page.getByRole('button', { name: 'Edit stats.visits' }).click()
    await page.getByLabel('Type of new value of stats.visits').selectOption('string')
    await page.getByLabel('new value of stats.visits', { exact: true }).fill('lots')
    await page.keyboard.press('Enter')
    const refusal = page.locator('.node', { has: row('stats.visits') }).last().locator('.schema-refusal')
    await expect.poll(() => refusal.textContent()).toContain("The content would not match the project's schema")
    expect(await refusal.locator('.schema-errors').textContent()).toBe('stats.visits: must be integer')
    expect((await stored()).stats.visits).toBe(visits)
    await checkScreen('content, refused by the schema')
    await screenshot(page, 'console-schema-refusal', { docName: 'console-schema-refusal' })
    await page.keyboard.press('Escape')
    // Escape closes the editor; the value is still the stored one.
    await page.getByRole('button', { name: 'Edit stats.visits' }).waitFor()

    // The JSON tab helps from the schema (console/editor/schema-assist.ts): a hint at a member
    // of the wrong type, and the keys the schema names for the object the cursor is in.
    await page.getByRole('button', { name: 'JSON', exact: true }).click()
    const json = await editor('Content as JSON')
    await json.fill('{"title": 5, "stats": {}}')
    await expect.poll(() => page.locator('.cm-lintRange-warning').first().textContent(), { timeout: 10_000 }).toBe('"title"')
    await page.keyboard.press('End')
    await page.keyboard.press('ArrowLeft')
    await page.keyboard.press('ArrowLeft')
    await page.keyboard.press('Control+Space')
    const offered = page.locator('.cm-tooltip-autocomplete li')
    await expect.poll(() => offered.allTextContents(), { timeout: 10_000 }).toEqual([expect.stringContaining('visits')])
    // Clicked: CodeMirror ignores Enter for a moment after the list opens (interactionDelay), against accidents.
    await offered.first().click()
    await expect.poll(() => editorText('Content as JSON')).toBe('{"title": 5, "stats": {"visits"}}')
    await checkScreen('content, JSON with schema help')
    await page.getByRole('button', { name: 'Tree', exact: true }).click()

    // Removing it (after a confirmation): writes are no longer checked.
    await page.goto(`${app.url}/#/${PROJECT}/schema`)
    await editor('Schema as JSON')
    await expect.poll(async () => JSON.parse(await editorText('Schema as JSON')) as unknown, { timeout: 10_000 }).toEqual(schema)
    await page.getByRole('button', { name: 'Remove the schema' }).click()
    await page.getByRole('group', { name: /^Remove the schema/ }).getByRole('button', { name: 'Remove', exact: true }).click()
    await page.getByText('No schema yet: every write is accepted').waitFor()
    expect((await schemaStored()).status).toBe(404)
    expect((await call(app.url, 'POST', `${API}/content/set`, { token: session, body: { path: 'stats.visits', value: visits } })).status).toBe(200)
  })

  it('shows who is viewing the content now, and which value each selected', async () => {
    expect((await call(app.url, 'PUT', `${API}/members/bob`, { token: session, body: { role: 'viewer' } })).status).toBe(200)
    const bobContext = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    bobContext.setDefaultTimeout(8000)
    await bobContext.addInitScript(token => sessionStorage.setItem('contentd.session', JSON.stringify({ token, username: '@bob' })), bob)
    const bobPage = await bobContext.newPage()
    bobPage.on('pageerror', error => problems.push(`bob: ${error.message}`))
    try {
      await page.goto(`${app.url}/#/${PROJECT}/content`)
      await bobPage.goto(`${app.url}/#/${PROJECT}/content`)
      const viewers = (p: Page) => p.locator('.viewer .viewer-name').allTextContents()
      // Joining takes a presence round trip per page; on two loaded cores more than the default 1 s.
      await expect.poll(() => viewers(page), { timeout: 10_000 }).toEqual(expect.arrayContaining([`@${USER} (you)`, '@bob']))
      await expect.poll(() => viewers(bobPage), { timeout: 10_000 }).toEqual(expect.arrayContaining([`@${USER}`, '@bob (you)']))

      // Bob (a viewer) selects a value: Ada sees the path next to his name, and the row marked.
      await bobPage.locator('.row[data-path="stats.visits"] .value').click()
      const bobOnAda = page.locator('.viewer', { hasText: '@bob' })
      await expect.poll(() => bobOnAda.locator('.viewer-path').textContent()).toBe('stats.visits')
      await expect.poll(() => row('stats.visits').getAttribute('title')).toBe('Selected by @bob')
      // Ada selects one too (her focus on it); Bob sees it.
      await row('title').locator('.value').focus()
      await expect.poll(() => bobPage.locator('.viewer', { hasText: `@${USER}` }).locator('.viewer-path').textContent()).toBe('title')
      await checkScreen('content, viewing now')
      await screenshot(page, 'console-viewing-now', { docName: 'console-viewing-now' })
      await page.keyboard.press('Escape')

      // A viewer sees the history and past versions, but cannot revert.
      await bobPage.goto(`${app.url}/#/${PROJECT}/history`)
      await bobPage.locator('.change').nth(1).getByRole('button', { name: /^View v\d+$/ }).click()
      await bobPage.getByRole('heading', { name: /^The content at v\d+$/ }).waitFor()
      await bobPage.locator('.version-view .row').first().waitFor()
      expect(await bobPage.getByRole('button', { name: /^Revert/ }).count()).toBe(0)
      await expect.poll(() => viewers(page)).toEqual([`@${USER} (you)`])

      // Bob leaves: he is gone from Ada's list.
      await bobPage.goto(`${app.url}/#/${PROJECT}/content`)
      await expect.poll(() => viewers(page)).toEqual(expect.arrayContaining(['@bob']))
      await bobPage.close()
      await expect.poll(() => viewers(page), { timeout: 5000 }).toEqual([`@${USER} (you)`])
    } finally {
      await bobContext.close()
    }
  })

  it('keeps the project list live: a version changed elsewhere shows without a reload', async () => {
    await page.goto(`${app.url}/#/`)
    const card = page.locator('.project-card', { has: page.locator('.card-ref', { hasText: `@${USER}/other` }) })
    await expect.poll(() => card.locator('.card-meta').textContent()).toContain('version 0')
    await call(app.url, 'POST', `/api/@${USER}/other/content/set`, { token: session, body: { path: 'note', value: 'from elsewhere' } })
    await expect.poll(() => card.locator('.card-meta').textContent(), { timeout: 10_000, interval: 200 }).toContain('version 1')
  })

  it('downloads a project\'s content as a .json file, and replaces it with an uploaded one after a confirmation', async () => {
    const OTHER = `/api/@${USER}/other`
    const otherStored = async () => (await call(app.url, 'GET', `${OTHER}/content`, { token: session })).body
    await page.goto(`${app.url}/#/@${USER}/other/content`)
    await page.getByRole('button', { name: 'JSON', exact: true }).click()
    const before = await otherStored()
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download .json' }).click()])
    expect(download.suggestedFilename()).toMatch(new RegExp(`^${USER}-other-v\\d+\\.json$`))
    expect(JSON.parse(readFileSync(await download.path(), 'utf8'))).toEqual(before)

    // A file that is not a JSON object is refused, and nothing changes.
    const file = page.getByLabel('Import a .json file')
    await file.setInputFiles({ name: 'list.json', mimeType: 'application/json', buffer: Buffer.from('[1, 2]') })
    await expect.poll(() => page.locator('.import-export .field-error').textContent()).toContain('list.json: The file must hold a JSON object')
    await file.setInputFiles({ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"a": }') })
    await expect.poll(() => page.locator('.import-export .field-error').textContent()).toContain('Not valid JSON')
    // Cancel leaves the content as it was; Replace sends it as one update with If-Match.
    const imported = { title: 'Imported', items: [1, 2, 3], nested: { ok: true } }
    await file.setInputFiles({ name: 'site.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(imported)) })
    const question = page.getByRole('group', { name: 'Replace the content with site.json?' })
    await question.getByRole('button', { name: 'Cancel' }).click()
    expect(await question.count()).toBe(0)
    expect(await otherStored()).toEqual(before)
    await file.setInputFiles({ name: 'site.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(imported)) })
    await checkScreen('content, import')
    await screenshot(page, 'console-import')
    const sent: Array<{ url: string, ifMatch: string | undefined }> = []
    const onRequest = (request: { method (): string, url (): string, headers (): Record<string, string> }) => { if (request.method() === 'POST') sent.push({ url: request.url(), ifMatch: request.headers()['if-match'] }) }
    page.on('request', onRequest)
    await question.getByRole('button', { name: 'Replace', exact: true }).click()
    await page.getByText('The content is now site.json.').waitFor()
    page.off('request', onRequest)
    expect(await otherStored()).toEqual(imported)
    expect(sent).toEqual([{ url: `${app.url}${OTHER}/content`, ifMatch: expect.stringMatching(/^"\d+"$/) }])
    // The text follows the live copy, which learns of the update from the change feed; the
    // HTTP answer (which showed the note above) may arrive before that event does.
    await editor('Content as JSON')
    await expect.poll(async () => JSON.parse(await editorText('Content as JSON')) as unknown, { timeout: 10_000 }).toEqual(imported)
  })

  it('deletes a project only after its name is typed', async () => {
    await page.goto(`${app.url}/#/@${USER}/other/settings`)
    const button = page.getByRole('button', { name: 'Delete this project' })
    await button.waitFor()
    expect(await button.isDisabled()).toBe(true)
    await page.getByLabel(/^Type/).fill(`@${USER}/othe`)
    expect(await button.isDisabled()).toBe(true)
    await page.getByLabel(/^Type/).fill(`@${USER}/other`)
    await checkScreen('settings')
    await button.click()
    await page.waitForURL(url => new URL(url).hash === '#/')
    expect((await call(app.url, 'GET', `/api/@${USER}/other`, { token: session })).status).toBe(404)
    await expect.poll(() => page.locator('.project-card').count()).toBe(1)
    await checkScreen('projects')
  })

  it('works at 375 px wide and in the dark theme', async () => {
    await page.setViewportSize({ width: 375, height: 812 })
    for (const route of [`#/${PROJECT}/content`, `#/${PROJECT}/history`, `#/${PROJECT}/schema`, `#/${PROJECT}/webhooks`, `#/${PROJECT}/connect`, '#/keys', `#/${PROJECT}/members`, '#/']) {
      await page.goto(`${app.url}/${route}`)
      await page.locator('h1').first().waitFor()
      await page.waitForTimeout(200)
      // Nothing wider than the phone's screen.
      expect(await page.evaluate(() => document.documentElement.scrollWidth), route).toBeLessThanOrEqual(375)
    }
    await page.goto(`${app.url}/#/${PROJECT}/content`)
    await shownValue('title').waitFor()
    await checkScreen('content, 375 px')
    await screenshot(page, 'console-375', { docName: 'console-375', fullPage: true })
    await page.getByRole('button', { name: 'Menu' }).click()
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByRole('heading', { name: 'API keys' }).waitFor()

    await page.setViewportSize({ width: 1280, height: 800 })
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.goto(`${app.url}/#/${PROJECT}/content`)
    await shownValue('title').waitFor()
    await page.waitForTimeout(300)
    await checkScreen('content, dark')
    await screenshot(page, 'console-dark', { docName: 'console-dark' })
    await page.emulateMedia({ colorScheme: 'light' })
  })

  it('has no serious accessibility violation on any screen, and no script error', () => {
    expect(Object.keys(accessibility).length).toBeGreaterThanOrEqual(15)
    for (const [screen, violations] of Object.entries(accessibility)) expect(violations, screen).toEqual([])
    expect(problems).toEqual([])
  })
})
