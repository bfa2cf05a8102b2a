// The SSE scaffold every Server-Sent Events stream is built on (server/http/sse-response.ts),
// on a real HTTP server, read by the real `eventsource` client and by raw node:http: the head,
// heartbeats, `event: revoked` for an access event and at the credential's expiry, the cleanup
// when the client goes, the per-stream bound on what a client that does not read may hold
// (SOCKET_SEND_BUFFER, docs/design.md §13b), the unsent budget, and the per-user count.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { EventSource } from 'eventsource'
import express from 'express'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { ChangeFeed } from '../../server/feed/change-feed.js'
import { errorHandler } from '../../server/http/errors.js'
import { SseResponse, sseFrame, type SseCaller, type SseSettings } from '../../server/http/sse-response.js'
import { Metrics } from '../../server/observability/metrics.js'
import { AccessEvents } from '../../server/services/access-events.js'
import type { Identity } from '../../server/services/identity.js'
import { OpenStreams } from '../../server/services/open-streams.js'
import { UnsentBudget } from '../../server/services/unsent-budget.js'
import type { ProjectRecord, Store } from '../../server/store/types.js'

const project = { id: 'prj_sse' } as ProjectRecord
const identity: Identity = {
  user: { id: 'usr_sse', username: 'alice', passwordHash: '', createdAt: '' },
  session: null,
  key: null,
  credentialHash: 'hash_sse'
}

interface Harness {
  url: string
  settings: SseSettings
  accessEvents: AccessEvents
  /** Access listeners the streams hold on the feed right now. */
  accessListeners: () => number
  /** The scaffold of the last request, and whether its stream has ended (told by onEnd). */
  last: () => { sse: SseResponse, ended: boolean }
  /** What the logger was told (warn and above). */
  logs: string[]
  /** Released before the first write: the route waits for it (the stream's "first reads"). */
  release: () => void
  close: () => Promise<void>
}

const servers: Harness[] = []
afterEach(async () => { for (const server of servers.splice(0)) await server.close() })

async function serve (overrides: Partial<SseSettings> & { expiresAt?: string | null, hold?: boolean, perUser?: number } = {}): Promise<Harness> {
  const accessEvents = new AccessEvents()
  const feed = new ChangeFeed({ onCommit: () => {} } as unknown as Pick<Store, 'onCommit'>, accessEvents)
  let listening = 0
  const logs: string[] = []
  const logger = pino({ level: 'warn' }, new Writable({ write (chunk: Buffer, _encoding, done) { logs.push(chunk.toString()); done() } }))
  const settings: SseSettings = {
    feed: { onAccess: listener => { listening++; const stop = feed.onAccess(listener); return () => { listening--; stop() } } },
    openStreams: new OpenStreams(),
    unsentBudget: new UnsentBudget({ perUser: overrides.perUser ?? 1 << 30, perProcess: 1 << 30 }),
    heartbeatMs: 60_000,
    bufferBytes: 1 << 30,
    streamsPerUser: 10,
    logger,
    metrics: new Metrics(),
    ...overrides
  }
  const caller: SseCaller = {
    identity,
    project,
    endsAccess: event => event.kind === 'credential-revoked' && event.credentialHash === identity.credentialHash,
    reasonOf: () => new ContentdError('INVALID_TOKEN').toBody(),
    expiresAt: overrides.expiresAt ?? null,
    watchRules: null
  }
  let last: { sse: SseResponse, ended: boolean } | null = null
  let release = () => {}
  const app = express()
  app.get('/stream', async (req, res) => {
    const sse = new SseResponse(req, res, settings, caller, 'test stream')
    const mine = { sse, ended: false }
    last = mine
    sse.onEnd(() => { mine.ended = true })
    // The stream's first reads (a snapshot from the store): the test may hold them.
    if (overrides.hold === true) await new Promise<void>(resolve => { release = resolve })
    if (!sse.open()) return
    sse.out.write(sseFrame(1, 'snapshot', '{"version":1}'))
    sse.live([])
  })
  app.use(errorHandler)
  const server = http.createServer(app)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const harness: Harness = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    settings,
    accessEvents,
    accessListeners: () => listening,
    last: () => { if (!last) throw new Error('no stream yet'); return last },
    logs,
    release: () => release(),
    close: async () => {
      settings.openStreams.closeAll()
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    }
  }
  servers.push(harness)
  return harness
}

