// The realtime protocol (docs/design.md §7) against a real server on a free port, with
// socket.io-client: handshake, subscribe acks, one change per committed operation, order
// and consistency under concurrent writers, revocation, limits.
import type { Socket } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { operationOfChange } from '../../shared/events.js'
import type { JsonObject } from '../../shared/json.js'
import { applyContentOperation } from '../../shared/compound.js'
import { call, createKey, createProject, ownerWithProject, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { connect, connected, openSocket, Recorder, subscribe } from './client.js'

let app: TestApp
const sockets: Socket[] = []
const track = (socket: Socket) => { sockets.push(socket); return socket }
const open = async (token: string) => track(await connect(app.url, token))

beforeAll(async () => { app = await startTestApp({}, { realtime: true }) })
afterAll(async () => { await app.close() })
afterEach(() => { while (sockets.length) sockets.pop()?.disconnect() })

const op = (path: string, name: string, token: string, body: unknown) =>
  call(app.url, 'POST', `${path}/content/${name}`, { token, body })

describe('handshake', () => {
  it('refuses a connection without a token with AUTH_REQUIRED in connect_error data', async () => {
    const error: any = await connected(track(openSocket(app.url))).then(() => null, e => e)
    expect(error?.data).toEqual({ code: 'AUTH_REQUIRED', message: expect.any(String) })
  })

  it('refuses unknown and malformed tokens with INVALID_TOKEN', async () => {
    for (const token of ['cds_not-a-real-session', 'cdk_not-a-real-key', 'garbage']) {
      const error: any = await connected(track(openSocket(app.url, token))).then(() => null, e => e)
      expect(error?.data).toEqual({ code: 'INVALID_TOKEN', message: expect.stringContaining('invalid') })
    }
  })

  it('accepts a session token and an API key', async () => {
    const { session, key } = await ownerWithProject(app.url, 'hands')
    expect((await open(session)).connected).toBe(true)
    expect((await open(key)).connected).toBe(true)
  })
})

describe('subscribe', () => {
  it('acks with the current version and content, the same as GET …/content', async () => {
    const { key, path } = await ownerWithProject(app.url, 'snap')
    await op(path, 'set', key, { path: 'a.b', value: [1, 'two'] })
    await op(path, 'increment', key, { path: 'n', value: 3 })
    const ack = await subscribe(await open(key), '@SNAP/demo')
    const got = await call(app.url, 'GET', `${path}/content`, { token: key })
    expect(ack).toEqual({ ok: true, project: '@snap/demo', version: 2, content: got.body })
    expect(got.headers.get('etag')).toBe('"2"')
  })

  it('answers 404-type codes like HTTP does', async () => {
    const { key } = await ownerWithProject(app.url, 'notfound')
    const socket = await open(key)
    expect(await subscribe(socket, '@notfound/nope')).toMatchObject({ ok: false, code: 'PROJECT_NOT_FOUND' })
    expect(await subscribe(socket, '@nobody-here/demo')).toMatchObject({ ok: false, code: 'USER_NOT_FOUND' })
    expect(await subscribe(socket, 'notfound/demo')).toMatchObject({ ok: false, code: 'INVALID_USERNAME' })
    const malformed = await socket.timeout(5000).emitWithAck('subscribe', { project: 42 })
    expect(malformed).toMatchObject({ ok: false, code: 'INVALID_BODY', message: expect.any(String) })
  })

  it('answers 403 codes like HTTP does: no access, and a key scoped elsewhere', async () => {
    const alice = await ownerWithProject(app.url, 'owner403')
    const mallory = await signup(app.url, 'mallory403')
    expect(await subscribe(await open(mallory), '@owner403/demo')).toEqual({ ok: false, code: 'FORBIDDEN', message: expect.any(String) })
    await createProject(app.url, alice.session, 'other')
    const scoped = await createKey(app.url, alice.session, { name: 'scoped', permission: 'read', projects: ['@owner403/other'] })
    const socket = await open(scoped.key)
    expect(await subscribe(socket, '@owner403/demo')).toMatchObject({ ok: false, code: 'KEY_PERMISSION_DENIED' })
    expect(await subscribe(socket, '@owner403/other')).toMatchObject({ ok: true, version: 0, content: {} })
  })
})

describe('change events', () => {
  it('every writing operation produces exactly one change: its log entry, with the actor', async () => {
    const { key, keyId, session, path } = await ownerWithProject(app.url, 'seven')
    const recorder = new Recorder(await open(key))
    expect(await subscribe(recorder.socket, '@seven/demo')).toMatchObject({ ok: true, version: 0 })
    const steps: Array<[string, unknown]> = [
      ['increment', { path: 'stats.count', value: 5 }],
      ['decrement', { path: 'stats.count' }],
      ['set', { path: 'title', value: { text: 'hi' } }],
      ['push', { path: 'list', value: 'a' }],
      ['insert', { path: 'list', value: 'b', index: 0 }],
      ['delete', { path: 'title' }]
    ]
    for (const [name, body] of steps) expect((await op(path, name, key, body)).status).toBe(200)
    expect((await call(app.url, 'POST', `${path}/content`, { token: key, body: { fresh: true } })).status).toBe(200)
    expect((await call(app.url, 'POST', `${path}/content/revert`, { token: session, body: { version: 6 } })).status).toBe(200)
    await recorder.untilVersion(8)
    const at = expect.stringMatching(/^\d{4}-\d\d-\d\dT/)
    const actor = { type: 'key', id: keyId, name: 'writer' }
    expect(recorder.changes).toEqual([
      { project: '@seven/demo', version: 1, op: 'increment', path: 'stats.count', value: 5, at, actor },
      { project: '@seven/demo', version: 2, op: 'decrement', path: 'stats.count', value: 1, at, actor },
      { project: '@seven/demo', version: 3, op: 'set', path: 'title', value: { text: 'hi' }, at, actor },
      { project: '@seven/demo', version: 4, op: 'push', path: 'list', value: 'a', at, actor },
      { project: '@seven/demo', version: 5, op: 'insert', path: 'list', value: 'b', index: 0, at, actor },
      { project: '@seven/demo', version: 6, op: 'delete', path: 'title', at, actor },
      { project: '@seven/demo', version: 7, op: 'update', value: { fresh: true }, at, actor },
      { project: '@seven/demo', version: 8, op: 'revert', value: { stats: { count: 4 }, list: ['b', 'a'] }, revertedTo: 6, at, actor: { type: 'user', name: '@seven' } }
    ])
    // Exactly the entries the change log keeps.
    const logged = await call(app.url, 'GET', `${path}/content/changes`, { token: key })
    expect(logged.body.changes).toEqual(recorder.changes)
  })

  it('a failed operation broadcasts nothing', async () => {
    const { key, path } = await ownerWithProject(app.url, 'failing')
    await op(path, 'set', key, { path: 'text', value: 'abc' })
    const recorder = new Recorder(await open(key))
    await subscribe(recorder.socket, '@failing/demo')
    expect((await op(path, 'increment', key, { path: 'text' })).status).toBe(400)
    expect((await op(path, 'insert', key, { path: 'text', value: 1, index: 3 })).status).toBe(400)
    expect((await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'x', value: 1 }, headers: { 'if-match': '"99"' } })).status).toBe(412)
    // A later success is the marker: changes arrive in order, so anything failed would be before it.
    await op(path, 'set', key, { path: 'marker', value: true })
    await recorder.untilVersion(2)
    expect(recorder.changes.map(c => [c.version, c.op, c.path])).toEqual([[2, 'set', 'marker']])
  })

  it('unsubscribe stops the changes of that project only', async () => {
    const { session, key, path } = await ownerWithProject(app.url, 'unsub')
    await createProject(app.url, session, 'second')
    const recorder = new Recorder(await open(key))
    await subscribe(recorder.socket, '@unsub/demo')
    await subscribe(recorder.socket, '@unsub/second')
    expect(await recorder.socket.timeout(5000).emitWithAck('unsubscribe', { project: '@unsub/demo' })).toEqual({ ok: true })
    await op(path, 'increment', key, { path: 'n' })
    await op('/api/@unsub/second', 'increment', key, { path: 'n' })
    await recorder.until(() => recorder.changes.length >= 1, 'the second project change')
    expect(recorder.changes.map(c => c.project)).toEqual(['@unsub/second'])
  })

  it('200 concurrent increments, 20 subscribers joining meanwhile: each sees every version once, in order, and replaying equals the stored content', async () => {
    const { key, path } = await ownerWithProject(app.url, 'storm')
    await op(path, 'set', key, { path: 'seed', value: { list: [] } })
    const writers = Array.from({ length: 200 }, (_, i) => op(path, 'increment', key, { path: `counters.c${i % 7}`, value: i + 1 }))
    const subscribers = await Promise.all(Array.from({ length: 20 }, async () => {
      const recorder = new Recorder(await open(key))
      const ack = await subscribe(recorder.socket, '@storm/demo')
      if (!ack.ok) throw new Error(ack.code)
      return { recorder, ack }
    }))
    const results = await Promise.all(writers)
    expect(results.every(r => r.status === 200)).toBe(true)
    const finalVersion = 201
    const stored = await call(app.url, 'GET', `${path}/content`, { token: key })
    expect(stored.headers.get('etag')).toBe(`"${finalVersion}"`)
    for (const { recorder, ack } of subscribers) {
      if (!ack.ok || !('content' in ack)) throw new Error('unreachable')
      if (ack.version < finalVersion) await recorder.untilVersion(finalVersion)
      const versions = recorder.changes.map(c => c.version)
      expect(versions).toEqual(Array.from({ length: finalVersion - ack.version }, (_, i) => ack.version + 1 + i))
      let doc: JsonObject = structuredClone(ack.content)
      for (const change of recorder.changes) doc = applyContentOperation(doc, operationOfChange(change))
      expect(doc).toEqual(stored.body)
    }
  })
})

