// The console's Rules tab in real Chromium (docs/rules.md, docs/console.md#rules): rules
// written in the editor and saved are what the API stores; an invalid rule shows the server's
// message (the rule's path and its CEL error) at the text and stores nothing; the simulator
// answers as the owner types, allowed for one caller and denied for another, exactly as the
// API's own `rules/check` does; the rules are removed. The trusted app sign-in shows read-only.
// axe-core checks each screen for serious or critical violations.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decisionText, STARTER_RULES } from '../../console/panels/rules-text.js'
import type { RulesCheck, RulesDecision } from '../../shared/client/index.js'
import { APP_AUDIENCE, APP_ISSUER, APP_SECRET } from '../support/app-tokens.js'
import { hasChromium, launchChromium, requireChromium, screenshot, seriousViolations, type AxeViolation } from '../support/browser.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

requireChromium('the console rules test')

describe.skipIf(!hasChromium)('the console Rules tab', () => {
  let app: TestApp
  let browser: Browser
  let page: Page
  let session = ''
  let path = ''
  /** Script errors and console errors other than the browser's own line for a 4xx answer. */
  const problems: string[] = []
  const accessibility: Record<string, AxeViolation[]> = {}
  const checkScreen = async (name: string) => { accessibility[name] = await seriousViolations(page) }

  beforeAll(async () => {
    app = await startTestApp({}, { realtime: true })
    let key = ''
    ;({ session, key, path } = await ownerWithProject(app.url, 'ru'))
    await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'users', value: { u1: { name: 'Ann' }, u2: { name: 'Bo' } } } })
    await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'leaderboard', value: { u1: { score: 3 } } } })
    expect((await call(app.url, 'PUT', `${path}/auth`, { token: session, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET } })).status).toBe(200)
    browser = await launchChromium()
    const context = await browser.newContext({ viewport: { width: 1280, height: 1250 } })
    context.setDefaultTimeout(8000)
    await context.addInitScript(([token]) => { sessionStorage.setItem('contentd.session', JSON.stringify({ token, username: 'ru' })) }, [session])
    page = await context.newPage()
    page.on('console', message => { if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(message.text()) })
    page.on('pageerror', error => problems.push(error.message))
  }, 60_000)
  afterAll(async () => { await browser?.close(); await app?.close() })

  const rulesStored = () => call(app.url, 'GET', `${path}/rules`, { token: session })
  const apiCheck = async (check: RulesCheck) => {
    const answer = await call(app.url, 'POST', `${path}/rules/check`, { token: session, body: check })
    expect(answer.status).toBe(200)
    return answer.body as RulesDecision
  }
  const verdict = () => page.locator('.rules-verdict')
  /** The verdict's text once no question is waiting for its answer. */
  const settledVerdict = async () => {
    const shown = verdict()
    if (await shown.getAttribute('data-pending') !== 'false') return null
    return shown.locator('.rules-verdict-text').textContent()
  }
  /** To another tab and back: the Rules tab is read again, from what the project page knows (hasRules, hasAppAuth); any 4xx answer meanwhile is returned. */
  const revisit = async () => {
    const refused: string[] = []
    const onResponse = (response: { url (): string, status (): number }) => { if (response.status() >= 400) refused.push(`${response.status()}: ${response.url()}`) }
    page.on('response', onResponse)
    try {
      const tabs = page.getByRole('navigation', { name: '@ru/demo sections' })
      await tabs.getByRole('link', { name: 'Settings', exact: true }).click()
      await page.getByText('Delete this project').first().waitFor()
      await tabs.getByRole('link', { name: 'Rules', exact: true }).click()
      await page.locator('.rules-trust').waitFor()
      await page.waitForTimeout(300)
    } finally {
      page.off('response', onResponse)
    }
    return refused
  }
  const editorText = () => page.evaluate(
    'import(\'@codemirror/view\').then(({ EditorView }) => EditorView.findFromDOM(document.querySelector(\'.cm-content[aria-label="Rules as JSON"]\')).state.doc.toString())'
  ) as Promise<string>

  it('shows the trusted sign-in, writes the starter rules in the editor and saves them as the API stores them', async () => {
    // No request that answers 404: GET of the project said there are no rules (hasRules).
    const refused: string[] = []
    const onResponse = (response: { url (): string, status (): number }) => { if (response.status() >= 400) refused.push(`${response.status()}: ${response.url()}`) }
    page.on('response', onResponse)
    await page.goto(`${app.url}/#/@ru/demo/rules`)
    await page.getByText('No rules yet: app users may do nothing').waitFor()
    page.off('response', onResponse)
    expect(refused).toEqual([])
    const trust = page.locator('.rules-trust')
    expect((await trust.locator('dd').allTextContents()).slice(0, 3)).toEqual([APP_ISSUER, APP_AUDIENCE, 'a shared HS256 secret'])
    expect(await trust.textContent()).not.toContain(APP_SECRET)
    expect((await rulesStored()).status).toBe(404)
    await checkScreen('rules, empty')

    await page.getByRole('button', { name: 'Write rules' }).click()
    await page.locator('.code-editor[data-state="ready"]').waitFor({ timeout: 10_000 })
    expect(JSON.parse(await editorText())).toEqual(STARTER_RULES)
    // Not saved yet: the simulator checks the rules in the editor (sent as the check's `rules`), as the API answers them.
    const draftAnswer = await apiCheck({ auth: { sub: 'u1' }, op: 'write', path: 'users.u1.name', value: 'Ann', rules: STARTER_RULES })
    expect(draftAnswer.allowed).toBe(true)
    await expect.poll(settledVerdict).toBe(decisionText(draftAnswer, 'write', 'users.u1.name', true))
    expect(await page.locator('.rules-checked').textContent()).toMatch(/^Checking the rules in the editor/)
    expect((await rulesStored()).status).toBe(404)

    await page.getByRole('button', { name: 'Save rules' }).click()
    await page.locator('.rules-editor .saved').waitFor()
    expect((await rulesStored()).body).toEqual(STARTER_RULES)
    expect(await page.locator('.rules-state').textContent()).toBe('In force for app users.')
    expect(await page.locator('.rules-checked').textContent()).toBe('Checking the saved rules.')
  }, 60_000)

  it('simulates as the owner types: allowed for one caller, denied for another, as the API answers', async () => {
    const claims = page.getByLabel('Token claims (JSON)')
    const cases: Array<{ claims: string | null, op: 'read' | 'write', path: string, value?: string, body: RulesCheck, allowed: boolean }> = [
      { claims: '{"sub": "u1"}', op: 'write', path: 'users.u1.name', value: '"Ann"', body: { auth: { sub: 'u1' }, op: 'write', path: 'users.u1.name', value: 'Ann' }, allowed: true },
      { claims: '{"sub": "u2"}', op: 'write', path: 'users.u1.name', value: '"Ann"', body: { auth: { sub: 'u2' }, op: 'write', path: 'users.u1.name', value: 'Ann' }, allowed: false },
      // data and newData: raising one's own score is allowed, lowering it is not.
      { claims: '{"sub": "u1"}', op: 'write', path: 'leaderboard.u1.score', value: '5', body: { auth: { sub: 'u1' }, op: 'write', path: 'leaderboard.u1.score', value: 5 }, allowed: true },
      { claims: '{"sub": "u1"}', op: 'write', path: 'leaderboard.u1.score', value: '1', body: { auth: { sub: 'u1' }, op: 'write', path: 'leaderboard.u1.score', value: 1 }, allowed: false },
      { claims: null, op: 'read', path: 'leaderboard', body: { auth: null, op: 'read', path: 'leaderboard' }, allowed: true },
      { claims: null, op: 'read', path: 'users.u1', body: { auth: null, op: 'read', path: 'users.u1' }, allowed: false }
    ]
    for (const step of cases) {
      const notSignedIn = page.getByLabel('Not signed in')
      if (step.claims === null) {
        await notSignedIn.check()
      } else {
        await notSignedIn.uncheck()
        await claims.fill(step.claims)
      }
      await page.getByLabel('Operation').selectOption(step.op)
      await page.getByLabel('Path', { exact: true }).fill(step.path)
      if (step.value !== undefined) await page.getByLabel('Value written').fill(step.value)
      const answer = await apiCheck(step.body)
      expect(answer.allowed, JSON.stringify(step.body)).toBe(step.allowed)
      await expect.poll(settledVerdict, { message: JSON.stringify(step.body) }).toBe(decisionText(answer, step.op, step.path, true))
      expect(await verdict().getAttribute('data-state')).toBe(step.allowed ? 'allowed' : 'denied')
    }
    // The verdict is a polite live region, so each answer is read out without taking the focus.
    expect(await verdict().getAttribute('role')).toBe('status')
    expect(await verdict().getAttribute('aria-live')).toBe('polite')

    // Claims that are no JSON object: said at the field, nothing asked.
    await page.getByLabel('Not signed in').uncheck()
    await claims.fill('{"sub": ')
    await expect.poll(settledVerdict).toMatch(/^Not checked: Not valid JSON/)
    expect(await claims.getAttribute('aria-invalid')).toBe('true')
    await claims.fill('{"sub": "u1"}')
    await page.getByLabel('Operation').selectOption('write')
    await page.getByLabel('Path', { exact: true }).fill('users.u1.name')
    await page.getByLabel('Value written').fill('"Zoe"')
    await expect.poll(settledVerdict).toBe('Allowed: write at users.u1.name, by users.$uid/.write')
    await checkScreen('rules, simulator')
    await screenshot(page, 'console-rules', { docName: 'console-rules' })
  }, 60_000)

  it('shows an invalid rule\'s path and CEL error at the text, and stores nothing', async () => {
    const text = page.locator('.cm-content[aria-label="Rules as JSON"]')
    const problem = page.locator('.rules-problem')
    await text.fill('{"rules": {"users": {"$uid": {".write": "auth.sub =="}}}}')
    // Edited, not saved: the simulator checks the edits, and says why it cannot.
    await expect.poll(settledVerdict).toMatch(/^Not checked: .*users\.\$uid\/\.write/)
    await page.getByRole('button', { name: 'Save rules' }).click()
    await expect.poll(() => problem.textContent()).toContain('users.$uid/.write')
    expect(await problem.getAttribute('role')).toBe('alert')
    await expect.poll(() => text.getAttribute('aria-invalid')).toBe('true')
    // ... and marked at the rule it names, in the text.
    await expect.poll(() => page.locator('.cm-lintRange-error').first().textContent()).toBe('".write"')
    expect((await rulesStored()).body).toEqual(STARTER_RULES)
    await checkScreen('rules, invalid')
    await screenshot(page, 'console-rules-invalid')

    // Not JSON: said before anything is sent.
    await text.fill('{"rules": {},}')
    await page.getByRole('button', { name: 'Save rules' }).click()
    await expect.poll(() => problem.textContent()).toContain('Not valid JSON')
    await expect.poll(settledVerdict).toMatch(/^Not checked: the rules above are not valid yet \(Not valid JSON/)
    // Edits that deny what the saved rules allow: the verdict follows the edits, as the API answers them.
    await text.fill('{"rules": {"leaderboard": {".read": true}}}')
    const denied = await apiCheck({ auth: { sub: 'u1' }, op: 'write', path: 'users.u1.name', value: 'Zoe', rules: { rules: { leaderboard: { '.read': true } } } })
    expect(denied.allowed).toBe(false)
    await expect.poll(settledVerdict).toBe(decisionText(denied, 'write', 'users.u1.name', true))
    expect((await rulesStored()).body).toEqual(STARTER_RULES)
    await page.getByRole('button', { name: 'Revert my changes' }).click()
    expect(JSON.parse(await editorText())).toEqual(STARTER_RULES)
    await expect.poll(settledVerdict).toBe('Allowed: write at users.u1.name, by users.$uid/.write')
    expect(await problem.count()).toBe(0)
  }, 60_000)

  it('removes the rules: the API has none, and the simulator denies', async () => {
    await page.getByRole('button', { name: 'Remove the rules' }).click()
    await page.getByRole('button', { name: 'Remove', exact: true }).click()
    await page.getByText('No rules yet: app users may do nothing').waitFor()
    expect((await rulesStored()).body).toMatchObject({ code: 'RULES_NOT_FOUND' })
    // Back on the tab: no rules asked for (hasRules followed the removal), so no 404.
    expect(await revisit()).toEqual([])
    await page.getByText('No rules yet: app users may do nothing').waitFor()
    const answer = await apiCheck({ auth: { sub: 'u1' }, op: 'write', path: 'users.u1.name', value: 'Ann' })
    expect(answer).toEqual({ allowed: false })
    await expect.poll(settledVerdict).toBe(decisionText(answer, 'write', 'users.u1.name', false))
    await checkScreen('rules, removed')
  }, 60_000)

  it('changes and stops trusting the app sign-in through its form; the server\'s refusal shows at the form', async () => {
    const authStored = () => call(app.url, 'GET', `${path}/auth`, { token: session })
    const trust = page.locator('.rules-trust')
    await page.getByRole('button', { name: 'Change the app sign-in' }).click()
    expect(await page.getByLabel('Issuer (iss)').inputValue()).toBe(APP_ISSUER)
    await page.getByLabel('Issuer (iss)').fill('https://other.example.test/')
    await page.getByLabel('Audience (aud, optional)').fill('')
    // Too short for HS256: the server's 400 INVALID_AUTH_CONFIG, at the form; nothing changed.
    await page.getByLabel(/^HS256 secret/).fill('short')
    await page.getByRole('button', { name: 'Save the app sign-in' }).click()
    await expect.poll(() => trust.getByRole('alert').textContent()).toContain('at least 32 bytes')
    expect((await authStored()).body).toMatchObject({ issuer: APP_ISSUER })
    await checkScreen('rules, app sign-in form')
    await page.getByLabel(/^HS256 secret/).fill(APP_SECRET)
    await page.getByRole('button', { name: 'Save the app sign-in' }).click()
    await page.getByRole('button', { name: 'Change the app sign-in' }).waitFor()
    expect((await authStored()).body).toEqual({ issuer: 'https://other.example.test/', audience: null, kind: 'hs256Secret', setBy: '@ru', setAt: expect.any(String) })
    expect((await trust.locator('dd').allTextContents()).slice(0, 3)).toEqual(['https://other.example.test/', '(any)', 'a shared HS256 secret'])
    // The project page follows (hasAppAuth): back on the tab, the new setting is read.
    expect(await revisit()).toEqual([])
    expect((await trust.locator('dd').allTextContents()).slice(0, 3)).toEqual(['https://other.example.test/', '(any)', 'a shared HS256 secret'])

    await page.getByRole('button', { name: 'Stop trusting the app sign-in' }).click()
    await page.getByRole('button', { name: 'Stop trusting', exact: true }).click()
    await page.getByRole('button', { name: 'Trust an app sign-in' }).waitFor()
    expect((await authStored()).body).toMatchObject({ code: 'AUTH_CONFIG_NOT_FOUND' })
    expect(await trust.textContent()).toContain('No app sign-in is trusted yet')
    // ... and none is asked for, back on the tab.
    expect(await revisit()).toEqual([])
    expect(await trust.textContent()).toContain('No app sign-in is trusted yet')
  }, 60_000)

  it('fits a 375 px phone without scrolling sideways', async () => {
    await page.setViewportSize({ width: 375, height: 800 })
    await page.getByText('No rules yet: app users may do nothing').waitFor()
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
    await checkScreen('rules, phone')
    await screenshot(page, 'console-rules-phone', { fullPage: true })
    await page.setViewportSize({ width: 1280, height: 1250 })
  }, 60_000)

  it('has no serious accessibility violation and no script error on any screen', () => {
    expect(accessibility).toEqual(Object.fromEntries(Object.keys(accessibility).map(name => [name, []])))
    expect(Object.keys(accessibility).length).toBe(6)
    expect(problems).toEqual([])
  })
})
