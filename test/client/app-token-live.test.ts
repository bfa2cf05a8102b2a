// [rules, issue 31] The SDK's live paths with an app user's token provider (docs/design.md
// §15, §17): `project.ref(path).subscribe()` over a real Socket.IO connection follows the
// value at a path the rules let the user read, and reports RULES_DENIED (naming the path)
// through onError for one they do not, without any value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type ContentdClientError } from '../../shared/client/index.js'
import { APP_AUDIENCE, APP_ISSUER, APP_SECRET, hs256Token } from '../support/app-tokens.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

const until = async (condition: () => boolean, what: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

describe('SDK live paths for app users', () => {
  let app: TestApp
  let session: string
  const project = '@sdkapplive/demo'
  const base = `/api/${project}`
  beforeAll(async () => {
    app = await startTestApp({}, { realtime: true })
    session = (await ownerWithProject(app.url, 'sdkapplive')).session
    expect((await call(app.url, 'PUT', `${base}/auth`, { token: session, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET } })).status).toBe(200)
    expect((await call(app.url, 'PUT', `${base}/rules`, { token: session, body: { rules: { users: { $uid: { '.read': 'auth.sub == uid', '.write': 'auth.sub == uid' } } } } })).status).toBe(200)
    expect((await call(app.url, 'POST', `${base}/content`, { token: session, body: { users: { u1: { n: 1 }, u2: { n: 2 } } } })).status).toBe(200)
  })
  afterAll(async () => { await app.close() })

  it('follows the user\'s own path, and is refused another\'s with RULES_DENIED', async () => {
    const client = createClient({ baseUrl: app.url, token: () => hs256Token({ sub: 'u1' }) })
    try {
      const p = client.project(project)
      const seen: unknown[] = []
      const mine = p.ref('users.u1.n').subscribe(value => seen.push(value))
      await mine.ready
      expect(mine.value).toBe(1)
      await p.increment('users.u1.n', 2)
      await until(() => mine.value === 3, 'the increment on the live path')
      const errors: ContentdClientError[] = []
      const values: unknown[] = []
      p.ref('users.u2').subscribe(value => values.push(value), { onError: error => errors.push(error) })
      await until(() => errors.length > 0, 'the refusal')
      expect(errors[0]).toMatchObject({ code: 'RULES_DENIED' })
      expect(values).toEqual([])
    } finally {
      client.close()
    }
  })
})
