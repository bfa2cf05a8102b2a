// docs/design.md §4.8: anything unexpected is a 500 (or 503 for the store) with a generic
// {message, code}; details go to the log, never to the client.
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { expectErrorShape } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

describe('when the store fails underneath the app', () => {
  let app: TestApp
  let key: string
  let path: string
  beforeAll(async () => {
    app = await startTestApp()
    ;({ key, path } = await ownerWithProject(app.url, 'unlucky'))
    // Pull the store out from under the running app: every query now throws.
    await app.store.close()
  })
  afterAll(async () => {
    app.server.closeAllConnections()
    await new Promise<void>(resolve => app.server.close(() => resolve()))
    rmSync(app.dataDir, { recursive: true, force: true })
  })

  it('healthz is 503 STORE_UNAVAILABLE', async () => {
    const r = await call(app.url, 'GET', '/healthz')
    expect(r.status).toBe(503)
    expectErrorShape(r, 'STORE_UNAVAILABLE')
  })

  it.each([
    ['GET', '/content', undefined],
    ['POST', '/content/increment', { path: 'n' }],
    ['POST', '/content', { a: 1 }]
  ] as const)('%s %s is a generic 5xx without internals', async (method, suffix, body) => {
    const r = await call(app.url, method, `${path}${suffix}`, { token: key, ...(body ? { body } : {}) })
    expect(r.status).toBeGreaterThanOrEqual(500)
    expectErrorShape(r)
    expect(['INTERNAL_ERROR', 'STORE_UNAVAILABLE']).toContain(r.body.code)
    expect(r.text).not.toMatch(/sqlite|database|SELECT|TypeError|\sat\s|\.js|\.ts/i)
  })
})
