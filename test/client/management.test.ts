// The SDK's management calls against a real server (HTTP + Socket.IO on a temp SQLite store):
// sign-up, login and logout; projects, members and API keys; the connection state. Each call
// is checked by its effect seen through the plain HTTP API, and its failures by status and code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, ContentdError, type ConnectionState, type ContentdClient } from '../../shared/client/index.js'
import { call, PASSWORD } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
const clients: ContentdClient[] = []

const client = (token?: string) => {
  const c = createClient({ baseUrl: app.url, ...(token === undefined ? {} : { token }) })
  clients.push(c)
  return c
}

/** The failure of `promise` as {status, code}; fails the test when it resolves. */
async function failure (promise: Promise<unknown>): Promise<{ status: number, code: string }> {
  const error = await promise.then(() => null, (e: unknown) => e)
  expect(error).toBeInstanceOf(ContentdError)
  const { status, code } = error as ContentdError
  return { status, code }
}

beforeAll(async () => { app = await startTestApp({}, { realtime: true }) })
afterAll(async () => {
  for (const c of clients) c.close()
  await app.close()
})

describe('accounts', () => {
  it('signs up, logs in and logs out', async () => {
    const grant = await client().signup('Carol', PASSWORD)
    expect(grant).toEqual({ token: expect.stringMatching(/^cds_/), username: '@carol', expiresAt: expect.any(String) })
    expect(await client(grant.token).me()).toMatchObject({ username: '@carol' })
    expect(await failure(client().signup('carol', PASSWORD))).toEqual({ status: 409, code: 'USERNAME_TAKEN' })
    expect(await failure(client().signup('carol2', 'short'))).toEqual({ status: 400, code: 'INVALID_BODY' })

    const second = await client().login('@carol', PASSWORD)
    expect(second.username).toBe('@carol')
    expect(second.token).not.toBe(grant.token)
    expect(await failure(client().login('carol', 'not the password'))).toEqual({ status: 401, code: 'WRONG_CREDENTIALS' })

    expect(await client(second.token).logout()).toEqual({ message: expect.any(String) })
    expect(await failure(client(second.token).me())).toEqual({ status: 401, code: 'INVALID_TOKEN' })
    // The other session is untouched.
    expect((await call(app.url, 'GET', '/api/me', { token: grant.token })).status).toBe(200)
  })

  it('reports SIGNUP_DISABLED when the server has sign-up closed', async () => {
    const closed = await startTestApp({ SIGNUP: 'closed' })
    try {
      const c = createClient({ baseUrl: closed.url })
      expect(await failure(c.signup('dave', PASSWORD))).toEqual({ status: 403, code: 'SIGNUP_DISABLED' })
    } finally {
      await closed.close()
    }
  })
})

describe('projects and members', () => {
  it('creates, describes and deletes a project', async () => {
    const owner = client((await client().signup('olga', PASSWORD)).token)
    const created = await owner.createProject({ slug: 'site', name: 'The site' })
    expect(created).toMatchObject({ username: '@olga', slug: 'site', name: 'The site', version: 0 })
    expect(await owner.project('@olga/site').info()).toMatchObject({ username: '@olga', slug: 'site', role: 'owner' })
    expect((await owner.projects()).map(p => [`${p.username}/${p.slug}`, p.role])).toEqual([['@olga/site', 'owner']])
    expect(await failure(owner.createProject({ slug: 'site' }))).toEqual({ status: 409, code: 'PROJECT_EXISTS' })
    expect(await failure(owner.createProject({ slug: 'Not A Slug' }))).toEqual({ status: 400, code: 'INVALID_BODY' })

    expect(await owner.deleteProject('olga/site')).toEqual({ message: expect.any(String) })
    expect((await call(app.url, 'GET', '/api/@olga/site', { token: (await client().login('olga', PASSWORD)).token })).status).toBe(404)
    expect(await failure(owner.deleteProject('@olga/site'))).toEqual({ status: 404, code: 'PROJECT_NOT_FOUND' })
  })

  it('adds a member, changes the role and removes them; only the owner may', async () => {
    const owner = client((await client().signup('omar', PASSWORD)).token)
    const peerToken = (await client().signup('pia', PASSWORD)).token
    const peer = client(peerToken)
    await owner.createProject({ slug: 'shared' })
    const project = owner.project('@omar/shared')

    expect(await project.members()).toEqual([])
    expect(await project.setMember('@pia', 'viewer')).toEqual({ username: '@pia', role: 'viewer' })
    expect(await peer.project('@omar/shared').info()).toMatchObject({ role: 'viewer' })
    expect(await failure(peer.project('@omar/shared').set('x', 1))).toEqual({ status: 403, code: 'FORBIDDEN' })

    expect(await project.setMember('pia', 'editor')).toEqual({ username: '@pia', role: 'editor' })
    expect(await project.members()).toEqual([{ username: '@pia', role: 'editor' }])
    expect((await peer.project('@omar/shared').set('x', 1)).version).toBe(1)
    expect(await failure(peer.project('@omar/shared').members())).toEqual({ status: 403, code: 'OWNER_REQUIRED' })
    expect(await failure(peer.deleteProject('@omar/shared'))).toEqual({ status: 403, code: 'OWNER_REQUIRED' })

    expect(await failure(project.setMember('nobody-here', 'viewer'))).toEqual({ status: 404, code: 'USER_NOT_FOUND' })
    expect(await project.removeMember('@pia')).toEqual({ message: expect.any(String) })
    expect(await project.members()).toEqual([])
    expect(await failure(project.removeMember('pia'))).toEqual({ status: 404, code: 'MEMBER_NOT_FOUND' })
    expect(await failure(peer.project('@omar/shared').get())).toEqual({ status: 403, code: 'FORBIDDEN' })
  })
})

