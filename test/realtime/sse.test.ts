// Server-Sent Events (docs/design.md §9) against a real server process: snapshot then live,
// replay from ?since= and Last-Event-ID, no gap and no duplicate under concurrent writes,
// heartbeats, ?access_token= (kept out of the logs), revocation and logout ending the stream,
// the HTTP answers for bad requests, a consumer that does not read being dropped, shutdown.
import { connect as connectTcp } from 'node:net'
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { operationOfChange, type ChangeEntry } from '../../shared/events.js'
import type { JsonObject } from '../../shared/json.js'
import { applyContentOperation } from '../../shared/compound.js'
import { call, createKey, ownerWithProject, signup } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { openEvents, type SseStream } from '../support/sse.js'
import { until } from '../support/wait.js'

const HISTORY_LIMIT = 150
const STREAMS_PER_USER = 10
let server: ServerProcess
const streams: SseStream[] = []

const open = async (...args: Parameters<typeof openEvents>) => {
  const stream = await openEvents(...args)
  streams.push(stream)
  return stream
}
const increment = (path: string, token: string, by = 1) => call(server.url, 'POST', `${path}/content/increment`, { token, body: { path: 'n', value: by } })
const versions = (stream: SseStream) => stream.changes().map(c => c.version)
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

beforeAll(async () => {
  server = await startServerProcess({ env: { HISTORY_LIMIT: String(HISTORY_LIMIT), SSE_HEARTBEAT: '300ms', LOG_LEVEL: 'info', SOCKET_CONNECTIONS_PER_IDENTITY: String(STREAMS_PER_USER) } })
})
afterAll(async () => {
  for (const stream of streams) stream.close()
  await server?.stop()
  rmSync(server.dataDir, { recursive: true, force: true })
})