/** A raw HTTP reader of the stream: what arrived, and whether the server ended it. */
function rawStream (url: string, options: { paused?: boolean } = {}) {
  const got = { status: 0, headers: {} as http.IncomingHttpHeaders, text: '', ended: false, response: null as http.IncomingMessage | null }
  const request = http.get(url, response => {
    got.status = response.statusCode ?? 0
    got.headers = response.headers
    got.response = response
    if (options.paused === true) { response.pause(); return }
    response.setEncoding('utf8')
    response.on('data', (chunk: string) => { got.text += chunk })
    response.on('end', () => { got.ended = true })
    response.on('aborted', () => { got.ended = true })
  })
  request.on('error', () => { got.ended = true })
  return { got, abort: () => request.destroy() }
}

async function until (condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

describe('the SSE response scaffold', () => {
  it('sends the event-stream head and frames an EventSource reads (id, event, data)', async () => {
    const h = await serve()
    const raw = rawStream(`${h.url}/stream`)
    await until(() => raw.got.text.includes('\n\n'), 'the first event')
    expect(raw.got.status).toBe(200)
    expect(raw.got.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(raw.got.headers['cache-control']).toBe('no-cache, no-transform')
    expect(raw.got.headers['x-accel-buffering']).toBe('no')
    expect(raw.got.text).toBe('id: 1\nevent: snapshot\ndata: {"version":1}\n\n')
    raw.abort()

    const source = new EventSource(`${h.url}/stream`)
    try {
      const snapshot = await new Promise<MessageEvent>((resolve, reject) => {
        source.addEventListener('snapshot', resolve)
        source.onerror = () => reject(new Error('EventSource failed'))
      })
      expect(snapshot.lastEventId).toBe('1')
      expect(JSON.parse(snapshot.data as string)).toEqual({ version: 1 })
    } finally {
      source.close()
    }
  })

  it('sends a comment line every heartbeatMs', async () => {
    const h = await serve({ heartbeatMs: 40 })
    const raw = rawStream(`${h.url}/stream`)
    await until(() => raw.got.text.split(': keep-alive\n\n').length - 1 >= 3, 'three heartbeats')
    expect(raw.got.text.startsWith('id: 1\nevent: snapshot\n')).toBe(true)
    raw.abort()
  })

  it('an access event that ends the caller\'s access sends `event: revoked` and ends the stream, cleaning up', async () => {
    const h = await serve()
    const source = new EventSource(`${h.url}/stream`)
    try {
      const revoked = new Promise<MessageEvent>(resolve => source.addEventListener('revoked', resolve))
      await new Promise(resolve => source.addEventListener('snapshot', resolve))
      expect(h.settings.openStreams.count).toBe(1)
      expect(h.accessListeners()).toBe(1)
      // Someone else's credential: nothing happens.
      h.accessEvents.emit({ kind: 'credential-revoked', credentialHash: 'another' })
      expect(h.last().ended).toBe(false)
      h.accessEvents.emit({ kind: 'credential-revoked', credentialHash: identity.credentialHash })
      const event = await revoked
      expect(JSON.parse(event.data as string)).toMatchObject({ code: 'INVALID_TOKEN' })
      expect(h.last().ended).toBe(true)
      expect(h.settings.openStreams.count).toBe(0)
      expect(h.settings.unsentBudget.streams).toBe(0)
      expect(h.accessListeners()).toBe(0)
    } finally {
      source.close()
    }
  })

  it('ends with `event: revoked` INVALID_TOKEN when the credential expires', async () => {
    const h = await serve({ expiresAt: new Date(Date.now() + 300).toISOString() })
    const raw = rawStream(`${h.url}/stream`)
    await until(() => raw.got.ended, 'the end of the stream')
    const frames = raw.got.text.split('\n\n').filter(frame => frame !== '')
    expect(frames[0]).toBe('id: 1\nevent: snapshot\ndata: {"version":1}')
    expect(frames[1]?.startsWith('event: revoked\ndata: ')).toBe(true)
    expect(JSON.parse(frames[1]!.slice('event: revoked\ndata: '.length))).toMatchObject({ code: 'INVALID_TOKEN' })
    expect(h.settings.openStreams.count).toBe(0)
  })

  it('a client that goes away: the stream ends and lets go of everything it held', async () => {
    const h = await serve({ heartbeatMs: 20 })
    const raw = rawStream(`${h.url}/stream`)
    await until(() => raw.got.text.includes('keep-alive'), 'a heartbeat')
    expect(h.settings.openStreams.count).toBe(1)
    expect(h.settings.unsentBudget.streams).toBe(1)
    raw.abort()
    await until(() => h.last().ended, 'the server to see the client go')
    expect(h.settings.openStreams.count).toBe(0)
    expect(h.settings.unsentBudget.streams).toBe(0)
    expect(h.accessListeners()).toBe(0)
    // Writing afterwards is a no-op, not a write after end.
    h.last().sse.out.write(sseFrame(2, 'change', '{}'))
    h.last().sse.out.heartbeat()
  })

  it('drops a stream once a client that does not read holds more than bufferBytes; paced writes are not held to it', async () => {
    const bufferBytes = 256 * 1024
    const h = await serve({ bufferBytes })
    const raw = rawStream(`${h.url}/stream`, { paused: true })
    await until(() => h.settings.openStreams.count === 1 && raw.got.status === 200, 'the stream')
    const { sse } = h.last()
    // A paced frame (a snapshot, a catch-up page) larger than the bound is written whole.
    sse.out.writePaced(sseFrame(2, 'snapshot', JSON.stringify('x'.repeat(2 * bufferBytes))))
    expect(sse.isEnded).toBe(false)
    // Live frames pile up while the client does not read, until the bound drops the stream.
    const frame = sseFrame(3, 'change', JSON.stringify('y'.repeat(64 * 1024)))
    let written = 0
    for (; written < 2000 && !sse.isEnded; written++) {
      sse.out.write(frame)
      await new Promise(resolve => setImmediate(resolve))
    }
    expect(sse.isEnded).toBe(true)
    expect(h.last().ended).toBe(true)
    expect(h.logs.join('')).toContain('dropping a test stream that does not read what it is sent')
    expect(h.settings.openStreams.count).toBe(0)
    raw.abort()
  })

  it('the unsent budget closes the stream of a user whose streams hold too much', async () => {
    const h = await serve({ perUser: 512 * 1024 })
    const raw = rawStream(`${h.url}/stream`, { paused: true })
    await until(() => h.settings.openStreams.count === 1 && raw.got.status === 200, 'the stream')
    const { sse } = h.last()
    const frame = sseFrame(3, 'change', JSON.stringify('z'.repeat(64 * 1024)))
    for (let written = 0; written < 2000 && !sse.isEnded; written++) {
      sse.out.write(frame)
      await new Promise(resolve => setImmediate(resolve))
    }
    expect(sse.isEnded).toBe(true)
    expect(h.logs.join('')).toContain('closing a test stream: the user\'s streams hold too much unsent data')
    expect(h.settings.unsentBudget.streams).toBe(0)
    raw.abort()
  })

  it('answers 429 TOO_MANY_CONNECTIONS past streamsPerUser, holding nothing for the refused request', async () => {
    const h = await serve({ streamsPerUser: 1 })
    const first = rawStream(`${h.url}/stream`)
    await until(() => first.got.text.includes('snapshot'), 'the first stream')
    const second = await fetch(`${h.url}/stream`)
    expect(await second.json()).toMatchObject({ code: 'TOO_MANY_CONNECTIONS' })
    expect(second.status).toBe(429)
    expect(h.settings.openStreams.count).toBe(1)
    expect(h.settings.unsentBudget.streams).toBe(1)
    expect(h.accessListeners()).toBe(1)
    first.abort()
  })

  it('shutdown or revocation during the first reads: an event stream that ends, and nothing sent after it', async () => {
    const h = await serve({ hold: true })
    const raw = rawStream(`${h.url}/stream`)
    await until(() => h.settings.openStreams.count === 1, 'the stream to be counted')
    h.accessEvents.emit({ kind: 'credential-revoked', credentialHash: identity.credentialHash })
    await until(() => raw.got.ended, 'the end of the stream')
    h.release()
    expect(raw.got.status).toBe(200)
    expect(raw.got.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(raw.got.text).toMatch(/^event: revoked\ndata: \{.*"code":"INVALID_TOKEN".*\}\n\n$/)
    expect(h.settings.openStreams.count).toBe(0)

    const shut = rawStream(`${h.url}/stream`)
    await until(() => h.settings.openStreams.count === 1, 'the second stream to be counted')
    h.settings.openStreams.closeAll()
    await until(() => shut.got.ended, 'the end of the second stream')
    h.release()
    expect(shut.got.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(shut.got.text).toBe('')
  })
})
