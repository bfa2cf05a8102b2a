// OWASP API Security Top 10 (2023), the authorization findings of SECURITY.md as tests:
// API1 object-level authorization (no reaching another user's project, keys or members by
// naming them), API5 function-level authorization (members and keys cannot manage), and
// API2 broken authentication (login does not reveal which usernames exist; revoked
// credentials stop at once).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, createKey, createProject, PASSWORD, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
const tokens: Record<string, string> = {}
let aliceKeyId: string
let aliceWriteKey: string
let aliceReadKey: string
let aliceScopedKey: string
const DEMO = '/api/@alice/demo'

beforeAll(async () => {
  app = await startTestApp()
  for (const name of ['alice', 'mallory', 'vic', 'eve']) tokens[name] = await signup(app.url, name)
  await createProject(app.url, tokens.alice as string, 'demo')
  await createProject(app.url, tokens.alice as string, 'other')
  await createProject(app.url, tokens.mallory as string, 'lair')
  expect((await call(app.url, 'PUT', `${DEMO}/members/vic`, { token: tokens.alice, body: { role: 'viewer' } })).status).toBe(200)
  expect((await call(app.url, 'PUT', `${DEMO}/members/eve`, { token: tokens.alice, body: { role: 'editor' } })).status).toBe(200)
  const write = await createKey(app.url, tokens.alice as string, { name: 'w', permission: 'write' })
  aliceKeyId = write.id
  aliceWriteKey = write.key
  aliceReadKey = (await createKey(app.url, tokens.alice as string, { name: 'r', permission: 'read' })).key
  aliceScopedKey = (await createKey(app.url, tokens.alice as string, { name: 's', permission: 'write', projects: ['@alice/other'] })).key
  expect((await call(app.url, 'POST', `${DEMO}/content/set`, { token: aliceWriteKey, body: { path: 'secret', value: 'alice only' } })).status).toBe(200)
})
afterAll(async () => { await app?.close() })

async function demoContent () {
  const r = await call(app.url, 'GET', `${DEMO}/content`, { token: tokens.alice })
  expect(r.status).toBe(200)
  return r.body
}

describe('API1: object-level authorization', () => {
  const strangerRequests: Array<[string, string, unknown?]> = [
    ['GET', `${DEMO}/content`],
    ['GET', `${DEMO}/content?path=secret`],
    ['POST', `${DEMO}/content`, { taken: true }],
    ['POST', `${DEMO}/content/set`, { path: 'secret', value: 'mallory was here' }],
    ['POST', `${DEMO}/content/delete`, { path: 'secret' }],
    ['GET', DEMO],
    ['DELETE', DEMO],
    ['GET', `${DEMO}/members`],
    ['PUT', `${DEMO}/members/mallory`, { role: 'editor' }],
    ['DELETE', `${DEMO}/members/vic`]
  ]
  it.each(strangerRequests)('a stranger gets 403 FORBIDDEN for %s %s and changes nothing', async (method, path, body) => {
    const before = await demoContent()
    const r = await call(app.url, method, path, { token: tokens.mallory, body })
    expect(r.status).toBe(403)
    expect(r.body.code).toBe('FORBIDDEN')
    expect(r.text).not.toContain('alice only')
    expect(await demoContent()).toEqual(before)
  })

  it('a stranger cannot revoke another user\'s key by id (404, and the key keeps working)', async () => {
    const r = await call(app.url, 'DELETE', `/api/keys/${aliceKeyId}`, { token: tokens.mallory })
    expect(r.status).toBe(404)
    expect(r.body.code).toBe('KEY_NOT_FOUND')
    expect((await call(app.url, 'GET', `${DEMO}/content`, { token: aliceWriteKey })).status).toBe(200)
  })

  it('lists only the caller\'s own keys and projects', async () => {
    const keys = await call(app.url, 'GET', '/api/keys', { token: tokens.mallory })
    expect(keys.body.keys).toEqual([])
    const projects = await call(app.url, 'GET', '/api/projects', { token: tokens.mallory })
    expect(projects.body.projects.map((p: any) => `${p.username}/${p.slug}`)).toEqual(['@mallory/lair'])
  })

  it('a key cannot be scoped to a project its user cannot read', async () => {
    const r = await call(app.url, 'POST', '/api/keys', { token: tokens.mallory, body: { name: 'x', permission: 'read', projects: ['@alice/demo'] } })
    expect(r.status).toBe(403)
  })

  it('a scoped key reaches only its projects, even of its own user', async () => {
    const r = await call(app.url, 'GET', `${DEMO}/content`, { token: aliceScopedKey })
    expect(r.status).toBe(403)
    expect(r.body.code).toBe('KEY_PERMISSION_DENIED')
    expect((await call(app.url, 'GET', '/api/@alice/other/content', { token: aliceScopedKey })).status).toBe(200)
  })
})

