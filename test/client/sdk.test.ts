// The SDK against a real server (HTTP + Socket.IO on a temp SQLite store): every operation,
// typed errors, and live copies that must equal the stored content after every change,
// across reconnects, revocation and refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, ContentdError, type ContentdClient, type Subscription } from '../../shared/client/index.js'
import { SUCCESS_MESSAGES } from '../../shared/operation-table.js'
import { createKey, ownerWithProject, signup, call } from '../support/http.js'
import { freePort } from '../support/server-process.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
let key: string
let session: string
const clients: ContentdClient[] = []

/** null: no token at all. */
const client = (token: string | null = key) => {
  const c = createClient({ baseUrl: app.url, ...(token === null ? {} : { token }) })
  clients.push(c)
  return c
}

/** Resolves once the subscription's copy reaches `version` (the test's timeout bounds it). */
function reach (sub: Subscription, version: number, listeners: Array<() => void>): Promise<void> {
  return new Promise(resolve => {
    const check = () => { if ((sub.version ?? -1) >= version) resolve() }
    listeners.push(check)
    check()
  })
}

beforeAll(async () => {
  app = await startTestApp({}, { realtime: true })
  ;({ key, session } = await ownerWithProject(app.url, 'alice'))
})

afterAll(async () => {
  for (const c of clients) c.close()
  await app.close()
})

