// The management API of docs/design.md §6, row by row with its statuses: accounts, projects,
// members, keys, health, and the cross-cutting HTTP behaviour (404 JSON, request ids, CORS,
// security headers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { manualClock } from '../support/clock.js'
import { call, createKey, createProject, PASSWORD, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { expectErrorShape } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

describe('management API', () => {
  let app: TestApp
  let url: string
  const clock = manualClock()
  beforeAll(async () => { app = await startTestApp({}, { clock }); url = app.url })
  afterAll(async () => { await app.close() })

  const expectError = (r: Awaited<ReturnType<typeof call>>, status: number, code: string) => {
    expect(r.status, r.text).toBe(status)
    expectErrorShape(r, code)
  }

  describe('signup and login', () => {
    it('signs up with "@alice": 201 with token, display name and expiry', async () => {
      const r = await call(url, 'POST', '/api/auth/signup', { body: { username: '@alice', password: PASSWORD } })
      expect(r.status).toBe(201)
      expect(r.body).toEqual({ token: expect.stringMatching(/^cds_/), username: '@alice', expiresAt: expect.stringMatching(ISO) })
      expect(Date.parse(r.body.expiresAt)).toBeGreaterThan(Date.now() + 29 * 86_400_000)
    })

    it('signs up without "@" and lower-cases the name', async () => {
      const r = await call(url, 'POST', '/api/auth/signup', { body: { username: 'MixedCase-1', password: PASSWORD } })
      expect(r.status).toBe(201)
      expect(r.body.username).toBe('@mixedcase-1')
    })

    it.each([['alice'], ['@ALICE'], ['Alice']])('409 when %s is taken (case-insensitive)', async (username) => {
      expectError(await call(url, 'POST', '/api/auth/signup', { body: { username, password: PASSWORD } }), 409, 'USERNAME_TAKEN')
    })

    it.each([
      ['an empty username', { username: '', password: PASSWORD }],
      ['a leading "-"', { username: '-bob', password: PASSWORD }],
      ['a trailing "-"', { username: 'bob-', password: PASSWORD }],
      ['an underscore', { username: 'bo_b', password: PASSWORD }],
      ['40 characters', { username: 'a'.repeat(40), password: PASSWORD }],
      ['a missing username', { password: PASSWORD }],
      ['a numeric username', { username: 12345, password: PASSWORD }],
      ['a 7-character password', { username: 'bob', password: '1234567' }],
      ['a 1025-character password', { username: 'bob', password: 'p'.repeat(1025) }],
      ['a missing password', { username: 'bob' }]
    ])('400 for %s', async (_what, body) => {
      expectError(await call(url, 'POST', '/api/auth/signup', { body }), 400, 'INVALID_BODY')
    })

    it.each([
      ['12345678', 'one of the most common passwords'],
      ['password1', 'one of the most common passwords'],
      ['PassWord1', 'one of the most common passwords'],
      ['qwertyuiop', 'one of the most common passwords'],
      ['Common-Pw-User', 'the username']
    ])('400 PASSWORD_TOO_COMMON for %s (NIST SP 800-63B), and no user is made', async (password, why) => {
      const r = await call(url, 'POST', '/api/auth/signup', { body: { username: 'common-pw-user', password } })
      expectError(r, 400, 'PASSWORD_TOO_COMMON')
      expect(r.body.message).toBe(`This password is too easy to guess; choose another one: it is ${why}`)
      expectError(await call(url, 'POST', '/api/auth/login', { body: { username: 'common-pw-user', password } }), 401, 'WRONG_CREDENTIALS')
    })

    it('accepts 39-character names and 1024-character passwords', async () => {
      const r = await call(url, 'POST', '/api/auth/signup', { body: { username: 'b'.repeat(39), password: 'p'.repeat(1024) } })
      expect(r.status).toBe(201)
    })

    it('logs in (200) with the name in any case, with or without "@"', async () => {
      for (const username of ['alice', '@Alice']) {
        const r = await call(url, 'POST', '/api/auth/login', { body: { username, password: PASSWORD } })
        expect(r.status).toBe(200)
        expect(r.body).toEqual({ token: expect.stringMatching(/^cds_/), username: '@alice', expiresAt: expect.stringMatching(ISO) })
        expect((await call(url, 'GET', '/api/me', { token: r.body.token })).status).toBe(200)
      }
    })

    it('401 with the same message for a wrong password and an unknown user', async () => {
      const wrong = await call(url, 'POST', '/api/auth/login', { body: { username: 'alice', password: 'not the password' } })
      const unknown = await call(url, 'POST', '/api/auth/login', { body: { username: 'nobody-here', password: PASSWORD } })
      expectError(wrong, 401, 'WRONG_CREDENTIALS')
      expectError(unknown, 401, 'WRONG_CREDENTIALS')
      expect(unknown.body).toEqual(wrong.body)
    })

    it('logout: 200, then the token is 401 and other sessions keep working', async () => {
      const token = await (await call(url, 'POST', '/api/auth/login', { body: { username: 'alice', password: PASSWORD } })).body.token as string
      const other = await (await call(url, 'POST', '/api/auth/login', { body: { username: 'alice', password: PASSWORD } })).body.token as string
      const r = await call(url, 'POST', '/api/auth/logout', { token })
      expect(r.status).toBe(200)
      expect(typeof r.body.message).toBe('string')
      expectError(await call(url, 'GET', '/api/me', { token }), 401, 'INVALID_TOKEN')
      expect((await call(url, 'GET', '/api/me', { token: other })).status).toBe(200)
    })

    it('logout without a session is 401, and with an API key 403', async () => {
      expectError(await call(url, 'POST', '/api/auth/logout'), 401, 'AUTH_REQUIRED')
      const session = await (await call(url, 'POST', '/api/auth/login', { body: { username: 'alice', password: PASSWORD } })).body.token as string
      const { key } = await createKey(url, session, { name: 'k', permission: 'read' })
      expectError(await call(url, 'POST', '/api/auth/logout', { token: key }), 403, 'SESSION_REQUIRED')
    })

    it('me: with a session and with a key; 401 without', async () => {
      const session = await signup(url, 'meuser')
      const { key } = await createKey(url, session, { name: 'k', permission: 'read' })
      for (const token of [session, key]) {
        const r = await call(url, 'GET', '/api/me', { token })
        expect(r.status).toBe(200)
        expect(r.body).toEqual({ username: '@meuser', createdAt: expect.stringMatching(ISO) })
      }
      expectError(await call(url, 'GET', '/api/me'), 401, 'AUTH_REQUIRED')
    })
  })

  describe('projects', () => {
    let owner: string
    let member: string
    beforeAll(async () => {
      owner = await signup(url, 'powner')
      member = await signup(url, 'pmember')
    })

    it('creates a project: 201 with username, slug, name, createdAt', async () => {
      const r = await call(url, 'POST', '/api/projects', { token: owner, body: { slug: 'site', name: 'My site' } })
      expect(r.status).toBe(201)
      expect(r.body).toMatchObject({ username: '@powner', slug: 'site', name: 'My site', createdAt: expect.stringMatching(ISO) })
      const again = await call(url, 'POST', '/api/projects', { token: owner, body: { slug: 'plain' } })
      expect(again.body.name).toBe('plain')
    })

    it('409 for an existing slug', async () => {
      expectError(await call(url, 'POST', '/api/projects', { token: owner, body: { slug: 'site' } }), 409, 'PROJECT_EXISTS')
    })

    it('the same slug under another user is fine', async () => {
      expect((await call(url, 'POST', '/api/projects', { token: member, body: { slug: 'site' } })).status).toBe(201)
    })

    it.each([['Upper'], ['-lead'], ['_lead'], ['has space'], ['dot.ted'], ['a'.repeat(65)], [''], [7]])('400 for slug %s', async (slug) => {
      expectError(await call(url, 'POST', '/api/projects', { token: owner, body: { slug } }), 400, 'INVALID_BODY')
    })

    it('accepts slugs at the edge of the pattern', async () => {
      for (const slug of ['0', 'a_b-c', 'a'.repeat(64)]) {
        expect((await call(url, 'POST', '/api/projects', { token: owner, body: { slug } })).status).toBe(201)
      }
    })

    it('403 SESSION_REQUIRED with an API key; 401 without auth', async () => {
      const { key } = await createKey(url, owner, { name: 'k', permission: 'write' })
      expectError(await call(url, 'POST', '/api/projects', { token: key, body: { slug: 'by-key' } }), 403, 'SESSION_REQUIRED')
      expectError(await call(url, 'POST', '/api/projects', { body: { slug: 'anon' } }), 401, 'AUTH_REQUIRED')
    })

    it('lists owned and shared projects; a scoped key narrows the list', async () => {
      const lister = await signup(url, 'lister')
      await createProject(url, lister, 'mine')
      await createProject(url, lister, 'mine2')
      expect((await call(url, 'PUT', '/api/@powner/site/members/lister', { token: owner, body: { role: 'viewer' } })).status).toBe(200)
      const all = await call(url, 'GET', '/api/projects', { token: lister })
      expect(all.status).toBe(200)
      const refs = (all.body.projects as Array<{ username: string, slug: string, role: string }>).map(p => `${p.username}/${p.slug}:${p.role}`).sort()
      expect(refs).toEqual(['@lister/mine2:owner', '@lister/mine:owner', '@powner/site:viewer'])
      const { key } = await createKey(url, lister, { name: 'scoped', permission: 'read', projects: ['@lister/mine'] })
      const scoped = await call(url, 'GET', '/api/projects', { token: key })
      expect((scoped.body.projects as Array<{ slug: string }>).map(p => p.slug)).toEqual(['mine'])
      const { key: unscoped } = await createKey(url, lister, { name: 'all', permission: 'read' })
      expect((await call(url, 'GET', '/api/projects', { token: unscoped })).body.projects).toHaveLength(3)
    })

    it('delete: editor 403, key 403, owner 200 then 404', async () => {
      await createProject(url, owner, 'doomed')
      expect((await call(url, 'PUT', '/api/@powner/doomed/members/pmember', { token: owner, body: { role: 'editor' } })).status).toBe(200)
      expectError(await call(url, 'DELETE', '/api/@powner/doomed', { token: member }), 403, 'OWNER_REQUIRED')
      const { key } = await createKey(url, owner, { name: 'k', permission: 'write' })
      expectError(await call(url, 'DELETE', '/api/@powner/doomed', { token: key }), 403, 'SESSION_REQUIRED')
      const stranger = await signup(url, 'dstranger')
      expectError(await call(url, 'DELETE', '/api/@powner/doomed', { token: stranger }), 403, 'FORBIDDEN')
      const r = await call(url, 'DELETE', '/api/@powner/doomed', { token: owner })
      expect(r.status).toBe(200)
      expect(typeof r.body.message).toBe('string')
      expectError(await call(url, 'DELETE', '/api/@powner/doomed', { token: owner }), 404, 'PROJECT_NOT_FOUND')
      expectError(await call(url, 'GET', '/api/@powner/doomed/content', { token: owner }), 404, 'PROJECT_NOT_FOUND')
      expectError(await call(url, 'POST', '/api/@powner/doomed/content/set', { token: member, body: { path: 'a', value: 1 } }), 404, 'PROJECT_NOT_FOUND')
    })
  })

  describe('members', () => {
    let owner: string
    let viewer: string
    let editor: string
    const project = '/api/@mowner/shared'
    beforeAll(async () => {
      owner = await signup(url, 'mowner')
      viewer = await signup(url, 'mviewer')
      editor = await signup(url, 'meditor')
      await createProject(url, owner, 'shared')
    })

    it('PUT adds members with a role (200), with or without "@"', async () => {
      const a = await call(url, 'PUT', `${project}/members/mviewer`, { token: owner, body: { role: 'viewer' } })
      expect(a.status).toBe(200)
      expect(a.body).toEqual({ username: '@mviewer', role: 'viewer' })
      expect((await call(url, 'PUT', `${project}/members/@MEditor`, { token: owner, body: { role: 'editor' } })).body).toEqual({ username: '@meditor', role: 'editor' })
    })

    it('a viewer reads but cannot write (403); an editor writes', async () => {
      expect((await call(url, 'GET', `${project}/content`, { token: viewer })).status).toBe(200)
      expectError(await call(url, 'POST', `${project}/content/set`, { token: viewer, body: { path: 'a', value: 1 } }), 403, 'FORBIDDEN')
      expect((await call(url, 'POST', `${project}/content/set`, { token: editor, body: { path: 'a', value: 1 } })).status).toBe(200)
      expect((await call(url, 'GET', `${project}/content`, { token: viewer })).body).toEqual({ a: 1 })
    })

    it('a role change applies on the next request', async () => {
      expect((await call(url, 'PUT', `${project}/members/mviewer`, { token: owner, body: { role: 'editor' } })).status).toBe(200)
      expect((await call(url, 'POST', `${project}/content/set`, { token: viewer, body: { path: 'b', value: 2 } })).status).toBe(200)
      expect((await call(url, 'PUT', `${project}/members/mviewer`, { token: owner, body: { role: 'viewer' } })).status).toBe(200)
      expectError(await call(url, 'POST', `${project}/content/set`, { token: viewer, body: { path: 'b', value: 3 } }), 403, 'FORBIDDEN')
    })

    it('non-owners cannot manage members (403)', async () => {
      expectError(await call(url, 'PUT', `${project}/members/mviewer`, { token: editor, body: { role: 'editor' } }), 403, 'OWNER_REQUIRED')
      expectError(await call(url, 'DELETE', `${project}/members/mviewer`, { token: editor }), 403, 'OWNER_REQUIRED')
      const stranger = await signup(url, 'mstranger')
      expectError(await call(url, 'PUT', `${project}/members/mstranger`, { token: stranger, body: { role: 'editor' } }), 403, 'FORBIDDEN')
      const { key } = await createKey(url, owner, { name: 'k', permission: 'write' })
      expectError(await call(url, 'PUT', `${project}/members/mstranger`, { token: key, body: { role: 'editor' } }), 403, 'SESSION_REQUIRED')
    })

    it('400 for a bad role; 404 for an unknown user or a non-member', async () => {
      expectError(await call(url, 'PUT', `${project}/members/mviewer`, { token: owner, body: { role: 'owner' } }), 400, 'INVALID_BODY')
      expectError(await call(url, 'PUT', `${project}/members/ghost`, { token: owner, body: { role: 'viewer' } }), 404, 'USER_NOT_FOUND')
      expectError(await call(url, 'DELETE', `${project}/members/ghost`, { token: owner }), 404, 'USER_NOT_FOUND')
      await signup(url, 'outsider')
      expectError(await call(url, 'DELETE', `${project}/members/outsider`, { token: owner }), 404, 'MEMBER_NOT_FOUND')
    })

    it('a removed member (and their keys) lose access at once', async () => {
      const { key } = await createKey(url, editor, { name: 'editor key', permission: 'write', projects: ['@mowner/shared'] })
      expect((await call(url, 'POST', `${project}/content/increment`, { token: key, body: { path: 'n' } })).status).toBe(200)
      const r = await call(url, 'DELETE', `${project}/members/meditor`, { token: owner })
      expect(r.status).toBe(200)
      expectError(await call(url, 'POST', `${project}/content/increment`, { token: editor, body: { path: 'n' } }), 403, 'FORBIDDEN')
      expectError(await call(url, 'POST', `${project}/content/increment`, { token: key, body: { path: 'n' } }), 403, 'FORBIDDEN')
      expectError(await call(url, 'GET', `${project}/content`, { token: editor }), 403, 'FORBIDDEN')
      expect((await call(url, 'GET', `${project}/content?path=n`, { token: owner })).body).toBe(1)
    })
  })

  describe('API keys', () => {
    let user: string
    beforeAll(async () => {
      user = await signup(url, 'kuser')
      await createProject(url, user, 'p1')
    })

    it('creates a key: 201 with the secret shown once and the fields of §6', async () => {
      const r = await call(url, 'POST', '/api/keys', { token: user, body: { name: 'ci', permission: 'write', projects: ['@kuser/p1'] } })
      expect(r.status).toBe(201)
      expect(r.body).toMatchObject({ id: expect.any(String), key: expect.stringMatching(/^cdk_/), name: 'ci', permission: 'write', projects: ['@kuser/p1'], expiresAt: null, createdAt: expect.stringMatching(ISO) })
      expect((await call(url, 'POST', '/api/kuser/p1/content/set', { token: r.body.key, body: {} })).status).toBe(400)
      expect((await call(url, 'POST', '/api/@kuser/p1/content/set', { token: r.body.key, body: { path: 'a', value: 1 } })).status).toBe(200)
    })

    it('lists keys without secrets or hashes', async () => {
      const { key } = await createKey(url, user, { name: 'listed', permission: 'read' })
      const r = await call(url, 'GET', '/api/keys', { token: user })
      expect(r.status).toBe(200)
      const listed = (r.body.keys as Array<Record<string, unknown>>).find(k => k.name === 'listed')
      expect(listed).toMatchObject({ id: expect.any(String), name: 'listed', permission: 'read', projects: null, expiresAt: null })
      expect(r.text).not.toContain(key)
      expect(r.text).not.toContain(key.slice(12))
      for (const k of r.body.keys as Array<Record<string, unknown>>) {
        expect(Object.keys(k)).not.toContain('key')
        expect(Object.keys(k)).not.toContain('keyHash')
        expect(Object.keys(k)).not.toContain('hash')
      }
      expect(r.text).not.toMatch(/[0-9a-f]{64}/)
    })

    it('keys are managed with a session only (403 with a key)', async () => {
      const { key } = await createKey(url, user, { name: 'k', permission: 'write' })
      expectError(await call(url, 'POST', '/api/keys', { token: key, body: { name: 'x', permission: 'read' } }), 403, 'SESSION_REQUIRED')
      expectError(await call(url, 'GET', '/api/keys', { token: key }), 403, 'SESSION_REQUIRED')
    })

    it.each([
      ['a bad permission', { name: 'x', permission: 'admin' }],
      ['a missing name', { permission: 'read' }],
      ['a malformed project reference', { name: 'x', permission: 'read', projects: ['p1'] }],
      ['a malformed expiresAt', { name: 'x', permission: 'read', expiresAt: 'tomorrow' }],
      ['an expiresAt in the past', { name: 'x', permission: 'read', expiresAt: '2001-01-01T00:00:00Z' }]
    ])('400 for %s', async (_what, body) => {
      expectError(await call(url, 'POST', '/api/keys', { token: user, body }), 400, 'INVALID_BODY')
    })

    it('403 when scoping a key to a project the user cannot access; 404 when it does not exist', async () => {
      const other = await signup(url, 'kother')
      await createProject(url, other, 'secret')
      expectError(await call(url, 'POST', '/api/keys', { token: user, body: { name: 'x', permission: 'read', projects: ['@kother/secret'] } }), 403, 'FORBIDDEN')
      expectError(await call(url, 'POST', '/api/keys', { token: user, body: { name: 'x', permission: 'read', projects: ['@kother/none'] } }), 404, 'PROJECT_NOT_FOUND')
    })

    it('revoke: 200, and the key stops working on the next request', async () => {
      const { id, key } = await createKey(url, user, { name: 'to revoke', permission: 'write' })
      expect((await call(url, 'GET', '/api/me', { token: key })).status).toBe(200)
      expect((await call(url, 'DELETE', `/api/keys/${id}`, { token: user })).status).toBe(200)
      expectError(await call(url, 'GET', '/api/me', { token: key }), 401, 'INVALID_TOKEN')
      expectError(await call(url, 'POST', '/api/@kuser/p1/content/set', { token: key, body: { path: 'a', value: 2 } }), 401, 'INVALID_TOKEN')
      expectError(await call(url, 'DELETE', `/api/keys/${id}`, { token: user }), 404, 'KEY_NOT_FOUND')
      const listed = (await call(url, 'GET', '/api/keys', { token: user })).body.keys as Array<{ id: string }>
      expect(listed.map(k => k.id)).not.toContain(id)
    })

    it('404 when revoking another user\'s key, which keeps working', async () => {
      const other = await signup(url, 'kthief')
      const { id, key } = await createKey(url, user, { name: 'mine', permission: 'read' })
      expectError(await call(url, 'DELETE', `/api/keys/${id}`, { token: other }), 404, 'KEY_NOT_FOUND')
      expect((await call(url, 'GET', '/api/me', { token: key })).status).toBe(200)
    })

    it('an expired key is 401: valid until its expiresAt, refused from that moment on', async () => {
      const lifetime = 60_000
      const { key } = await createKey(url, user, { name: 'brief', permission: 'read', expiresAt: new Date(clock.now() + lifetime).toISOString() })
      expect((await call(url, 'GET', '/api/me', { token: key })).status).toBe(200)
      clock.advance(lifetime - 1)
      expect((await call(url, 'GET', '/api/me', { token: key })).status).toBe(200)
      clock.advance(1)
      expectError(await call(url, 'GET', '/api/me', { token: key }), 401, 'INVALID_TOKEN')
      expectError(await call(url, 'GET', '/api/@kuser/p1/content', { token: key }), 401, 'INVALID_TOKEN')
    })
  })

  // docs/design.md §13: every JSON body of the management API refuses members it does not know,
  // naming them; a known path with a method it does not serve is 405 with Allow, before
  // authentication (no credential needed to learn what the public reference says).
  describe('unknown members and wrong methods', () => {
    let owner: string
    beforeAll(async () => {
      owner = await signup(url, 'strict-owner')
      await createProject(url, owner, 'strict')
      expect((await call(url, 'POST', '/api/auth/signup', { body: { username: 'strict-member', password: PASSWORD } })).status).toBe(201)
    })

    const UNKNOWN_MEMBER: Array<[string, 'POST' | 'PUT', string, Record<string, unknown>, string]> = [
      ['signup', 'POST', '/api/auth/signup', { username: 'newcomer', password: PASSWORD, email: 'a@b.c' }, '"email"'],
      ['login', 'POST', '/api/auth/login', { username: 'strict-owner', password: PASSWORD, remember: true }, '"remember"'],
      ['a new project', 'POST', '/api/projects', { slug: 'another', title: 'x' }, '"title"'],
      ['a member role', 'PUT', '/api/@strict-owner/strict/members/strict-member', { role: 'viewer', expires: 1 }, '"expires"'],
      ['a new API key', 'POST', '/api/keys', { name: 'k', permission: 'read', scope: 'all', rules: [] }, '"scope", "rules"']
    ]
    it.each(UNKNOWN_MEMBER)('%s: 400 INVALID_BODY naming the unknown member, and nothing is created', async (_what, method, path, body, named) => {
      const token = path.startsWith('/api/auth/') ? undefined : owner
      const r = await call(url, method, path, { ...(token ? { token } : {}), body })
      expectError(r, 400, 'INVALID_BODY')
      expect(r.body.message).toBe(`The request body is not valid: unknown field${named.includes(',') ? 's' : ''} ${named}`)
    })

    it('nothing was created by the refused bodies', async () => {
      expectError(await call(url, 'POST', '/api/auth/login', { body: { username: 'newcomer', password: PASSWORD } }), 401, 'WRONG_CREDENTIALS')
      const projects = (await call(url, 'GET', '/api/projects', { token: owner })).body.projects as Array<{ slug: string }>
      expect(projects.map(p => p.slug)).toEqual(['strict'])
      expect((await call(url, 'GET', '/api/@strict-owner/strict/members', { token: owner })).body.members).toEqual([])
      expect((await call(url, 'GET', '/api/keys', { token: owner })).body.keys).toEqual([])
    })

    const WRONG_METHOD: Array<[string, string, string]> = [
      ['GET', '/api/auth/signup', 'POST'],
      ['GET', '/api/auth/login', 'POST'],
      ['DELETE', '/api/auth/logout', 'POST'],
      ['POST', '/api/me', 'GET, HEAD'],
      ['DELETE', '/api/projects', 'GET, HEAD, POST'],
      ['PUT', '/api/keys', 'GET, HEAD, POST'],
      ['GET', '/api/keys/key_123', 'DELETE'],
      ['POST', '/api/@strict-owner/strict', 'DELETE, GET, HEAD'],
      ['POST', '/api/@strict-owner/strict/members/strict-member', 'DELETE, PUT'],
      ['DELETE', '/healthz', 'GET, HEAD'],
      ['POST', '/openapi.json', 'GET, HEAD']
    ]
    it.each(WRONG_METHOD)('%s %s: 405 METHOD_NOT_ALLOWED, Allow: %s, with or without a credential', async (method, path, allow) => {
      for (const token of [undefined, 'cdk_notAKey', owner]) {
        const r = await call(url, method, path, token ? { token } : {})
        expectError(r, 405, 'METHOD_NOT_ALLOWED')
        expect(r.headers.get('allow')).toBe(allow)
        expect(r.headers.get('www-authenticate')).toBeNull()
      }
    })

    it('HEAD follows GET (200 without a body); on a path without GET it is 405', async () => {
      const head = await fetch(`${url}/healthz`, { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(await head.text()).toBe('')
      const notAllowed = await fetch(`${url}/api/auth/signup`, { method: 'HEAD' })
      expect(notAllowed.status).toBe(405)
      expect(notAllowed.headers.get('allow')).toBe('POST')
    })

    it('CORS preflights still answer on known and unknown paths, with the allowed methods', async () => {
      for (const path of ['/api/auth/signup', '/api/@strict-owner/strict/content/increment', '/api/not/a/known/path/at/all']) {
        const preflight = await call(url, 'OPTIONS', path, { headers: { origin: 'https://example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } })
        expect(preflight.status, path).toBe(204)
        expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
        expect(preflight.headers.get('access-control-allow-methods')).toMatch(/POST/)
      }
    })
  })

  describe('HTTP behaviour', () => {
    it('GET /healthz is 200 without auth', async () => {
      const r = await call(url, 'GET', '/healthz')
      expect(r.status).toBe(200)
    })

    it('unknown routes are 404 JSON (inside and outside /api)', async () => {
      for (const path of ['/api/nothing-here', '/nope/at/all/x/y', '/api/auth/signup/extra']) {
        expectError(await call(url, 'GET', path), 404, 'NOT_FOUND')
      }
    })

    it('echoes a given X-Request-Id and generates one otherwise', async () => {
      const given = await call(url, 'GET', '/healthz', { headers: { 'x-request-id': 'trace-42.a:b' } })
      expect(given.headers.get('x-request-id')).toBe('trace-42.a:b')
      const generated = await call(url, 'GET', '/api/me')
      const id = generated.headers.get('x-request-id')
      expect(id).toMatch(/^[A-Za-z0-9._:-]{8,}$/)
      expect((await call(url, 'GET', '/healthz')).headers.get('x-request-id')).not.toBe(id)
      const insane = await call(url, 'GET', '/healthz', { headers: { 'x-request-id': 'a b<script>' } })
      expect(insane.headers.get('x-request-id')).not.toBe('a b<script>')
    })

    it('sends helmet security headers', async () => {
      const r = await call(url, 'GET', '/healthz')
      expect(r.headers.get('x-content-type-options')).toBe('nosniff')
      expect(r.headers.get('x-frame-options')).toBeTruthy()
      expect(r.headers.get('x-powered-by')).toBeNull()
    })

    it('CORS_ORIGINS=* allows any origin and exposes ETag', async () => {
      const r = await call(url, 'GET', '/healthz', { headers: { origin: 'https://example.com' } })
      expect(r.headers.get('access-control-allow-origin')).toBe('*')
      expect(r.headers.get('access-control-expose-headers')).toMatch(/ETag/i)
      const preflight = await call(url, 'OPTIONS', '/api/@a/b/content/set', { headers: { origin: 'https://example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } })
      expect(preflight.status).toBeLessThan(300)
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
    })
  })
})

// docs/design.md §13b "Bodies" and "Routing is strict": an empty body on an endpoint that
// takes JSON is 400 INVALID_JSON (never read as {}), a trailing slash is another path (404),
// and neither changes anything; endpoints that take no body still need none.
describe('management API: empty bodies and trailing slashes', () => {
  let app: TestApp
  let owner: string
  const project = '/api/@eowner/site'
  beforeAll(async () => {
    app = await startTestApp()
    owner = await signup(app.url, 'eowner')
    await signup(app.url, 'emember')
    await createProject(app.url, owner, 'site')
  })
  afterAll(async () => { await app.close() })

  /** What each endpoint could change, read back with the owner's session. */
  const state = async () => {
    const read = async (path: string) => { const r = await call(app.url, 'GET', path, { token: owner }); return [r.status, r.body] }
    return [await read('/api/projects'), await read('/api/keys'), await read(`${project}/members`), await read(`${project}/webhooks`), await read(`${project}/schema`)]
  }

  const BODY_ENDPOINTS: Array<[string, string, boolean]> = [
    ['POST', '/api/auth/signup', false],
    ['POST', '/api/auth/login', false],
    ['POST', '/api/projects', true],
    ['POST', '/api/keys', true],
    ['PUT', `${project}/members/emember`, true],
    ['POST', `${project}/webhooks`, true],
    ['PUT', `${project}/schema`, true]
  ]

  it.each(BODY_ENDPOINTS)('%s %s with Content-Length: 0 is 400 INVALID_JSON and changes nothing', async (method, path, signedIn) => {
    const before = await state()
    for (const headers of [{}, { 'content-type': 'application/json' }] as Array<Record<string, string>>) {
      const r = await call(app.url, method, path, { ...(signedIn ? { token: owner } : {}), raw: '', headers })
      expect(r.status, r.text).toBe(400)
      expectErrorShape(r, 'INVALID_JSON')
    }
    expect(await state()).toEqual(before)
  })

  it.each([
    ['POST', '/api/projects/', { slug: 'slashed' }],
    ['POST', '/api/keys/', { name: 'slashed', permission: 'read' }],
    ['PUT', `${project}/members/emember/`, { role: 'editor' }],
    ['PUT', `${project}/schema/`, { type: 'object' }],
    ['GET', '/api/projects/', undefined],
    ['GET', `${project}/`, undefined]
  ])('%s %s (a trailing slash) is 404 NOT_FOUND and changes nothing', async (method, path, body) => {
    const before = await state()
    const r = await call(app.url, method, path, { token: owner, ...(body !== undefined ? { body } : {}) })
    expect(r.status, r.text).toBe(404)
    expectErrorShape(r, 'NOT_FOUND')
    expect(await state()).toEqual(before)
  })

  it('endpoints that take no body still answer without one', async () => {
    const session = await signup(app.url, 'ebodiless')
    await createProject(app.url, session, 'gone')
    const { id } = await createKey(app.url, session, { name: 'k', permission: 'read' })
    expect((await call(app.url, 'DELETE', `/api/keys/${id}`, { token: session })).status).toBe(200)
    expect((await call(app.url, 'DELETE', '/api/@ebodiless/gone', { token: session })).status).toBe(200)
    expect((await call(app.url, 'POST', '/api/auth/logout', { token: session })).status).toBe(200)
    expect((await call(app.url, 'GET', '/api/me', { token: session })).status).toBe(401)
  })
})

describe('management API with SIGNUP=closed', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp({ SIGNUP: 'closed' }) })
  afterAll(async () => { await app.close() })

  it('signup is 403 SIGNUP_DISABLED, even with a valid body', async () => {
    const r = await call(app.url, 'POST', '/api/auth/signup', { body: { username: 'alice', password: PASSWORD } })
    expect(r.status).toBe(403)
    expectErrorShape(r, 'SIGNUP_DISABLED')
    expect(await app.store.findUserByName('alice')).toBeNull()
  })
})

describe('management API with an explicit CORS_ORIGINS list', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp({ CORS_ORIGINS: 'https://a.example, https://b.example' }) })
  afterAll(async () => { await app.close() })

  it('allows the listed origins and no others', async () => {
    for (const origin of ['https://a.example', 'https://b.example']) {
      const r = await call(app.url, 'GET', '/healthz', { headers: { origin } })
      expect(r.headers.get('access-control-allow-origin')).toBe(origin)
    }
    const denied = await call(app.url, 'GET', '/healthz', { headers: { origin: 'https://evil.example' } })
    expect(denied.headers.get('access-control-allow-origin')).toBeNull()
  })
})

// docs/design.md §13: MAX_KEYS_PER_USER and MAX_PROJECTS_PER_USER, one row per request made by
// a fresh user who already has `before` of the thing; the row says what the next create answers
// and how many the user has afterwards (a refusal adds nothing).
describe('management API with quotas (MAX_KEYS_PER_USER=2, MAX_PROJECTS_PER_USER=2)', () => {
  let app: TestApp
  let users = 0
  beforeAll(async () => { app = await startTestApp({ MAX_KEYS_PER_USER: '2', MAX_PROJECTS_PER_USER: '2' }) })
  afterAll(async () => { await app.close() })

  interface QuotaRow {
    name: string
    list: 'keys' | 'projects'
    before: number
    /** Projects the user is a member of (someone else's): they never count. */
    memberships?: number
    /** The request body; `username` is the fresh user's, `${username}-other` owns the memberships. */
    body: Record<string, unknown> | ((username: string) => Record<string, unknown>)
    /** Revoke or delete the first one before the request. */
    freeOne?: boolean
    withKey?: boolean
    status: number
    code?: string
    after: number
  }

  const rows: QuotaRow[] = [
    { name: 'the first project', list: 'projects', before: 0, body: { slug: 'new' }, status: 201, after: 1 },
    { name: 'the project that reaches the quota', list: 'projects', before: 1, body: { slug: 'new' }, status: 201, after: 2 },
    { name: 'a project past the quota', list: 'projects', before: 2, body: { slug: 'new' }, status: 403, code: 'QUOTA_EXCEEDED', after: 2 },
    { name: 'a project past the quota whose slug exists (the quota is checked first)', list: 'projects', before: 2, body: { slug: 'p0' }, status: 403, code: 'QUOTA_EXCEEDED', after: 2 },
    { name: 'a project at the quota with a bad slug (the body is checked first)', list: 'projects', before: 2, body: { slug: 'Bad Slug' }, status: 400, code: 'INVALID_BODY', after: 2 },
    { name: 'a project at the quota with an API key (a session is checked first)', list: 'projects', before: 2, body: { slug: 'new' }, withKey: true, status: 403, code: 'SESSION_REQUIRED', after: 2 },
    { name: 'a project by a member of 2 other projects (memberships do not count)', list: 'projects', before: 1, memberships: 2, body: { slug: 'new' }, status: 201, after: 4 },
    { name: 'a project after deleting one at the quota', list: 'projects', before: 2, freeOne: true, body: { slug: 'new' }, status: 201, after: 2 },
    { name: 'the first key', list: 'keys', before: 0, body: { name: 'new', permission: 'read' }, status: 201, after: 1 },
    { name: 'the key that reaches the quota', list: 'keys', before: 1, body: { name: 'new', permission: 'write' }, status: 201, after: 2 },
    { name: 'a key past the quota', list: 'keys', before: 2, body: { name: 'new', permission: 'read' }, status: 403, code: 'QUOTA_EXCEEDED', after: 2 },
    { name: 'a scoped key past the quota', list: 'keys', before: 2, memberships: 1, body: username => ({ name: 'new', permission: 'read', projects: [`@${username}-other/m0`] }), status: 403, code: 'QUOTA_EXCEEDED', after: 2 },
    { name: 'a key at the quota with a bad permission (the body is checked first)', list: 'keys', before: 2, body: { name: 'new', permission: 'admin' }, status: 400, code: 'INVALID_BODY', after: 2 },
    { name: 'a key at the quota with an API key (a session is checked first)', list: 'keys', before: 1, withKey: true, body: { name: 'new', permission: 'read' }, status: 403, code: 'SESSION_REQUIRED', after: 2 },
    { name: 'a key after revoking one at the quota', list: 'keys', before: 2, freeOne: true, body: { name: 'new', permission: 'read' }, status: 201, after: 2 }
  ]

  it.each(rows.map(row => [row.name, row] as const))('%s', async (_name, row) => {
    const url = app.url
    const username = `quota-${++users}`
    const session = await signup(url, username)
    const other = await signup(url, `${username}-other`)
    for (let i = 0; i < (row.memberships ?? 0); i++) {
      await createProject(url, other, `m${i}`)
      expect((await call(url, 'PUT', `/api/@${username}-other/m${i}/members/${username}`, { token: other, body: { role: 'editor' } })).status).toBe(200)
    }
    const made: string[] = []
    for (let i = 0; i < row.before; i++) {
      if (row.list === 'projects') {
        await createProject(url, session, `p${i}`)
        made.push(`/api/@${username}/p${i}`)
      } else {
        made.push(`/api/keys/${(await createKey(url, session, { name: `k${i}`, permission: 'read' })).id}`)
      }
    }
    if (row.freeOne === true) expect((await call(url, 'DELETE', made[0] as string, { token: session })).status).toBe(200)
    // The calling key counts towards MAX_KEYS_PER_USER: the keys rows count it in `before`.
    const token = row.withKey === true ? (await createKey(url, session, { name: 'caller', permission: 'write' })).key : session
    const body = typeof row.body === 'function' ? row.body(username) : row.body

    const r = await call(url, 'POST', `/api/${row.list}`, { token, body })
    expect(r.status, r.text).toBe(row.status)
    if (row.code !== undefined) expectErrorShape(r, row.code)
    if (row.code === 'QUOTA_EXCEEDED') expect(r.body.message).toBe(`This account has reached its limit: a user may have at most 2 ${row.list === 'keys' ? 'API keys' : 'projects'}`)
    const listed = await call(url, 'GET', `/api/${row.list}`, { token: session })
    expect(listed.status).toBe(200)
    expect(listed.body[row.list]).toHaveLength(row.after)
    expect(listed.body.nextCursor).toBeNull()
  })
})
