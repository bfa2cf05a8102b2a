// The SDK's rules, app sign-in and simulator methods (docs/rules.md) against a real server:
// what they send and answer, the errors they throw, and that the simulator's answer is what an
// app user's own request then gets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, ContentdError, type ContentdClient, type RulesDocument } from '../../shared/client/index.js'
import { APP_AUDIENCE, APP_ISSUER, APP_SECRET, hs256Token } from '../support/app-tokens.js'
import { call, ownerWithProject, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
let session = ''
let key = ''
let path = ''
const clients: ContentdClient[] = []
const client = (token: string | (() => Promise<string>)) => {
  const c = createClient({ baseUrl: app.url, token })
  clients.push(c)
  return c
}

const RULES: RulesDocument = { rules: { users: { $uid: { '.read': 'auth.sub == uid', '.write': 'auth.sub == uid' } }, leaderboard: { '.read': true } } }

beforeAll(async () => {
  app = await startTestApp()
  ;({ session, key, path } = await ownerWithProject(app.url, 'rules-sdk'))
})

afterAll(async () => {
  for (const c of clients) c.close()
  await app.close()
})

describe('the SDK for rules and app sign-in', () => {
  it('sets, reads, checks and removes rules; an invalid document names its rule', async () => {
    const owner = client(session).project('@rules-sdk/demo')
    await expect(owner.getRules()).rejects.toMatchObject({ status: 404, code: 'RULES_NOT_FOUND' })
    // GET of the project tells its owner what exists, so a client need not ask for a 404.
    expect(await owner.info()).toMatchObject({ hasRules: false, hasAppAuth: false })
    expect(await owner.setRules(RULES)).toEqual(RULES)
    expect(await owner.info()).toMatchObject({ hasRules: true, hasAppAuth: false })
    // Only its owner: a member sees neither flag.
    const viewer = await signup(app.url, 'rules-viewer')
    expect((await call(app.url, 'PUT', `${path}/members/rules-viewer`, { token: session, body: { role: 'viewer' } })).status).toBe(200)
    const seen = await client(viewer).project('@rules-sdk/demo').info()
    expect(seen.role).toBe('viewer')
    expect('hasRules' in seen || 'hasAppAuth' in seen).toBe(false)
    expect(await owner.getRules()).toEqual(RULES)
    // The same document over plain HTTP: the SDK stored what it was given.
    expect((await call(app.url, 'GET', `${path}/rules`, { token: session })).body).toEqual(RULES)

    expect(await owner.checkRules({ auth: { sub: 'u1' }, op: 'write', path: 'users.u1.name', value: 'Ann' })).toEqual({ allowed: true, rule: 'users.$uid/.write' })
    const denied = await owner.checkRules({ auth: { sub: 'u2' }, op: 'write', path: 'users.u1.name', value: 'Ann' })
    expect(denied.allowed).toBe(false)
    expect(await owner.checkRules({ auth: null, op: 'read', path: 'leaderboard' })).toEqual({ allowed: true, rule: 'leaderboard/.read' })

    const bad = await owner.setRules({ rules: { users: { $uid: { '.write': 'auth.sub ==' } } } }).catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(ContentdError)
    expect(bad).toMatchObject({ status: 400, code: 'INVALID_RULES', message: expect.stringContaining('users.$uid/.write') })
    expect(await owner.getRules()).toEqual(RULES)

    // Owner only: an API key of the owner's is refused, as for the schema.
    await expect(client(key).project('@rules-sdk/demo').checkRules({ auth: null, op: 'read', path: '' })).rejects.toMatchObject({ status: 403 })

    await owner.deleteRules()
    expect(await owner.info()).toMatchObject({ hasRules: false })
    await expect(owner.getRules()).rejects.toMatchObject({ status: 404, code: 'RULES_NOT_FOUND' })
    await expect(owner.deleteRules()).rejects.toMatchObject({ status: 404, code: 'RULES_NOT_FOUND' })
  })

  it('sets, shows without its secret, and removes the trusted app sign-in; the simulator agrees with an app user\'s request', async () => {
    const owner = client(session).project('@rules-sdk/demo')
    await expect(owner.getAppAuth()).rejects.toMatchObject({ status: 404, code: 'AUTH_CONFIG_NOT_FOUND' })
    await expect(owner.setAppAuth({ issuer: APP_ISSUER, hs256Secret: 'short' })).rejects.toMatchObject({ status: 400, code: 'INVALID_AUTH_CONFIG' })
    const set = await owner.setAppAuth({ issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET })
    expect(set).toEqual({ issuer: APP_ISSUER, audience: APP_AUDIENCE, kind: 'hs256Secret', setBy: '@rules-sdk', setAt: expect.any(String) })
    expect(await owner.getAppAuth()).toEqual(set)
    expect(await owner.info()).toMatchObject({ hasAppAuth: true })
    expect(JSON.stringify(await owner.getAppAuth())).not.toContain(APP_SECRET)

    await owner.setRules(RULES)
    const u1 = client(() => hs256Token({ sub: 'u1' })).project('@rules-sdk/demo')
    for (const [sub, expected] of [['u1', true], ['u2', false]] as const) {
      const decision = await owner.checkRules({ auth: { sub }, op: 'write', path: 'users.u1.name', value: sub })
      expect(decision.allowed).toBe(expected)
      const app = client(() => hs256Token({ sub })).project('@rules-sdk/demo')
      const outcome = await app.set('users.u1.name', sub).then(() => 'allowed', (e: unknown) => (e as ContentdError).code)
      expect(outcome).toBe(expected ? 'allowed' : 'RULES_DENIED')
    }
    expect(await u1.get('users.u1.name')).toBe('u1')

    await owner.deleteAppAuth()
    await expect(owner.getAppAuth()).rejects.toMatchObject({ status: 404, code: 'AUTH_CONFIG_NOT_FOUND' })
    await expect(u1.get('users.u1.name')).rejects.toMatchObject({ status: 401, code: 'INVALID_TOKEN' })
  })
})