describe('HTTP operations', () => {
  it('runs every operation and reports the version each write produced', async () => {
    const demo = client().project('@alice/demo')
    const first = await demo.update({ stats: { visits: 10 }, list: [] })
    expect(first.message).toBe(SUCCESS_MESSAGES.update)
    expect(await demo.increment('stats.visits')).toEqual({ message: SUCCESS_MESSAGES.increment, version: (first.version as number) + 1, replayed: false })
    await demo.increment('stats.visits', 5)
    await demo.decrement('stats.visits', 2)
    await demo.decrement('stats.other')
    expect((await demo.set('title', 'Hello')).message).toBe(SUCCESS_MESSAGES.set)
    expect((await demo.push('list', 'b')).message).toBe(SUCCESS_MESSAGES.push)
    expect((await demo.insert('list', 0, 'a')).message).toBe(SUCCESS_MESSAGES.insert)
    const last = await demo.delete('stats.other')
    expect(last.message).toBe(SUCCESS_MESSAGES.delete)
    expect(last.version).toBe((first.version as number) + 8)
    expect(await demo.get()).toEqual({ stats: { visits: 14 }, list: ['a', 'b'], title: 'Hello' })
    expect(await demo.get('list.1')).toBe('b')
    expect(await demo.snapshot('stats')).toEqual({ value: { visits: 14 }, version: last.version })
  })

  it('accepts "owner/slug" without the @ and any case of the owner', async () => {
    await client().project('@alice/demo').set('case', 1)
    expect(await client().project('ALICE/demo').get('case')).toBe(1)
  })

  it('throws ContentdError with the server status, code and message', async () => {
    const demo = client().project('@alice/demo')
    await demo.set('word', 'text')
    const cases: Array<[() => Promise<unknown>, number, string]> = [
      [() => demo.get('nothing.here'), 404, 'PATH_NOT_FOUND'],
      [() => demo.increment('word'), 400, 'NOT_A_NUMBER'],
      [() => demo.push('word', 1), 400, 'NOT_AN_ARRAY'],
      [() => demo.set('a..b', 1), 400, 'INVALID_PATH'],
      [() => demo.set('x', 1, { ifVersion: 0 }), 412, 'PRECONDITION_FAILED'],
      [() => client().project('@alice/nope').get(), 404, 'PROJECT_NOT_FOUND'],
      [() => client('cdk_not-a-real-key').project('@alice/demo').get(), 401, 'INVALID_TOKEN'],
      [() => client(null).project('@alice/demo').get(), 401, 'AUTH_REQUIRED']
    ]
    for (const [promise, status, code] of cases) {
      const error = await promise().then(() => null, (e: unknown) => e)
      expect(error, code).toBeInstanceOf(ContentdError)
      expect(error).toMatchObject({ status, code })
      expect((error as Error).message.length).toBeGreaterThan(0)
    }
  })

  it('sets, reads and removes a schema, and surfaces its violations as `errors` on ContentdError', async () => {
    const owner = client(session).project('@alice/demo')
    await owner.update({ stock: { apples: 3 } })
    const schema = { type: 'object', properties: { stock: { type: 'object', additionalProperties: { type: 'integer' } } } } as const
    expect(await owner.setSchema(schema)).toEqual({ message: 'Schema set', setBy: '@alice', setAt: expect.any(String) })
    expect(await owner.getSchema()).toEqual(schema)

    const demo = client().project('@alice/demo')
    const refused = await demo.set('stock.apples', 'lots').catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ContentdError)
    expect(refused).toMatchObject({ status: 422, code: 'SCHEMA_VIOLATION', errors: [{ path: 'stock.apples', message: 'must be integer' }] })
    expect(await demo.get('stock')).toEqual({ apples: 3 })

    const breaking = await owner.setSchema({ required: ['missing'] }).catch((e: unknown) => e)
    expect(breaking).toMatchObject({ status: 409, code: 'SCHEMA_VIOLATION', errors: [{ path: '', message: "must have required property 'missing'" }] })
    const notOwner = await demo.setSchema(true).catch((e: unknown) => e)
    expect(notOwner).toMatchObject({ status: 403, code: 'SESSION_REQUIRED', errors: undefined })

    await owner.deleteSchema()
    await expect(owner.getSchema()).rejects.toMatchObject({ status: 404, code: 'SCHEMA_NOT_FOUND' })
    expect((await demo.set('stock.apples', 'lots')).message).toBe(SUCCESS_MESSAGES.set)
  })

  it('a narrowed key writes inside its paths and gets KEY_SCOPE_DENIED outside them', async () => {
    const widget = client((await createKey(app.url, session, { name: 'widget', permission: 'write', paths: ['votes'], ops: ['increment'] })).key).project('@alice/demo')
    await widget.increment('votes.red')
    expect(await widget.get('votes.red')).toBe(1)
    await expect(widget.set('votes.red', 100)).rejects.toMatchObject({ status: 403, code: 'KEY_SCOPE_DENIED' })
    await expect(widget.get()).rejects.toMatchObject({ status: 403, code: 'KEY_SCOPE_DENIED' })
  })

  it('turns an unreachable server into a NETWORK_ERROR', async () => {
    const port = await freePort()
    const offline = createClient({ baseUrl: `http://127.0.0.1:${port}`, token: key })
    await expect(offline.project('@alice/demo').get()).rejects.toMatchObject({ status: 0, code: 'NETWORK_ERROR' })
  })

  it('lists the identity and its projects', async () => {
    const c = client()
    expect(await c.me()).toMatchObject({ username: '@alice' })
    expect((await c.projects()).map(p => `${p.username}/${p.slug}`)).toContain('@alice/demo')
  })

  it('projects() gathers every page: 130 projects come back, each once, in order', async () => {
    const owner = await signup(app.url, 'many-projects')
    const slugs = Array.from({ length: 130 }, (_, i) => `p${String(i).padStart(3, '0')}`)
    for (const slug of slugs) expect((await call(app.url, 'POST', '/api/projects', { token: owner, body: { slug } })).status).toBe(201)
    expect((await client(owner).projects()).map(p => p.slug)).toEqual(slugs)
  })
})

