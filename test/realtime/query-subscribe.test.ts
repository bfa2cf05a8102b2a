// Live queries over Socket.IO (docs/design.md §16) with a real socket.io-client against a real
// server: the ack, one `query` event per change that alters the result (keys in order, values
// only for new or changed children, `prev` chaining), nothing for a change that does not,
// INVALID_QUERY for bad input, the per-connection limit, narrowed keys, unsubscribe, and
// the end of the subscription when the member is removed.
import type { Socket } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { QueryEventPayload } from '../../shared/api/queries.js'
import { call, createKey, ownerWithProject, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { connect } from './client.js'

let app: TestApp
const sockets: Socket[] = []
const open = async (token: string) => { const s = await connect(app.url, token); sockets.push(s); return s }

beforeAll(async () => { app = await startTestApp({ QUERY_SUBSCRIPTIONS_PER_CONNECTION: '3' }, { realtime: true }) })
afterAll(async () => { await app.close() })
afterEach(() => { while (sockets.length) sockets.pop()?.disconnect() })

const op = (path: string, name: string, token: string, body: unknown) =>
  call(app.url, 'POST', `${path}/content/${name}`, { token, body })

const ask = (socket: Socket, event: string, payload: unknown) => socket.timeout(10_000).emitWithAck(event, payload) as Promise<any>

function queryEvents (socket: Socket) {
  const events: QueryEventPayload[] = []
  socket.on('query', (e: QueryEventPayload) => events.push(e))
  return {
    events,
    async next (count: number): Promise<QueryEventPayload[]> {
      const deadline = Date.now() + 10_000
      while (events.length < count && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
      expect(events.length).toBeGreaterThanOrEqual(count)
      return events
    }
  }
}

const TOP3 = { orderBy: 'score', direction: 'desc', limit: 3 }

describe('live query subscribe', () => {
  it('acks the ordered result, then sends one event per change that alters it', async () => {
    const { key, path } = await ownerWithProject(app.url, 'lead')
    await op(path, 'set', key, { path: 'board', value: { a: { score: 5 }, b: { score: 9 }, c: { score: 1 }, d: { score: 7 } } })
    const socket = await open(key)
    const heard = queryEvents(socket)
    const ack = await ask(socket, 'subscribe', { project: '@LEAD/demo', path: 'board', query: TOP3 })
    expect(ack).toEqual({
      ok: true,
      project: '@lead/demo',
      path: 'board',
      query: { orderBy: 'score', direction: 'desc', limit: 3 },
      version: 1,
      items: [{ key: 'b', value: { score: 9 } }, { key: 'd', value: { score: 7 } }, { key: 'a', value: { score: 5 } }]
    })
    // Below the window: no event.
    await op(path, 'increment', key, { path: 'board.c.score', value: 1 })
    // Into first place: c is new to the result (value), the others only move (keys).
    await op(path, 'increment', key, { path: 'board.c.score', value: 10 })
    // Outside the path: nothing.
    await op(path, 'set', key, { path: 'other', value: 1 })
    // A child in the window changes without moving.
    await op(path, 'set', key, { path: 'board.b.name', value: 'bee' })
    const events = await heard.next(2)
    await new Promise(resolve => setTimeout(resolve, 100))
    expect(events).toEqual([
      { project: '@lead/demo', subscription: 'board', version: 3, prev: 1, items: [{ key: 'c', value: { score: 12 } }, { key: 'b' }, { key: 'd' }] },
      { project: '@lead/demo', subscription: 'board', version: 5, prev: 3, items: [{ key: 'c' }, { key: 'b', value: { score: 9, name: 'bee' } }, { key: 'd' }] }
    ])
  })

  it('the latest messages of an array follow pushes', async () => {
    const { key, path } = await ownerWithProject(app.url, 'chat')
    await op(path, 'set', key, { path: 'messages', value: [{ at: 1 }, { at: 2 }, { at: 3 }] })
    const socket = await open(key)
    const heard = queryEvents(socket)
    const ack = await ask(socket, 'subscribe', { project: '@chat/demo', path: 'messages', query: { orderBy: 'key', direction: 'desc', limit: 2 } })
    expect(ack.items).toEqual([{ key: '2', value: { at: 3 } }, { key: '1', value: { at: 2 } }])
    await op(path, 'push', key, { path: 'messages', value: { at: 4 } })
    const [event] = await heard.next(1)
    expect(event?.items).toEqual([{ key: '3', value: { at: 4 } }, { key: '2' }])
  })

  it('a path where nothing is has no items, and fills in later', async () => {
    const { key, path } = await ownerWithProject(app.url, 'empty')
    const socket = await open(key)
    const heard = queryEvents(socket)
    const ack = await ask(socket, 'subscribe', { project: '@empty/demo', path: 'not.yet', query: { orderBy: 'value', limit: 5 } })
    expect(ack).toMatchObject({ ok: true, items: [] })
    await op(path, 'set', key, { path: 'not.yet', value: { x: 2, y: 1 } })
    const [event] = await heard.next(1)
    expect(event?.items).toEqual([{ key: 'y', value: 1 }, { key: 'x', value: 2 }])
    // Turning into a scalar later empties it; the subscription stays.
    await op(path, 'set', key, { path: 'not.yet', value: 'text' })
    const events = await heard.next(2)
    expect(events[1]?.items).toEqual([])
  })

  it('refuses bad queries with INVALID_QUERY and malformed requests with INVALID_BODY', async () => {
    const { key, path } = await ownerWithProject(app.url, 'bad')
    await op(path, 'set', key, { path: 'text', value: 'hello' })
    const socket = await open(key)
    const project = '@bad/demo'
    for (const query of [{ orderBy: 'score' }, { orderBy: 'score', limit: 0 }, { orderBy: 'score', limit: 1001 }, { orderBy: 'a..b', limit: 1 },
      { orderBy: 'score', limit: 1, direction: 'up' }, { orderBy: 'score', limit: 1, startAt: [1] }, { orderBy: 'score', limit: 1, extra: 1 }, 'score', null]) {
      expect(await ask(socket, 'subscribe', { project, path: 'board', query })).toMatchObject({ ok: false, code: 'INVALID_QUERY' })
    }
    expect(await ask(socket, 'subscribe', { project, path: 'text', query: TOP3 })).toMatchObject({ ok: false, code: 'INVALID_QUERY' })
    expect(await ask(socket, 'subscribe', { project, path: 'a..b', query: TOP3 })).toMatchObject({ ok: false, code: 'INVALID_PATH' })
    expect(await ask(socket, 'subscribe', { project, path: 'board', query: TOP3, since: 3 })).toMatchObject({ ok: false, code: 'INVALID_BODY' })
    expect(await ask(socket, 'subscribe', { project: '@bad/nope', path: 'board', query: TOP3 })).toMatchObject({ ok: false, code: 'PROJECT_NOT_FOUND' })
  })

  it('holds at most QUERY_SUBSCRIPTIONS_PER_CONNECTION live queries; re-subscribing one path replaces it', async () => {
    const { key } = await ownerWithProject(app.url, 'many')
    const socket = await open(key)
    for (const p of ['a', 'b', 'c']) expect(await ask(socket, 'subscribe', { project: '@many/demo', path: p, query: TOP3 })).toMatchObject({ ok: true })
    expect(await ask(socket, 'subscribe', { project: '@many/demo', path: 'a', query: { orderBy: 'key', limit: 1 } })).toMatchObject({ ok: true, query: { orderBy: 'key' } })
    expect(await ask(socket, 'subscribe', { project: '@many/demo', path: 'd', query: TOP3 })).toMatchObject({ ok: false, code: 'TOO_MANY_SUBSCRIPTIONS' })
    expect(await ask(socket, 'unsubscribe', { project: '@many/demo', path: 'a' })).toEqual({ ok: true })
    expect(await ask(socket, 'subscribe', { project: '@many/demo', path: 'd', query: TOP3 })).toMatchObject({ ok: true })
  })

  it('after unsubscribe no more events come', async () => {
    const { key, path } = await ownerWithProject(app.url, 'quiet')
    await op(path, 'set', key, { path: 'board', value: { a: { score: 1 } } })
    const socket = await open(key)
    const heard = queryEvents(socket)
    await ask(socket, 'subscribe', { project: '@quiet/demo', path: 'board', query: TOP3 })
    expect(await ask(socket, 'unsubscribe', { project: '@quiet/demo', path: 'board' })).toEqual({ ok: true })
    await op(path, 'increment', key, { path: 'board.a.score', value: 1 })
    // A later subscription of another socket proves the change went through the hub.
    const other = await open(key)
    const otherHeard = queryEvents(other)
    await ask(other, 'subscribe', { project: '@quiet/demo', path: 'board', query: TOP3 })
    await op(path, 'increment', key, { path: 'board.a.score', value: 1 })
    await otherHeard.next(1)
    expect(heard.events).toEqual([])
    expect(app.services.queries.projectCount).toBe(1)
  })

  it('a key narrowed to paths may query at or below them only', async () => {
    const { session, path } = await ownerWithProject(app.url, 'narrow')
    await call(app.url, 'POST', `${path}/content/set`, { token: session, body: { path: 'board', value: { a: { score: 1 } } } })
    const { key } = await createKey(app.url, session, { name: 'board only', permission: 'read', paths: ['board'] })
    const socket = await open(key)
    expect(await ask(socket, 'subscribe', { project: '@narrow/demo', path: 'board', query: TOP3 })).toMatchObject({ ok: true, items: [{ key: 'a' }] })
    expect(await ask(socket, 'subscribe', { project: '@narrow/demo', path: 'other', query: TOP3 })).toMatchObject({ ok: false, code: 'KEY_SCOPE_DENIED' })
  })

  it('ends when the member is removed', async () => {
    const { session, path } = await ownerWithProject(app.url, 'owner9')
    const viewer = await signup(app.url, 'viewer9')
    expect((await call(app.url, 'PUT', `${path}/members/viewer9`, { token: session, body: { role: 'viewer' } })).status).toBe(200)
    const socket = await open(viewer)
    const revoked: unknown[] = []
    socket.on('revoked', (r: unknown) => revoked.push(r))
    const heard = queryEvents(socket)
    expect(await ask(socket, 'subscribe', { project: '@owner9/demo', path: 'board', query: TOP3 })).toMatchObject({ ok: true })
    expect((await call(app.url, 'DELETE', `${path}/members/viewer9`, { token: session })).status).toBe(200)
    const deadline = Date.now() + 5000
    while (revoked.length === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
    expect(revoked).toEqual([expect.objectContaining({ code: 'FORBIDDEN', project: '@owner9/demo' })])
    await call(app.url, 'POST', `${path}/content/set`, { token: session, body: { path: 'board.a', value: { score: 1 } } })
    await new Promise(resolve => setTimeout(resolve, 100))
    expect(heard.events).toEqual([])
  })
})
