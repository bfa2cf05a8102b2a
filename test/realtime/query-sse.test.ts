// A live query as Server-Sent Events (docs/design.md §16): the snapshot event with every item,
// then `query` events only for changes that alter the result, HTTP errors before the stream
// starts (INVALID_QUERY, KEY_SCOPE_DENIED), and the stream's end when access ends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, createKey, ownerWithProject } from '../support/http.js'
import { openEvents, type SseStream } from '../support/sse.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
const streams: SseStream[] = []
beforeAll(async () => { app = await startTestApp({}) })
afterAll(async () => { for (const s of streams) s.close(); await app.close() })

const events = async (path: string, token: string) => { const s = await openEvents(app.url, path, { token }); streams.push(s); return s }
const data = (s: SseStream, event: string) => s.events.filter(e => e.event === event).map(e => JSON.parse(e.data) as unknown)

describe('live query over SSE', () => {
  it('starts with a snapshot, then sends query events for changes that alter the result', async () => {
    const { key, path } = await ownerWithProject(app.url, 'sseq')
    await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'board', value: { a: { score: 1 }, b: { score: 2 }, c: { score: 3 } } } })
    const s = await events(`${path}/content/events?path=board&orderBy=score&direction=desc&limit=2&startAt=0`, key)
    expect(s.status).toBe(200)
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/)
    await s.until(() => s.events.length >= 1, 'snapshot')
    expect(s.events[0]).toEqual({ id: '1', event: 'snapshot', data: JSON.stringify({ version: 1, items: [{ key: 'c', value: { score: 3 } }, { key: 'b', value: { score: 2 } }] }) })
    await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'board.a.score', value: 0.5 } })
    await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'board.a.score', value: 5 } })
    await s.until(() => s.events.length >= 2, 'query event')
    expect(data(s, 'query')).toEqual([{ version: 3, items: [{ key: 'a', value: { score: 6.5 } }, { key: 'c' }] }])
    expect(s.events[1]?.id).toBe('3')
  })

  it('answers bad queries with 400 INVALID_QUERY before streaming, and narrowed keys outside their paths with 403', async () => {
    const { key, session, path } = await ownerWithProject(app.url, 'sseb')
    await call(app.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'text', value: 'x' } })
    for (const q of ['path=board&orderBy=score', 'path=board&orderBy=score&limit=0', 'orderBy=score&limit=3', 'path=text&orderBy=key&limit=3', 'path=board&orderBy=score&limit=3&endAt=%5B%5D']) {
      const s = await events(`${path}/content/events?${q}`, key)
      expect(s.status, q).toBe(400)
      expect(JSON.parse(s.body)).toMatchObject({ code: 'INVALID_QUERY' })
    }
    const narrowed = (await createKey(app.url, session, { name: 'board', permission: 'read', paths: ['board'] })).key
    const denied = await events(`${path}/content/events?path=other&orderBy=key&limit=3`, narrowed)
    expect(denied.status).toBe(403)
    expect(JSON.parse(denied.body)).toMatchObject({ code: 'KEY_SCOPE_DENIED' })
    const allowed = await events(`${path}/content/events?path=board&orderBy=key&limit=3`, narrowed)
    expect(allowed.status).toBe(200)
  })

  it('ends with a revoked event when the key is revoked', async () => {
    const { session, path } = await ownerWithProject(app.url, 'sser')
    const { key, id } = await createKey(app.url, session, { name: 'short', permission: 'read' })
    const s = await events(`${path}/content/events?path=board&orderBy=key&limit=3`, key)
    await s.until(() => s.events.length >= 1, 'snapshot')
    const live = app.services.queries.projectCount
    expect((await call(app.url, 'DELETE', `/api/keys/${id}`, { token: session })).status).toBe(200)
    await s.until(() => s.ended, 'the end of the stream')
    expect(s.events.at(-1)).toMatchObject({ event: 'revoked' })
    // Its shared result is gone with its last subscriber.
    expect(app.services.queries.projectCount).toBe(live - 1)
  })
})
