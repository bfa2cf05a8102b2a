// App users on Server-Sent Events (docs/design.md §17): `?access_token=<JWT>` verified against
// the project; a whole-project stream needs .read at the root; a refused or bad token gets no stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { APP_AUDIENCE, APP_ISSUER, APP_SECRET, hs256Token } from '../support/app-tokens.js'
import { call, createProject, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

describe('app users on Server-Sent Events', () => {
  let app: TestApp
  let owner: string
  beforeAll(async () => {
    app = await startTestApp()
    owner = await signup(app.url, 'alice')
    await createProject(app.url, owner, 'demo')
    expect((await call(app.url, 'PUT', '/api/@alice/demo/auth', { token: owner, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET } })).status).toBe(200)
    expect((await call(app.url, 'PUT', '/api/@alice/demo/rules', { token: owner, body: { rules: { '.read': 'auth.role == "viewer"', users: { $uid: { '.write': 'auth.sub == uid' } } } } })).status).toBe(200)
  })
  afterAll(async () => { await app.close() })

  const events = (token: string) => `${app.url}/api/@alice/demo/content/events?access_token=${encodeURIComponent(token)}`

  it('streams the snapshot and a later change to an app user allowed the root', async () => {
    const controller = new AbortController()
    const r = await fetch(events(await hs256Token({ sub: 'u1', role: 'viewer' })), { signal: controller.signal })
    expect(r.status).toBe(200)
    const reader = (r.body as ReadableStream<Uint8Array>).getReader()
    let text = ''
    const readUntil = async (needle: string) => {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read()
        if (done) throw new Error(`stream ended before ${needle}: ${text}`)
        text += new TextDecoder().decode(value)
      }
    }
    await readUntil('event: snapshot')
    const write = await call(app.url, 'POST', '/api/@alice/demo/content/set', { token: await hs256Token({ sub: 'u1', role: 'viewer' }), body: { path: 'users.u1.name', value: 'streamed' } })
    expect(write.status).toBe(200)
    await readUntil('"streamed"')
    expect(text).toContain('"actor":{"type":"app","sub":"u1"}')
    controller.abort()
  })

  it('refuses an app user without .read at the root: 403 RULES_DENIED, no stream', async () => {
    const r = await fetch(events(await hs256Token({ sub: 'u1' })))
    expect(r.status).toBe(403)
    expect(await r.json()).toMatchObject({ code: 'RULES_DENIED', path: '' })
  })

  it('refuses a token that does not verify: 401 INVALID_TOKEN', async () => {
    const r = await fetch(events(await hs256Token({ sub: 'u1', role: 'viewer' }, { expiresIn: -600 })))
    expect(r.status).toBe(401)
    expect(await r.json()).toMatchObject({ code: 'INVALID_TOKEN' })
  })
})
