// App users on Socket.IO (docs/design.md §17) with a real socket.io-client: a JWT is accepted
// at connect and verified at each subscribe against the project it names; a whole-project
// subscription needs .read at the root; refusals are acks, never a crash; presence (after a
// subscription, so with the root's .read) shows the app user as {type: "app", name: sub}.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { APP_AUDIENCE, APP_ISSUER, APP_SECRET, hs256Token, tampered } from '../support/app-tokens.js'
import { call, createProject, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { connect, Recorder, subscribe } from './client.js'

describe('app users on Socket.IO', () => {
  let app: TestApp
  let owner: string
  beforeAll(async () => {
    app = await startTestApp({}, { realtime: true })
    owner = await signup(app.url, 'alice')
    await createProject(app.url, owner, 'demo')
    await createProject(app.url, owner, 'closed')
    for (const slug of ['demo', 'closed']) {
      expect((await call(app.url, 'PUT', `/api/@alice/${slug}/auth`, { token: owner, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET } })).status).toBe(200)
    }
    expect((await call(app.url, 'PUT', '/api/@alice/demo/rules', { token: owner, body: { rules: { '.read': 'auth.role == "viewer"', users: { $uid: { '.write': 'auth.sub == uid' } } } } })).status).toBe(200)
    expect((await call(app.url, 'POST', '/api/@alice/demo/content', { token: owner, body: { users: { u1: { n: 1 } } } })).status).toBe(200)
  })
  afterAll(async () => { await app.close() })

  it('subscribes an app user allowed the root, and delivers an app user\'s change with its actor', async () => {
    const token = await hs256Token({ sub: 'u1', role: 'viewer' })
    const socket = await connect(app.url, token)
    try {
      const recorder = new Recorder(socket)
      const ack = await subscribe(socket, '@alice/demo')
      expect(ack).toMatchObject({ ok: true, content: { users: { u1: { n: 1 } } } })
      const write = await call(app.url, 'POST', '/api/@alice/demo/content/increment', { token, body: { path: 'users.u1.n' } })
      expect(write.status).toBe(200)
      const version = Number(JSON.parse(write.headers.get('etag') ?? '0'))
      await recorder.untilVersion(version)
      expect(recorder.changes.at(-1)).toMatchObject({ op: 'increment', path: 'users.u1.n', actor: { type: 'app', sub: 'u1' } })
    } finally {
      socket.close()
    }
  })

  it('refuses a subscription without .read at the root: RULES_DENIED, and without rules at all', async () => {
    const socket = await connect(app.url, await hs256Token({ sub: 'u1' }))
    try {
      expect(await subscribe(socket, '@alice/demo')).toMatchObject({ ok: false, code: 'RULES_DENIED' })
      expect(await subscribe(socket, '@alice/closed')).toMatchObject({ ok: false, code: 'RULES_DENIED' })
    } finally {
      socket.close()
    }
  })

  it('accepts a bad token at connect and refuses it at subscribe: INVALID_TOKEN', async () => {
    const socket = await connect(app.url, tampered(await hs256Token({ sub: 'u1', role: 'viewer' })))
    try {
      expect(await subscribe(socket, '@alice/demo')).toMatchObject({ ok: false, code: 'INVALID_TOKEN' })
    } finally {
      socket.close()
    }
  })

  it('takes an app user on live paths and live queries with .read at the path, and refuses them without: RULES_DENIED naming it, no value leaves', async () => {
    // The root's .read is the viewer's: a user without the role may watch nothing (the full table is rules-transports.test.ts).
    const viewer = await connect(app.url, await hs256Token({ sub: 'u1', role: 'viewer' }))
    const other = await connect(app.url, await hs256Token({ sub: 'u1' }))
    try {
      expect(await viewer.timeout(10_000).emitWithAck('subscribe', { project: '@alice/demo', path: 'users' })).toMatchObject({ ok: true, path: 'users', exists: true, value: { u1: { n: expect.any(Number) } } })
      expect(await viewer.timeout(10_000).emitWithAck('subscribe', { project: '@alice/demo', path: 'users', query: { orderBy: 'key', limit: 5 } })).toMatchObject({ ok: true, items: [{ key: 'u1', value: { n: expect.any(Number) } }] })
      const refused = { ok: false, code: 'RULES_DENIED', path: 'users' }
      expect(await other.timeout(10_000).emitWithAck('subscribe', { project: '@alice/demo', path: 'users' })).toMatchObject(refused)
      expect(await other.timeout(10_000).emitWithAck('subscribe', { project: '@alice/demo', path: 'users', query: { orderBy: 'key', limit: 5 } })).toMatchObject(refused)
      expect(await other.timeout(10_000).emitWithAck('subscribe', { project: '@alice/closed', path: 'users' })).toMatchObject(refused)
    } finally {
      viewer.close()
      other.close()
    }
  })

  it('shows an app user in presence by its sub', async () => {
    const socket = await connect(app.url, await hs256Token({ sub: 'u1', role: 'viewer' }))
    try {
      expect(await subscribe(socket, '@alice/demo')).toMatchObject({ ok: true })
      const ack = await socket.timeout(10_000).emitWithAck('presence:set', { project: '@alice/demo', state: { cursor: 1 } }) as { ok: boolean }
      expect(ack).toMatchObject({ ok: true })
      const list = await socket.timeout(10_000).emitWithAck('presence:list', { project: '@alice/demo' }) as { ok: boolean, members: Array<{ actor: unknown }> }
      expect(list.members.map(m => m.actor)).toEqual([{ type: 'app', name: 'u1' }])
    } finally {
      socket.close()
    }
  })
})

describe('app sockets before verification', () => {
  it('are counted per IP: strings shaped like JWTs cannot each open a new connection allowance', async () => {
    const app = await startTestApp({ SOCKET_CONNECTIONS_PER_IDENTITY: '2' }, { realtime: true })
    const sockets = []
    try {
      const fake = (i: number) => `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ${i}In0.c2lnbmF0dXJl`
      sockets.push(await connect(app.url, fake(1)), await connect(app.url, fake(2)))
      const third = await connect(app.url, fake(3)).then(() => null, (error: { data?: { code?: string } }) => error.data?.code)
      expect(third).toBe('TOO_MANY_CONNECTIONS')
    } finally {
      for (const socket of sockets) socket.close()
      await app.close()
    }
  })
})