describe('API keys', () => {
  it('creates a scoped, expiring key, lists it without its secret, and revokes it', async () => {
    const session = (await client().signup('kim', PASSWORD)).token
    const owner = client(session)
    await owner.createProject({ slug: 'one' })
    await owner.createProject({ slug: 'two' })
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
    const created = await owner.createKey({ name: 'reader', permission: 'read', projects: ['@kim/one'], expiresAt })
    expect(created).toMatchObject({ key: expect.stringMatching(/^cdk_/), name: 'reader', permission: 'read', projects: ['@kim/one'], expiresAt })
    expect(created.key.startsWith(created.prefix)).toBe(true)

    const listed = await owner.keys()
    expect(listed).toEqual([{ id: created.id, name: 'reader', prefix: created.prefix, permission: 'read', projects: ['@kim/one'], paths: null, ops: null, expiresAt, createdAt: created.createdAt }])

    // The key does what its scope says, and no management.
    const keyed = client(created.key)
    expect(await keyed.project('@kim/one').get()).toEqual({})
    expect(await failure(keyed.project('@kim/two').get())).toEqual({ status: 403, code: 'KEY_PERMISSION_DENIED' })
    expect(await failure(keyed.project('@kim/one').set('a', 1))).toEqual({ status: 403, code: 'KEY_PERMISSION_DENIED' })
    expect(await failure(keyed.keys())).toEqual({ status: 403, code: 'SESSION_REQUIRED' })
    expect(await failure(owner.createKey({ name: 'bad', permission: 'read', projects: ['@kim/none'] }))).toEqual({ status: 404, code: 'PROJECT_NOT_FOUND' })
    // Narrowing (paths, ops) is part of the SDK's key types and reaches the server.
    const narrowed = await owner.createKey({ name: 'counter', permission: 'write', projects: ['@kim/one'], paths: ['votes'], ops: ['increment'] })
    expect([narrowed.paths, narrowed.ops]).toEqual([['votes'], ['increment']])
    expect(await failure(client(narrowed.key).project('@kim/one').set('votes', 1))).toEqual({ status: 403, code: 'KEY_SCOPE_DENIED' })
    expect(await owner.revokeKey(narrowed.id)).toEqual({ message: expect.any(String) })

    expect(await owner.revokeKey(created.id)).toEqual({ message: expect.any(String) })
    expect(await owner.keys()).toEqual([])
    expect(await failure(keyed.project('@kim/one').get())).toEqual({ status: 401, code: 'INVALID_TOKEN' })
    expect(await failure(owner.revokeKey(created.id))).toEqual({ status: 404, code: 'KEY_NOT_FOUND' })
  })
})

describe('connection state', () => {
  it('goes idle → connecting → online, back to connecting on a drop, offline on revocation, idle on close', async () => {
    const session = (await client().signup('sam', PASSWORD)).token
    const owner = client(session)
    await owner.createProject({ slug: 'live' })
    const { id, key } = await owner.createKey({ name: 'live', permission: 'read' })
    const reader = client(key)
    const seen: ConnectionState[] = []
    reader.onConnection(state => seen.push(state))
    expect(reader.connection).toBe('idle')

    const until = async (state: ConnectionState) => {
      for (let i = 0; i < 250 && reader.connection !== state; i++) await new Promise(r => setTimeout(r, 20))
      expect(reader.connection).toBe(state)
    }
    const sub = reader.project('@sam/live').subscribe(() => {})
    await sub.ready
    expect(reader.connection).toBe('online')
    expect(seen).toEqual(['connecting', 'online'])

    // A dropped transport: socket.io reconnects by itself.
    for (const socket of (app.realtime?.io.sockets.sockets.values() ?? [])) socket.conn.close()
    await until('connecting')
    await until('online')
    expect(seen.slice(2)).toEqual(['connecting', 'online'])

    // A revoked key: the server ends the connection for good.
    await owner.revokeKey(id)
    await until('offline')
    reader.close()
    expect(reader.connection).toBe('idle')
    expect(seen.at(-1)).toBe('idle')
  })
})
