// Real Chromium for the browser tests (Debian's chromium through playwright-core), an
// accessibility check with axe-core injected into the page, and screenshots: always to
// test-artifacts/, and with UPDATE_SCREENSHOTS=1 also to docs/images/ for the README and docs.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { PROJECT_ROOT } from './server-process.js'

export const CHROMIUM = '/usr/bin/chromium'
export const hasChromium = existsSync(CHROMIUM)
export const ARTIFACTS = join(PROJECT_ROOT, 'test-artifacts')
const DOC_IMAGES = join(PROJECT_ROOT, 'docs', 'images')
const updateScreenshots = process.env.UPDATE_SCREENSHOTS === '1'

/** Throws on CI without Chromium; elsewhere warns loudly, and the caller skips. */
export function requireChromium (what: string): void {
  if (hasChromium) return
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is required on CI (.ci/run installs chromium)`)
  console.warn(`\n*** SKIPPING ${what}: ${CHROMIUM} is not installed (apt-get install chromium) ***\n`)
}

export function launchChromium (): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']
  })
}

/**
 * Saves a screenshot as test-artifacts/<name>.png; with UPDATE_SCREENSHOTS=1 also as
 * docs/images/<docName>.png when a docName is given.
 */
export async function screenshot (page: Page, name: string, options: { docName?: string, fullPage?: boolean } = {}): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true })
  const file = join(ARTIFACTS, `${name}.png`)
  // No caret or flash half-way through in the pictures.
  await page.screenshot({ path: file, fullPage: options.fullPage ?? false, animations: 'disabled', caret: 'hide' })
  if (updateScreenshots && options.docName) {
    mkdirSync(DOC_IMAGES, { recursive: true })
    copyFileSync(file, join(DOC_IMAGES, `${options.docName}.png`))
  }
}

export interface AxeViolation { id: string, impact: string | null, help: string, targets: string[] }

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/**
 * Runs axe-core (WCAG 2.x A and AA rules and best practices) on the page as it is, and
 * returns the serious and critical violations. Injected through the DevTools protocol, so
 * the page's Content-Security-Policy stays as it is.
 */
export async function seriousViolations (page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run (context: Document, options: object): Promise<{ violations: Array<{ id: string, impact: string | null, help: string, nodes: Array<{ target: unknown[] }> }> }> } }).axe
    const result = await axe.run(document, { resultTypes: ['violations'] })
    return result.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map(n => JSON.stringify(n.target)) }))
  })
  return violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
}