describe('revocation ends subscriptions', () => {
  const revokedThenDisconnected = async (recorder: Recorder) => {
    await recorder.until(() => recorder.disconnectReason !== null, 'disconnect')
    expect(recorder.revoked).toEqual([{ code: 'INVALID_TOKEN', message: expect.any(String) }])
    expect(recorder.disconnectReason).toBe('io server disconnect')
  }

  it('revoking the API key disconnects its sockets, not the others', async () => {
    const { session, path } = await ownerWithProject(app.url, 'revkey')
    const doomed = await createKey(app.url, session, { name: 'doomed', permission: 'read' })
    const kept = await createKey(app.url, session, { name: 'kept', permission: 'read' })
    const gone = new Recorder(await open(doomed.key))
    const stays = new Recorder(await open(kept.key))
    await subscribe(gone.socket, '@revkey/demo')
    await subscribe(stays.socket, '@revkey/demo')
    expect((await call(app.url, 'DELETE', `/api/keys/${doomed.id}`, { token: session })).status).toBe(200)
    await revokedThenDisconnected(gone)
    await op(path, 'increment', session, { path: 'n' })
    await stays.untilVersion(1)
    expect(stays.disconnectReason).toBeNull()
    expect(gone.changes).toEqual([])
    const retry: any = await connected(track(openSocket(app.url, doomed.key))).then(() => null, e => e)
    expect(retry?.data?.code).toBe('INVALID_TOKEN')
  })

  it('logging out disconnects the sockets of that session', async () => {
    const session = await signup(app.url, 'revlogout')
    await createProject(app.url, session, 'demo')
    const recorder = new Recorder(await open(session))
    await subscribe(recorder.socket, '@revlogout/demo')
    expect((await call(app.url, 'POST', '/api/auth/logout', { token: session })).status).toBe(200)
    await revokedThenDisconnected(recorder)
  })

  it('removing a member ends their subscription to that project', async () => {
    const alice = await ownerWithProject(app.url, 'revowner')
    const bob = await signup(app.url, 'revmember')
    await call(app.url, 'PUT', `${alice.path}/members/@revmember`, { token: alice.session, body: { role: 'viewer' } })
    const recorder = new Recorder(await open(bob))
    expect(await subscribe(recorder.socket, '@revowner/demo')).toMatchObject({ ok: true })
    await op(alice.path, 'increment', alice.key, { path: 'n' })
    await recorder.untilVersion(1)
    expect((await call(app.url, 'DELETE', `${alice.path}/members/@revmember`, { token: alice.session })).status).toBe(200)
    await recorder.until(() => recorder.revoked.length > 0, 'revoked')
    expect(recorder.revoked).toEqual([{ project: '@revowner/demo', code: 'FORBIDDEN', message: expect.any(String) }])
    await op(alice.path, 'increment', alice.key, { path: 'n' })
    // Still connected, but no longer allowed: re-subscribing is refused, and version 2 never came.
    expect(await subscribe(recorder.socket, '@revowner/demo')).toMatchObject({ ok: false, code: 'FORBIDDEN' })
    expect(recorder.changes.map(c => c.version)).toEqual([1])
  })

  it('deleting the project ends every subscription to it', async () => {
    const { session } = await ownerWithProject(app.url, 'revdelete')
    const recorder = new Recorder(await open(session))
    await subscribe(recorder.socket, '@revdelete/demo')
    expect((await call(app.url, 'DELETE', '/api/@revdelete/demo', { token: session })).status).toBe(200)
    await recorder.until(() => recorder.revoked.length > 0, 'revoked')
    expect(recorder.revoked).toEqual([{ project: '@revdelete/demo', code: 'PROJECT_NOT_FOUND', message: expect.any(String) }])
  })
})

