// [rules, issue 31] App users' requests do not read the project's rules and trust setting from
// the store each time (docs/rules.md, "When a change of rules takes effect"): the node keeps
// them until a PUT or DELETE of …/rules or …/auth, after which the very next request is decided
// by the new ones. A change no message told of (written past the service, as a lost Redis
// message would leave it) still reaches open streams within MAX_AGE_MS and a re-check round.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { MAX_AGE_MS } from '../../server/services/rules-cache.js'
import { APP_AUDIENCE, APP_ISSUER, APP_SECRET, hs256Token } from '../support/app-tokens.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { connect, Recorder } from '../realtime/client.js'

describe('rules kept per project', () => {
  let app: TestApp
  let session: string
  const base = '/api/@rulekept/demo'
  beforeAll(async () => {
    app = await startTestApp({}, { realtime: true })
    session = (await ownerWithProject(app.url, 'rulekept')).session
    expect((await call(app.url, 'PUT', `${base}/auth`, { token: session, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET } })).status).toBe(200)
    expect((await call(app.url, 'PUT', `${base}/rules`, { token: session, body: { rules: { a: { '.read': true, '.write': true } } } })).status).toBe(200)
    expect((await call(app.url, 'POST', `${base}/content`, { token: session, body: { a: 1, b: 2 } })).status).toBe(200)
  })
  afterAll(async () => {
    vi.restoreAllMocks()
    await app.close()
  })

  it('reads them once for many requests, and again right after a change', async () => {
    const getRules = vi.spyOn(app.store.appRules, 'getRules')
    const getAppAuth = vi.spyOn(app.store.appRules, 'getAppAuth')
    const token = await hs256Token({ sub: 'u1' })
    const started = Date.now()
    for (let i = 0; i < 10; i++) {
      expect((await call(app.url, 'GET', `${base}/content?path=a`, { token })).status).toBe(200)
      expect((await call(app.url, 'POST', `${base}/content/increment`, { token, body: { path: 'a' } })).status).toBe(200)
    }
    // Once each (the PUT in beforeAll made the node forget them), and once more per MAX_AGE_MS
    // a slow machine took over the requests.
    const reads = 1 + Math.floor((Date.now() - started) / MAX_AGE_MS)
    expect(getRules.mock.calls.length).toBeLessThanOrEqual(reads)
    expect(getAppAuth.mock.calls.length).toBeLessThanOrEqual(reads)
    expect((await call(app.url, 'GET', `${base}/content?path=b`, { token })).status).toBe(403)

    expect((await call(app.url, 'PUT', `${base}/rules`, { token: session, body: { rules: { b: { '.read': true } } } })).status).toBe(200)
    const before = getRules.mock.calls.length
    const b = await call(app.url, 'GET', `${base}/content?path=b`, { token })
    expect(b.status, b.text).toBe(200)
    const a = await call(app.url, 'GET', `${base}/content?path=a`, { token })
    expect(a.status).toBe(403)
    expect(a.body).toMatchObject({ code: 'RULES_DENIED', path: 'a' })
    expect(getRules.mock.calls.length).toBe(before + 1)

    expect((await call(app.url, 'DELETE', `${base}/auth`, { token: session })).status).toBe(200)
    expect((await call(app.url, 'GET', `${base}/content?path=b`, { token })).status).toBe(401)
  })

  it('re-decides an open path subscription after a change of rules that no message told of', async () => {
    expect((await call(app.url, 'PUT', `${base}/auth`, { token: session, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET } })).status).toBe(200)
    expect((await call(app.url, 'PUT', `${base}/rules`, { token: session, body: { rules: { a: { '.read': true } } } })).status).toBe(200)
    const socket = await connect(app.url, await hs256Token({ sub: 'u1' }))
    const recorder = new Recorder(socket)
    try {
      expect(await socket.timeout(10_000).emitWithAck('subscribe', { project: '@rulekept/demo', path: 'a' })).toMatchObject({ ok: true })
      const project = await app.services.projects.find('@rulekept', 'demo')
      // Straight into the store: no rules-changed event, as when its Redis message is lost.
      await app.store.appRules.putRules(project.id, { revision: 'written-past-the-service', document: { rules: { b: { '.read': true } } }, setBy: '@rulekept', setAt: new Date().toISOString() })
      await recorder.until(() => recorder.revoked.length > 0, 'the subscription re-decided', MAX_AGE_MS + 8000)
      expect(recorder.revoked[0]).toMatchObject({ code: 'RULES_DENIED', path: 'a', project: '@rulekept/demo' })
    } finally {
      socket.close()
    }
  }, 30_000)
})
