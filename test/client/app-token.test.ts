// The SDK with an app user's token provider (docs/design.md §17): createClient({ token: fn })
// against a real server; the function is called for the first request, again shortly
// before the token it gave expires, and again once after a 401 INVALID_TOKEN.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, ContentdError } from '../../shared/client/index.js'
import { expiryOf, TokenSource } from '../../shared/client/token-source.js'
import { APP_AUDIENCE, APP_ISSUER, APP_SECRET, hs256Token, tampered } from '../support/app-tokens.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

describe('SDK token provider for app users', () => {
  let app: TestApp
  let project: string
  beforeAll(async () => {
    app = await startTestApp()
    const { session } = await ownerWithProject(app.url, 'alice')
    const slugs = await call(app.url, 'GET', '/api/projects', { token: session })
    project = `${slugs.body.projects[0].username}/${slugs.body.projects[0].slug}`
    const base = `/api/${project}`
    expect((await call(app.url, 'PUT', `${base}/auth`, { token: session, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET } })).status).toBe(200)
    expect((await call(app.url, 'PUT', `${base}/rules`, { token: session, body: { rules: { users: { $uid: { '.read': 'auth.sub == uid', '.write': 'auth.sub == uid' } } } } })).status).toBe(200)
  })
  afterAll(async () => { await app.close() })

  it('writes and reads as the app user, asking the provider once for a fresh token', async () => {
    let calls = 0
    const client = createClient({ baseUrl: app.url, token: async () => { calls++; return hs256Token({ sub: 'u1' }) } })
    try {
      const p = client.project(project)
      await p.set('users.u1.name', 'Ann')
      expect(await p.get('users.u1.name')).toBe('Ann')
      expect(calls).toBe(1)
      await expect(p.set('users.u2.name', 'x')).rejects.toMatchObject({ code: 'RULES_DENIED' })
    } finally {
      client.close()
    }
  })

  it('asks again for a token about to expire, and once after a 401', async () => {
    const given: string[] = []
    // First a token expiring in 10 s (inside the 30 s refresh window), then good ones.
    const client = createClient({ baseUrl: app.url, token: async () => { const t = await hs256Token({ sub: 'u1' }, { expiresIn: given.length === 0 ? 10 : 3600 }); given.push(t); return t } })
    try {
      await client.project(project).set('users.u1.a', 1)
      expect(given.length).toBe(1)
      // The first token was inside the refresh window: the second request asked for another,
      // the third kept it.
      await client.project(project).set('users.u1.b', 2)
      expect(given.length).toBe(2)
      await client.project(project).set('users.u1.c', 2)
      expect(given.length).toBe(2)
    } finally {
      client.close()
    }
    let asked = 0
    const retried = createClient({ baseUrl: app.url, token: async () => { asked++; const t = await hs256Token({ sub: 'u1' }); return asked === 1 ? tampered(t) : t } })
    try {
      await retried.project(project).set('users.u1.c', 3)
      expect(asked).toBe(2)
    } finally {
      retried.close()
    }
  })

  it('refuses with INVALID_TOKEN when the provider keeps giving bad tokens', async () => {
    const client = createClient({ baseUrl: app.url, token: async () => tampered(await hs256Token({ sub: 'u1' })) })
    try {
      const error = await client.project(project).get('users.u1').catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ContentdError)
      expect((error as ContentdError).code).toBe('INVALID_TOKEN')
    } finally {
      client.close()
    }
  })

  it('reads a JWT\'s exp, and keeps a fixed token as it is', async () => {
    const token = await hs256Token({ sub: 'u1' }, { expiresIn: 100 })
    expect(expiryOf(token)).toBeGreaterThan(Date.now())
    expect(expiryOf('cdk_not_a_jwt')).toBeNull()
    expect(await new TokenSource('cdk_fixed').get()).toBe('cdk_fixed')
    expect(new TokenSource('cdk_fixed').refreshable).toBe(false)
  })
})