describe('GET …/content/events', { timeout: 60_000 }, () => {
  it('starts with a snapshot, then sends every change live with its version as id, actor included', async () => {
    const { key, keyId, path } = await ownerWithProject(server.url, 'ssesnap')
    for (let i = 0; i < 3; i++) expect((await increment(path, key)).status).toBe(200)
    const stream = await open(server.url, `${path}/content/events`, { token: key })
    expect(stream.status).toBe(200)
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/)
    expect(stream.headers.get('cache-control')).toContain('no-cache')
    await stream.until(() => stream.events.length >= 1, 'the snapshot')
    expect(stream.events[0]).toEqual({ id: '3', event: 'snapshot', data: JSON.stringify({ version: 3, content: { n: 3 } }) })
    await increment(path, key, 5)
    await call(server.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'title', value: 'line\nbreak' } })
    await stream.until(() => versions(stream).includes(5), 'version 5')
    expect(stream.events.slice(1).map(e => [e.id, e.event])).toEqual([['4', 'change'], ['5', 'change']])
    expect(stream.changes()).toEqual([
      { project: '@ssesnap/demo', version: 4, op: 'increment', path: 'n', value: 5, at: expect.any(String), actor: { type: 'key', id: keyId, name: 'writer' } },
      { project: '@ssesnap/demo', version: 5, op: 'set', path: 'title', value: 'line\nbreak', at: expect.any(String), actor: { type: 'key', id: keyId, name: 'writer' } }
    ])
  })

  it('replays every change after ?since=, then goes live; Last-Event-ID wins over ?since=', async () => {
    const { key, path } = await ownerWithProject(server.url, 'ssereplay')
    for (let i = 0; i < 6; i++) await increment(path, key)
    const fromSince = await open(server.url, `${path}/content/events?since=2`, { token: key })
    const fromHeader = await open(server.url, `${path}/content/events?since=2`, { token: key, lastEventId: '4' })
    await fromSince.until(() => versions(fromSince).includes(6), 'the replay')
    await fromHeader.until(() => versions(fromHeader).includes(6), 'the replay')
    await increment(path, key)
    await fromSince.until(() => versions(fromSince).includes(7), 'the live change')
    await fromHeader.until(() => versions(fromHeader).includes(7), 'the live change')
    expect(versions(fromSince)).toEqual([3, 4, 5, 6, 7])
    expect(versions(fromHeader)).toEqual([5, 6, 7])
    expect(fromSince.events.some(e => e.event === 'snapshot')).toBe(false)
    // At the current version: nothing to replay, live from there.
    const atCurrent = await open(server.url, `${path}/content/events`, { token: key, lastEventId: '7' })
    await increment(path, key)
    await atCurrent.until(() => versions(atCurrent).includes(8), 'version 8')
    expect(versions(atCurrent)).toEqual([8])
  })

  it('no gap and no duplicate for streams opened while writers are busy', async () => {
    const { key, path } = await ownerWithProject(server.url, 'sserace')
    const total = 120
    const opened: Array<Promise<SseStream>> = []
    const writes: Array<Promise<unknown>> = []
    for (let i = 0; i < total; i++) {
      writes.push(increment(path, key))
      if (i % 30 === 10) {
        opened.push(open(server.url, `${path}/content/events`, { token: key }))
        opened.push(open(server.url, `${path}/content/events?since=0`, { token: key }))
      }
      if (i % 10 === 0) await new Promise(resolve => setTimeout(resolve, 5))
    }
    await Promise.all(writes)
    const final = (await call(server.url, 'GET', `${path}/content`, { token: key })).body as JsonObject
    expect(final).toEqual({ n: total })
    for (const stream of await Promise.all(opened)) {
      await stream.until(() => versions(stream).includes(total) || stream.events[0]?.id === String(total), `version ${total}`)
      const snapshot = stream.events[0]?.event === 'snapshot' ? JSON.parse(stream.events[0].data) as { version: number, content: JsonObject } : { version: 0, content: {} }
      expect(versions(stream)).toEqual(range(snapshot.version + 1, total))
      let doc = snapshot.content
      for (const change of stream.changes()) doc = applyContentOperation(doc, operationOfChange(change as unknown as ChangeEntry))
      expect(doc).toEqual(final)
    }
  })

  it('sends a comment line as heartbeat (SSE_HEARTBEAT)', async () => {
    const { key, path } = await ownerWithProject(server.url, 'sseheart')
    const stream = await open(server.url, `${path}/content/events`, { token: key })
    await stream.until(() => stream.comments >= 2, 'two heartbeats', 5000)
    expect(stream.events.map(e => e.event)).toEqual(['snapshot'])
  })

  it('takes the credential from ?access_token= (for EventSource) and never logs it', async () => {
    const { key, path } = await ownerWithProject(server.url, 'ssetoken')
    const stream = await open(server.url, `${path}/content/events?access_token=${encodeURIComponent(key)}&since=0`)
    expect(stream.status).toBe(200)
    await increment(path, key)
    await stream.until(() => versions(stream).includes(1), 'version 1')
    const refused = await open(server.url, `${path}/content/events?access_token=cdk_not_a_key`)
    expect(refused.status).toBe(401)
    stream.close()
    // Both requests logged (the stream's line comes once it is closed), however busy the machine.
    await until(() => server.output().split('\n').filter(line => line.includes('access_token=[REDACTED]')).length >= 2, 'the log lines of both requests', 20_000)
    expect(server.output()).not.toContain(key)
    expect(server.output()).not.toContain('cdk_not_a_key')
    // Only this route reads it: elsewhere a query token is no credential.
    expect((await call(server.url, 'GET', `${path}/content/changes?access_token=${encodeURIComponent(key)}`)).status).toBe(401)
  })

  it('answers bad requests with the HTTP codes of the changes API, before any stream starts', async () => {
    const { session, key, path } = await ownerWithProject(server.url, 'ssebad')
    const total = HISTORY_LIMIT + 15
    for (let i = 0; i < total; i += 15) await Promise.all(range(1, 15).map(() => increment(path, key)))
    const cases: Array<[string, Record<string, string>, string | undefined, number, string]> = [
      [`${path}/content/events?since=999`, {}, key, 400, 'INVALID_VERSION'],
      [`${path}/content/events?since=01`, {}, key, 400, 'INVALID_VERSION'],
      [`${path}/content/events?since=-1`, {}, key, 400, 'INVALID_VERSION'],
      [`${path}/content/events`, { 'last-event-id': 'abc' }, key, 400, 'INVALID_VERSION'],
      [`${path}/content/events?since=1`, {}, key, 410, 'HISTORY_EXPIRED'],
      [`${path}/content/events`, { 'last-event-id': '2' }, key, 410, 'HISTORY_EXPIRED'],
      [`${path}/content/events`, {}, undefined, 401, 'AUTH_REQUIRED'],
      [`${path}/content/events`, {}, 'cdk_wrong', 401, 'INVALID_TOKEN'],
      ['/api/@ssebad/nothere/content/events', {}, key, 404, 'PROJECT_NOT_FOUND'],
      ['/api/ssebad/demo/content/events', {}, key, 400, 'INVALID_USERNAME']
    ]
    for (const [url, headers, token, status, code] of cases) {
      const stream = await open(server.url, url, { ...(token === undefined ? {} : { token }), headers })
      expect([url, headers, stream.status]).toEqual([url, headers, status])
      expect(JSON.parse(stream.body)).toMatchObject({ code })
    }
    const stranger = await signup(server.url, 'ssestranger')
    const forbidden = await open(server.url, `${path}/content/events`, { token: stranger })
    expect(forbidden.status).toBe(403)
    // The oldest answerable `since` still works: the newest HISTORY_LIMIT entries are kept.
    const oldest = await open(server.url, `${path}/content/events?since=${total - HISTORY_LIMIT}`, { token: session })
    expect(oldest.status).toBe(200)
    await oldest.until(() => versions(oldest).includes(total), 'the kept history')
    expect(versions(oldest)).toEqual(range(total - HISTORY_LIMIT + 1, total))
    const justTooOld = await open(server.url, `${path}/content/events?since=${total - HISTORY_LIMIT - 1}`, { token: session })
    expect(justTooOld.status).toBe(410)
  })

  it('revoking the key, or logging out, ends the stream with a revoked event', async () => {
    const { session, path } = await ownerWithProject(server.url, 'sserevoke')
    const doomed = await createKey(server.url, session, { name: 'doomed', permission: 'read' })
    const byKey = await open(server.url, `${path}/content/events`, { token: doomed.key })
    const bySession = await open(server.url, `${path}/content/events`, { token: session })
    await byKey.until(() => byKey.events.length === 1, 'the snapshot')
    await bySession.until(() => bySession.events.length === 1, 'the snapshot')
    expect((await call(server.url, 'DELETE', `/api/keys/${doomed.id}`, { token: session })).status).toBe(200)
    await byKey.until(() => byKey.ended, 'the end of the key\'s stream')
    expect(byKey.events.at(-1)).toMatchObject({ event: 'revoked' })
    expect(JSON.parse(byKey.events.at(-1)?.data ?? '{}')).toMatchObject({ code: 'INVALID_TOKEN' })
    expect(bySession.ended).toBe(false)
    expect((await call(server.url, 'POST', '/api/auth/logout', { token: session })).status).toBe(200)
    await bySession.until(() => bySession.ended, 'the end of the session\'s stream')
    expect(JSON.parse(bySession.events.at(-1)?.data ?? '{}')).toMatchObject({ code: 'INVALID_TOKEN' })
  })

  it('a user holds at most SOCKET_CONNECTIONS_PER_IDENTITY open streams per node (429 past it); closed ones free their slot', async () => {
    const { key, session, path } = await ownerWithProject(server.url, 'ssecount')
    const held = await Promise.all(range(1, STREAMS_PER_USER).map(i => open(server.url, `${path}/content/events`, { token: i % 2 === 0 ? key : session })))
    expect(held.map(s => s.status)).toEqual(held.map(() => 200))
    const refused = await open(server.url, `${path}/content/events`, { token: key })
    expect([refused.status, JSON.parse(refused.body)]).toEqual([429, { code: 'TOO_MANY_CONNECTIONS', message: expect.any(String) }])
    // Another user is not affected.
    const other = await ownerWithProject(server.url, 'ssecount2')
    expect((await open(server.url, `${other.path}/content/events`, { token: other.key })).status).toBe(200)
    held[0]?.close()
    let again: SseStream | undefined
    for (let attempt = 0; attempt < 50 && again?.status !== 200; attempt++) {
      await new Promise(resolve => setTimeout(resolve, 100))
      again = await open(server.url, `${path}/content/events`, { token: key })
    }
    expect(again?.status).toBe(200)
  })

  it('deleting the project ends its streams', async () => {
    const { session, key, path } = await ownerWithProject(server.url, 'ssedelete')
    const stream = await open(server.url, `${path}/content/events`, { token: key })
    await stream.until(() => stream.events.length === 1, 'the snapshot')
    expect((await call(server.url, 'DELETE', path, { token: session })).status).toBe(200)
    await stream.until(() => stream.ended, 'the end of the stream')
    expect(JSON.parse(stream.events.at(-1)?.data ?? '{}')).toMatchObject({ code: 'PROJECT_NOT_FOUND' })
  })
})