describe('subscribe', () => {
  it('keeps a local copy equal to the stored content through every operation', async () => {
    const reader = client()
    const writer = client().project('@alice/demo')
    const listeners: Array<() => void> = []
    const contents: Array<{ version: number, content: string }> = []
    const changes: number[] = []
    const sub = reader.project('@alice/demo').subscribe((content, version) => {
      contents.push({ version, content: JSON.stringify(content) })
      for (const l of listeners) l()
    }, { onChange: c => changes.push(c.version) })
    await sub.ready
    const start = sub.version as number
    expect(sub.content).toEqual(await writer.get())

    await writer.update({ counters: { a: 0 }, items: [] })
    await writer.increment('counters.a', 3)
    await writer.decrement('counters.b')
    await writer.set('nested.deep.value', { x: [1, 2] })
    await writer.push('items', { id: 1 })
    await writer.insert('items', 0, 'first')
    await writer.delete('counters.a')
    const { version: end } = await writer.set('items.1.id', 2)
    await reach(sub, end as number, listeners)

    expect(sub.content).toEqual(await writer.get())
    expect(sub.version).toBe(end)
    expect(changes).toEqual(Array.from({ length: (end as number) - start }, (_, i) => start + 1 + i))
    expect(contents.map(c => c.version)).toEqual([start, ...changes])
    expect(sub.snapshots).toBe(1)
    sub.close()
  })

  it('resumes after a reconnect from its version and catches up on what it missed, without a new snapshot', async () => {
    const reader = client()
    const writer = client().project('@alice/demo')
    const listeners: Array<() => void> = []
    const sub = reader.project('@alice/demo').subscribe(() => { for (const l of listeners) l() })
    await sub.ready
    // Drop the connection under the client (as a network failure would); it reconnects.
    for (const socket of (app.realtime?.io.sockets.sockets.values() ?? [])) socket.conn.close()
    const { version } = await writer.increment('reconnects')
    await reach(sub, version as number, listeners)
    expect(sub.content).toEqual(await writer.get())
    expect([sub.snapshots, sub.resumes]).toEqual([1, 1])
    sub.close()
  })

  it('reports refusal: unknown project, no access, bad token', async () => {
    await signup(app.url, 'mallory')
    const mallory = (await call(app.url, 'POST', '/api/auth/login', { body: { username: 'mallory', password: 'correct horse battery staple' } })).body.token as string
    const errors: ContentdError[] = []
    await expect(client().project('@alice/missing').subscribe(() => {}, { onError: e => errors.push(e) }).ready)
      .rejects.toMatchObject({ status: 404, code: 'PROJECT_NOT_FOUND' })
    await expect(client(mallory).project('@alice/demo').subscribe(() => {}).ready).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' })
    await expect(client('cdk_bogus').project('@alice/demo').subscribe(() => {}).ready).rejects.toMatchObject({ status: 401, code: 'INVALID_TOKEN' })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(ContentdError)
  })

  it('ends the subscription with an error when its key is revoked', async () => {
    const { id, key: temporary } = await createKey(app.url, session, { name: 'temporary', permission: 'read' })
    let failed: (e: ContentdError) => void = () => {}
    const ended = new Promise<ContentdError>(resolve => { failed = resolve })
    const sub = client(temporary).project('@alice/demo').subscribe(() => {}, { onError: e => failed(e) })
    await sub.ready
    expect((await call(app.url, 'DELETE', `/api/keys/${id}`, { token: session })).status).toBe(200)
    const error = await ended
    expect(error).toMatchObject({ status: 401, code: 'INVALID_TOKEN' })
  })

  it('close() ends the client\'s socket', async () => {
    // Its own key tells this client's socket apart on the server: other clients of this file
    // connect and go at their own pace (those the reconnect test dropped come back up to
    // 1.5 s later), so a count of all sockets says nothing about this one.
    const { key: own } = await createKey(app.url, session, { name: 'closing', permission: 'read' })
    const reader = createClient({ baseUrl: app.url, token: own })
    const sub = reader.project('@alice/demo').subscribe(() => {})
    await sub.ready
    const io = app.realtime?.io
    const socketsOfReader = () => [...(io?.sockets.sockets.values() ?? [])].filter(socket => socket.data.token === own)
    const [socket] = socketsOfReader()
    expect(socketsOfReader()).toHaveLength(1)
    const reason = new Promise<string>(resolve => socket?.once('disconnect', resolve))
    reader.close()
    await expect(sub.ready).resolves.toBeUndefined()
    expect(reader.connection).toBe('idle')
    // The client said goodbye (a dropped transport would say 'transport close' and be retried).
    expect(await reason).toBe('client namespace disconnect')
    expect(socketsOfReader()).toEqual([])
  })
})