describe('limits', () => {
  let limited: TestApp
  beforeAll(async () => {
    limited = await startTestApp({ SOCKET_CONNECTIONS_PER_IDENTITY: '2', SOCKET_SUBSCRIPTIONS_PER_CONNECTION: '1' }, { realtime: true })
  })
  afterAll(async () => { await limited.close() })

  it('refuses connections past the per-user limit, and frees the place on disconnect', async () => {
    const { session, key } = await ownerWithProject(limited.url, 'conns')
    const first = track(await connect(limited.url, session))
    track(await connect(limited.url, key))
    const error: any = await connected(track(openSocket(limited.url, session))).then(() => null, e => e)
    expect(error?.data).toEqual({ code: 'TOO_MANY_CONNECTIONS', message: expect.stringContaining('at most 2') })
    const closed = new Promise(resolve => first.once('disconnect', resolve))
    first.disconnect()
    await closed
    // The server sees the close a moment later; retry a bounded number of times.
    let again: Socket | null = null
    for (let attempt = 0; attempt < 20 && !again; attempt++) {
      again = await connected(track(openSocket(limited.url, session))).catch(() => null)
      if (!again) await new Promise(resolve => setTimeout(resolve, 50))
    }
    expect(again?.connected).toBe(true)
  })

  it('refuses subscriptions past the per-connection limit', async () => {
    const { session } = await ownerWithProject(limited.url, 'subs')
    await createProject(limited.url, session, 'two')
    const socket = track(await connect(limited.url, session))
    expect(await subscribe(socket, '@subs/demo')).toMatchObject({ ok: true })
    expect(await subscribe(socket, '@subs/two')).toMatchObject({ ok: false, code: 'TOO_MANY_SUBSCRIPTIONS', message: expect.stringContaining('at most 1') })
    // Re-subscribing to the same project replaces it rather than counting twice.
    expect(await subscribe(socket, '@subs/demo')).toMatchObject({ ok: true })
  })
})

