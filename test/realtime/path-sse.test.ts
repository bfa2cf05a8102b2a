// `GET …/content/events?path=` (docs/design.md §15) with the `eventsource` package (the
// EventSource of browsers, for Node) and the tests' SSE client: the snapshot of the path,
// only the changes that touch it (projected when above it), resume by Last-Event-ID, and the
// plain HTTP errors before any event (narrowed keys included).
import { EventSource } from 'eventsource'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applyPathChange, type PathChange, type PathValue } from '../../shared/live-path.js'
import { call, createKey, ownerWithProject } from '../support/http.js'
import { openEvents, type SseStream } from '../support/sse.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

describe('Server-Sent Events of one path', { timeout: 60_000 }, () => {
  let app: TestApp
  const streams: SseStream[] = []
  const sources: EventSource[] = []
  beforeAll(async () => { app = await startTestApp({ HISTORY_LIMIT: '30' }) })
  afterAll(async () => {
    for (const stream of streams) stream.close()
    for (const source of sources) source.close()
    await app.close()
  })

  async function project (name: string) {
    const owner = await ownerWithProject(app.url, name)
    const post = async (op: string, body: unknown) => {
      const r = op === 'update'
        ? await call(app.url, 'POST', `${owner.path}/content`, { token: owner.key, body })
        : await call(app.url, 'POST', `${owner.path}/content/${op}`, { token: owner.key, body })
      expect(r.status, r.text).toBe(200)
    }
    return { ...owner, post }
  }

  it('an EventSource gets the path\'s snapshot, then only the changes that touch it, never a value outside', async () => {
    const p = await project('ssepath')
    await p.post('update', { votes: { up: 1 }, secret: 'hidden' })
    const source = new EventSource(`${app.url}${p.path}/content/events?path=votes&access_token=${p.key}`)
    sources.push(source)
    const events: Array<{ type: string, id: string, data: Record<string, unknown> }> = []
    const record = (type: string) => (event: MessageEvent) => events.push({ type, id: event.lastEventId, data: JSON.parse(event.data as string) as Record<string, unknown> })
    source.addEventListener('snapshot', record('snapshot'))
    source.addEventListener('change', record('change'))
    const until = async (count: number) => { for (let i = 0; i < 200 && events.length < count; i++) await new Promise(resolve => setTimeout(resolve, 25)) }
    await until(1)
    expect(events[0]).toEqual({ type: 'snapshot', id: '1', data: { version: 1, path: 'votes', exists: true, value: { up: 1 } } })
    for (let i = 0; i < 5; i++) await p.post('increment', { path: 'elsewhere' })
    await p.post('increment', { path: 'votes.up' })
    await p.post('update', { votes: { up: 7 }, secret: 'hidden again' })
    await p.post('delete', { path: 'votes' })
    await until(4)
    expect(events.slice(1).map(event => [event.id, event.data.op, event.data.projected ?? false])).toEqual([['7', 'increment', false], ['8', 'set', true], ['9', 'delete', false]])
    expect(events[2]!.data).toEqual({ project: '@ssepath/demo', version: 8, op: 'set', path: 'votes', value: { up: 7 }, projected: true, at: expect.any(String), actor: expect.any(Object) })
    // SSE events carry neither subscription nor prev (docs/design.md §15).
    expect(events.every(event => !('subscription' in event.data) && !('prev' in event.data))).toBe(true)
    expect(JSON.stringify(events)).not.toContain('hidden')
  })

  it('resumes after Last-Event-ID (or ?since=) with the changes that touch the path, reading the content where the entry does not say', async () => {
    const p = await project('sseresume')
    await p.post('set', { path: 'list', value: ['a', 'b'] })
    await p.post('increment', { path: 'other' })
    await p.post('insert', { path: 'list', index: 0, value: 'z' })
    await p.post('increment', { path: 'other' })
    const stream = await openEvents(app.url, `${p.path}/content/events?path=list.1`, { token: p.key, lastEventId: '1' })
    streams.push(stream)
    expect(stream.status).toBe(200)
    await stream.until(() => stream.changes().length === 1, 'the insert, projected')
    expect(stream.events.map(event => event.event)).toEqual(['change'])
    expect(stream.changes()[0]).toMatchObject({ version: 3, op: 'set', path: 'list.1', value: 'a', projected: true })
    await p.post('push', { path: 'list', value: 'c' })
    await p.post('set', { path: 'list.1.deep', value: 1 }).catch(() => undefined)
    await p.post('set', { path: 'list.1', value: 'new' })
    await stream.until(() => stream.changes().length === 3, 'push and set')
    let state: PathValue = { exists: true, value: 'b' }
    for (const change of stream.changes()) state = applyPathChange(state, 'list.1', change as unknown as PathChange)
    expect(state).toEqual({ exists: true, value: 'new' })
    const since = await openEvents(app.url, `${p.path}/content/events?path=list.1&since=3`, { token: p.key })
    streams.push(since)
    await since.until(() => since.changes().length === 2, 'since=3')
    expect(since.changes().map(change => change.version)).toEqual([5, 6])
  })

  it('answers errors as plain HTTP before any event; narrowed keys stream inside their paths', async () => {
    const p = await project('sseerrors')
    const events = (query: string, token = p.key, lastEventId?: string) => openEvents(app.url, `${p.path}/content/events${query}`, { token, ...(lastEventId === undefined ? {} : { lastEventId }) })
    for (const path of ['a..b', '', '$x', '__proto__']) {
      const stream = await events(`?path=${encodeURIComponent(path)}`)
      expect([stream.status, JSON.parse(stream.body).code], path).toEqual([400, 'INVALID_PATH'])
    }
    const narrowed = (await createKey(app.url, p.session, { name: 'votes', permission: 'read', paths: ['votes'] })).key
    const inside = await events('?path=votes.up', narrowed)
    streams.push(inside)
    expect(inside.status).toBe(200)
    const outside = await events('?path=secret', narrowed)
    expect([outside.status, JSON.parse(outside.body).code]).toEqual([403, 'KEY_SCOPE_DENIED'])
    const whole = await events('', narrowed)
    expect([whole.status, JSON.parse(whole.body).code]).toEqual([403, 'KEY_SCOPE_DENIED'])
    const above = await events('?path=votes&since=5')
    expect([above.status, JSON.parse(above.body).code]).toEqual([400, 'INVALID_VERSION'])
    for (let i = 0; i < 35; i++) await p.post('increment', { path: 'n' })
    const expired = await events('?path=n', p.key, '0')
    expect([expired.status, JSON.parse(expired.body).code]).toEqual([410, 'HISTORY_EXPIRED'])
  })
})