describe('a consumer that does not read', { timeout: 120_000 }, () => {
  it('is dropped once its buffer passes SOCKET_SEND_BUFFER, and resumes with Last-Event-ID', async () => {
    const slow = await startServerProcess({ env: { CONTENT_LIMIT: '1048576', SOCKET_SEND_BUFFER: '2097152', METRICS: 'open' } })
    try {
      const { key, path } = await ownerWithProject(slow.url, 'sseslow')
      // A raw connection that sends its request and then never reads.
      const socket = connectTcp(slow.port, '127.0.0.1')
      await new Promise(resolve => socket.once('connect', resolve))
      socket.write(`GET ${path}/content/events?since=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`)
      socket.pause()
      const big = 'x'.repeat(900_000)
      let written = 0
      for (; written < 80 && !slow.output().includes('dropping a Server-Sent Events stream'); written++) {
        expect((await call(slow.url, 'POST', `${path}/content`, { token: key, body: { big, i: written } })).status).toBe(200)
      }
      expect(slow.output()).toContain('dropping a Server-Sent Events stream')
      socket.destroy()
      // A reader that catches up from where it wants gets everything, in order.
      const resumed = await openEvents(slow.url, `${path}/content/events`, { token: key, lastEventId: '0' })
      await resumed.until(() => versions(resumed).includes(written), `version ${written}`, 30_000)
      expect(versions(resumed)).toEqual(range(1, written))
      resumed.close()
      const metrics = await call(slow.url, 'GET', '/metrics')
      expect(metrics.text).toMatch(/contentd_realtime_slow_consumers_total [1-9]/)
    } finally {
      await slow.stop()
      rmSync(slow.dataDir, { recursive: true, force: true })
    }
  })
})

describe('shutdown', { timeout: 60_000 }, () => {
  it('SIGTERM ends open streams and the process exits 0 at once', async () => {
    const node = await startServerProcess()
    try {
      const { key, path } = await ownerWithProject(node.url, 'sseshutdown')
      const stream = await openEvents(node.url, `${path}/content/events`, { token: key })
      await stream.until(() => stream.events.length === 1, 'the snapshot')
      const started = Date.now()
      expect(await node.stop('SIGTERM')).toBe(0)
      expect(Date.now() - started).toBeLessThan(5000)
      await stream.until(() => stream.ended, 'the end of the stream')
    } finally {
      rmSync(node.dataDir, { recursive: true, force: true })
    }
  })
})