describe('API5: function-level authorization', () => {
  it('a viewer reads but cannot write', async () => {
    expect((await call(app.url, 'GET', `${DEMO}/content`, { token: tokens.vic })).status).toBe(200)
    const r = await call(app.url, 'POST', `${DEMO}/content/set`, { token: tokens.vic, body: { path: 'x', value: 1 } })
    expect(r.status).toBe(403)
    expect(r.body.code).toBe('FORBIDDEN')
  })

  it('an editor writes content but cannot manage members or delete the project', async () => {
    expect((await call(app.url, 'POST', `${DEMO}/content/increment`, { token: tokens.eve, body: { path: 'edits' } })).status).toBe(200)
    for (const [method, path, body] of [['PUT', `${DEMO}/members/mallory`, { role: 'editor' }], ['DELETE', `${DEMO}/members/vic`], ['GET', `${DEMO}/members`], ['DELETE', DEMO]] as const) {
      const r = await call(app.url, method, path, { token: tokens.eve, body })
      expect(r.status, `${method} ${path}`).toBe(403)
      expect(r.body.code).toBe('OWNER_REQUIRED')
    }
    expect((await call(app.url, 'GET', DEMO, { token: tokens.alice })).status).toBe(200)
  })

  it('an API key, even the owner\'s write key, cannot manage projects, members or keys', async () => {
    for (const [method, path, body] of [
      ['PUT', `${DEMO}/members/mallory`, { role: 'editor' }], ['DELETE', DEMO], ['POST', '/api/keys', { name: 'k', permission: 'write' }],
      ['GET', '/api/keys'], ['DELETE', `/api/keys/${aliceKeyId}`], ['POST', '/api/projects', { slug: 'new' }], ['POST', '/api/auth/logout']
    ] as const) {
      const r = await call(app.url, method, path, { token: aliceWriteKey, body })
      expect(r.status, `${method} ${path}`).toBe(403)
      expect(r.body.code).toBe('SESSION_REQUIRED')
    }
  })

  it('a read key cannot write', async () => {
    const r = await call(app.url, 'POST', `${DEMO}/content/set`, { token: aliceReadKey, body: { path: 'x', value: 1 } })
    expect(r.status).toBe(403)
    expect(r.body.code).toBe('KEY_PERMISSION_DENIED')
  })
})

describe('API2: authentication', () => {
  it('login answers an unknown username exactly like a wrong password', async () => {
    const unknown = await call(app.url, 'POST', '/api/auth/login', { body: { username: 'nobody-here', password: PASSWORD } })
    const wrong = await call(app.url, 'POST', '/api/auth/login', { body: { username: 'alice', password: 'not the password' } })
    expect(unknown.status).toBe(401)
    expect(wrong.status).toBe(401)
    expect(unknown.body).toEqual(wrong.body)
    expect(unknown.body.code).toBe('WRONG_CREDENTIALS')
  })

  it('a revoked key and a logged-out session stop working at once', async () => {
    const session = await call(app.url, 'POST', '/api/auth/login', { body: { username: 'alice', password: PASSWORD } })
    const token = session.body.token as string
    const { id, key } = await createKey(app.url, token, { name: 'temp', permission: 'read' })
    expect((await call(app.url, 'DELETE', `/api/keys/${id}`, { token })).status).toBe(200)
    expect((await call(app.url, 'GET', `${DEMO}/content`, { token: key })).status).toBe(401)
    expect((await call(app.url, 'POST', '/api/auth/logout', { token })).status).toBe(200)
    const after = await call(app.url, 'GET', '/api/me', { token })
    expect(after.status).toBe(401)
    expect(after.body.code).toBe('INVALID_TOKEN')
  })

  it('never returns secrets when listing keys', async () => {
    const r = await call(app.url, 'GET', '/api/keys', { token: tokens.alice })
    expect(r.status).toBe(200)
    expect(r.text).not.toContain(aliceWriteKey)
    expect(r.text).not.toContain(aliceReadKey)
    expect(r.text).not.toMatch(/hash/i)
  })
})
