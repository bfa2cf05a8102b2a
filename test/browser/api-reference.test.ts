// The API reference at /docs in real Chromium, as a new user meets it: every operation of
// /openapi.json is rendered (Swagger UI, from the installed swagger-ui-dist), the page loads
// nothing from another origin and breaks no Content-Security-Policy rule, and "Try it out"
// with the bearer token typed into "Authorize" makes a real request: an increment whose
// effect is then read over HTTP.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, launchChromium, requireChromium, screenshot } from '../support/browser.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

requireChromium('the API reference browser test')

const METHODS = ['get', 'post', 'put', 'delete', 'patch']

describe.skipIf(!hasChromium)('the API reference at /docs in chromium', () => {
  let app: TestApp
  let browser: Browser
  let page: Page
  let owner: Awaited<ReturnType<typeof ownerWithProject>>
  const problems: string[] = []
  const foreignRequests: string[] = []

  beforeAll(async () => {
    app = await startTestApp()
    owner = await ownerWithProject(app.url, 'ada')
    browser = await launchChromium()
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    context.setDefaultTimeout(10_000)
    page = await context.newPage()
    page.on('console', message => { if (message.type() === 'error') problems.push(message.text()) })
    page.on('pageerror', error => problems.push(error.message))
    page.on('request', request => { if (!request.url().startsWith(app.url) && !request.url().startsWith('data:')) foreignRequests.push(request.url()) })
  })
  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it('renders every operation of /openapi.json, with nothing from another origin and no error', async () => {
    const spec = (await call(app.url, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> }
    const expected = Object.entries(spec.paths).flatMap(([path, item]) => Object.keys(item).filter(m => METHODS.includes(m)).map(m => `${m.toUpperCase()} ${path}`)).sort()
    expect(expected.length).toBeGreaterThan(40)

    await page.goto(`${app.url}/docs`)
    await page.locator('.opblock').first().waitFor()
    await expect.poll(() => page.locator('.opblock').count()).toBe(expected.length)
    const rendered = await page.locator('.opblock').evaluateAll(blocks => blocks.map(block => {
      const method = block.querySelector('.opblock-summary-method')?.textContent ?? '?'
      const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '?'
      return `${method.toUpperCase()} ${path}`
    }))
    expect(rendered.sort()).toEqual(expected)
    // Swagger UI reports a document it cannot read in an error box.
    expect(await page.locator('.errors-wrapper').count()).toBe(0)
    await screenshot(page, 'api-reference')
    expect(foreignRequests).toEqual([])
    expect(problems).toEqual([])
  })

  it('sends a request from the page: "Authorize" with the token, then "Try it out" and "Execute" an increment', async () => {
    await page.locator('button.authorize').first().click()
    // The document's two schemes: the bearer token, and ?access_token= (the event stream only).
    const bearer = page.locator('.dialog-ux .auth-container').filter({ hasText: 'bearerAuth' })
    await bearer.locator('input').fill(owner.key)
    await bearer.locator('button.modal-btn.authorize').click()
    await bearer.locator('button.modal-btn.btn-done').click()

    const operation = page.locator('.opblock').filter({ has: page.locator('.opblock-summary-path[data-path="/api/{username}/{projectSlug}/content/increment"]') })
    await operation.locator('.opblock-summary').first().click()
    await operation.getByRole('button', { name: 'Try it out' }).click()
    await operation.locator('tr[data-param-name="username"] input').fill('@ada')
    await operation.locator('tr[data-param-name="projectSlug"] input').fill('demo')
    await operation.locator('textarea.body-param__text').fill('{"path": "visits", "value": 3}')
    await operation.getByRole('button', { name: 'Execute' }).click()

    const status = operation.locator('.live-responses-table .response .response-col_status').first()
    await expect.poll(() => status.textContent()).toMatch(/^200/)
    expect(await operation.locator('.live-responses-table tbody').first().textContent()).toContain('Value incremented successfully')
    expect((await call(app.url, 'GET', `${owner.path}/content`, { token: owner.session })).body).toEqual({ visits: 3 })
    await screenshot(page, 'api-reference-try-it')
    expect(foreignRequests).toEqual([])
    expect(problems).toEqual([])
  })
})
