// Live SSE frames shared by many streams go straight to each stream's socket as one
// pre-framed HTTP chunk (server/http/sse-chunk.ts), which relies on how Node's http module
// writes a chunked response. These tests fail when that shortcut stops engaging (a Node
// upgrade moved what it reads), when the bytes a client receives differ from res.write's,
// and when a direct write escapes the per-stream bound or the unsent budget.
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { EventSource } from 'eventsource'
import express, { type Response } from 'express'
import { pino } from 'pino'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { chunkOf, directSocketOf, noteDirectBailout, SharedFrame, stillDirect, type DirectWriteBailout } from '../../server/http/sse-chunk.js'
import { SseResponse, SseWriter, sseFrame, type SseCaller, type SseSettings } from '../../server/http/sse-response.js'
import { Metrics } from '../../server/observability/metrics.js'
import type { Identity } from '../../server/services/identity.js'
import { OpenStreams } from '../../server/services/open-streams.js'
import { UnsentBudget } from '../../server/services/unsent-budget.js'
import type { ProjectRecord } from '../../server/store/types.js'

const identity: Identity = {
  user: { id: 'usr_direct', username: 'alice', passwordHash: '', createdAt: '' },
  session: null,
  key: null,
  credentialHash: 'hash_direct'
}
const caller: SseCaller = {
  identity,
  project: { id: 'prj_direct' } as ProjectRecord,
  endsAccess: () => false,
  reasonOf: () => new ContentdError('INVALID_TOKEN').toBody(),
  expiresAt: null,
  watchRules: null
}

interface Server {
  url: string
  port: number
  settings: SseSettings
  logs: string[]
  /** Every open stream's scaffold, in the order they opened. */
  streams: SseResponse[]
  /** The shared frames its script made. */
  made: SharedFrame[]
  close: () => Promise<void>
}

const servers: Server[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const server of servers.splice(0)) await server.close()
})

/**
 * A real HTTP server whose route opens an SSE stream through the scaffold. `direct: false`
 * makes its writer send shared frames with res.write (the comparison); `script` writes
 * what the stream sends after opening.
 */
async function serve (overrides: Partial<SseSettings> & { perUser?: number, direct?: boolean, script?: (sse: SseResponse, made: SharedFrame[]) => void | Promise<void> } = {}): Promise<Server> {
  const logs: string[] = []
  const logger = pino({ level: 'warn' }, new Writable({ write (chunk: Buffer, _encoding, done) { logs.push(chunk.toString()); done() } }))
  const settings: SseSettings = {
    feed: { onAccess: () => () => {} },
    openStreams: new OpenStreams(),
    unsentBudget: new UnsentBudget({ perUser: overrides.perUser ?? 1 << 30, perProcess: 1 << 30 }),
    heartbeatMs: 60_000,
    bufferBytes: 1 << 30,
    streamsPerUser: 100,
    logger,
    metrics: new Metrics(),
    ...overrides
  }
  const streams: SseResponse[] = []
  const made: SharedFrame[] = []
  const app = express()
  app.get('/stream', (req, res) => {
    const sse = new SseResponse(req, res, settings, caller, 'test stream', options => new SseWriter({ ...options, direct: overrides.direct ?? true }))
    if (!sse.open()) return
    streams.push(sse)
    sse.out.writePaced(sseFrame(1, 'snapshot', '{"version":1}'))
    sse.live([])
    void overrides.script?.(sse, made)
  })
  const server = http.createServer(app)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const handle: Server = {
    url: `http://127.0.0.1:${port}`,
    port,
    settings,
    logs,
    streams,
    made,
    close: async () => {
      settings.openStreams.closeAll()
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    }
  }
  servers.push(handle)
  return handle
}

async function until (condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

const tick = () => new Promise(resolve => setImmediate(resolve))

/** Counts the server's socket writes of exactly this Buffer (the in-process server's sockets). */
function countSocketWrites (): { of: (buffer: Buffer) => number } {
  const written: unknown[] = []
  const original = net.Socket.prototype.write
  vi.spyOn(net.Socket.prototype, 'write').mockImplementation(function (this: net.Socket, ...args: Parameters<net.Socket['write']>) {
    written.push(args[0])
    return original.apply(this, args)
  })
  return { of: buffer => written.filter(chunk => chunk === buffer).length }
}

/** A raw HTTP/1.1 client: every byte of the response, head and chunked body as sent. */
function rawBytes (port: number) {
  const got = { bytes: Buffer.alloc(0), ended: false }
  const socket = net.connect(port, '127.0.0.1', () => {
    socket.write('GET /stream HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n')
  })
  socket.on('data', (chunk: Buffer) => { got.bytes = Buffer.concat([got.bytes, chunk]) })
  socket.on('end', () => { got.ended = true })
  socket.on('close', () => { got.ended = true })
  return { got, socket, body: () => got.bytes.subarray(got.bytes.indexOf('\r\n\r\n') + 4), destroy: () => socket.destroy() }
}

/** The chunked body decoded (sizes checked against the data). */
function dechunk (body: Buffer): { text: string, chunks: number, terminated: boolean } {
  let at = 0
  let chunks = 0
  const parts: Buffer[] = []
  while (at < body.length) {
    const line = body.indexOf('\r\n', at)
    const size = Number.parseInt(body.subarray(at, line).toString('latin1'), 16)
    if (size === 0) return { text: Buffer.concat(parts).toString('utf8'), chunks, terminated: true }
    parts.push(body.subarray(line + 2, line + 2 + size))
    expect(body.subarray(line + 2 + size, line + 4 + size).toString('latin1')).toBe('\r\n')
    at = line + 4 + size
    chunks++
  }
  return { text: Buffer.concat(parts).toString('utf8'), chunks, terminated: false }
}

const shared = (version: number, data: string) => new SharedFrame(Buffer.from(sseFrame(version, 'change', data)))

describe('SSE direct writes of shared frames', () => {
  it('engages on a real server: each stream\'s socket writes the one pre-framed chunk, and EventSource clients read every event', async () => {
    const STREAMS = 5
    const h = await serve()
    const sources = Array.from({ length: STREAMS }, () => new EventSource(`${h.url}/stream`))
    try {
      const received: string[][] = sources.map(() => [])
      sources.forEach((source, i) => source.addEventListener('change', event => { received[i]!.push(`${event.lastEventId} ${event.data as string}`) }))
      await Promise.all(sources.map(source => new Promise(resolve => source.addEventListener('snapshot', resolve))))
      expect(h.streams).toHaveLength(STREAMS)
      const sockets = countSocketWrites()
      const responseWrites = vi.spyOn(http.ServerResponse.prototype, 'write')
      const frames = [shared(2, '{"a":"é ✓"}'), shared(3, JSON.stringify({ big: 'x'.repeat(70_000) }))]
      for (const frame of frames) {
        for (const sse of h.streams) sse.out.write(frame)
        await tick()
      }
      await until(() => received.every(events => events.length === frames.length), 'every event at every client')
      for (const frame of frames) expect(sockets.of(frame.chunk)).toBe(STREAMS)
      // Not one shared frame went through res.write.
      expect(responseWrites.mock.calls.filter(([chunk]) => frames.some(frame => chunk === frame.frame))).toHaveLength(0)
      for (const events of received) expect(events).toEqual(['2 {"a":"é ✓"}', `3 ${JSON.stringify({ big: 'x'.repeat(70_000) })}`])
      expect(await h.settings.metrics!.registry.metrics()).not.toContain('contentd_sse_direct_write_bailouts_total{')
    } finally {
      for (const source of sources) source.close()
    }
  })

  it('a client receives byte for byte what res.write would have sent (chunked body, interleaved with res.write frames)', async () => {
    const big = JSON.stringify({ text: 'ü'.repeat(40_000) })
    const script = async (sse: SseResponse, made: SharedFrame[]) => {
      const mk = (version: number, data: string) => { const frame = shared(version, data); made.push(frame); return frame }
      // In the same turn as the snapshot's res.write (its socket corked), then turns apart.
      sse.out.write(mk(2, '{"a":"é ✓"}'))
      sse.out.heartbeat()
      await tick()
      sse.out.write(mk(3, big))
      await tick()
      sse.out.write(sseFrame(4, 'change', '{"plain":true}'))
      sse.out.write(mk(5, '{}'))
      await tick()
      sse.out.revoke(new ContentdError('INVALID_TOKEN').toBody())
    }
    const sockets = countSocketWrites()
    const direct = await serve({ script })
    const plain = await serve({ script, direct: false })
    const a = rawBytes(direct.port)
    const b = rawBytes(plain.port)
    // revoke ends the response (the last chunk); the keep-alive connection stays open.
    const ended = (raw: ReturnType<typeof rawBytes>) => raw.got.bytes.subarray(-7).toString('latin1') === '\r\n0\r\n\r\n'
    await until(() => ended(a) && ended(b), 'both responses to end')
    expect(a.body().length).toBeGreaterThan(80_000)
    expect(a.body().equals(b.body())).toBe(true)
    const decoded = dechunk(a.body())
    expect(decoded.terminated).toBe(true)
    expect(decoded.text).toBe([
      sseFrame(1, 'snapshot', '{"version":1}'),
      sseFrame(2, 'change', '{"a":"é ✓"}'),
      ': keep-alive\n\n',
      sseFrame(3, 'change', big),
      sseFrame(4, 'change', '{"plain":true}'),
      sseFrame(5, 'change', '{}'),
      `event: revoked\ndata: ${JSON.stringify(new ContentdError('INVALID_TOKEN').toBody())}\n\n`
    ].join(''))
    // The shortcut engaged on the first server only: each shared frame one socket write of its chunk.
    expect(direct.made).toHaveLength(3)
    for (const frame of direct.made) expect(sockets.of(frame.chunk)).toBe(1)
    for (const frame of plain.made) expect(sockets.of(frame.chunk)).toBe(0)
    a.destroy()
    b.destroy()
  })

  /**
   * A client that has stopped reading, sent 64 KiB direct frames until its stream ends (at
   * most 2,000): the server's harness, and whether the frames went straight to the socket.
   */
  async function writeToPausedClient (h: Awaited<ReturnType<typeof serve>>): Promise<{ wroteDirectly: boolean, ended: boolean }> {
    const raw = rawBytes(h.port)
    await until(() => h.streams.length === 1, 'the stream')
    const sse = h.streams[0]!
    const sockets = countSocketWrites()
    const frame = shared(2, JSON.stringify('y'.repeat(64 * 1024)))
    raw.socket.pause()
    for (let written = 0; written < 2000 && !sse.isEnded; written++) {
      sse.out.write(frame)
      await tick()
    }
    raw.destroy()
    return { wroteDirectly: sockets.of(frame.chunk) > 0, ended: sse.isEnded }
  }

  it('a client that does not read: direct writes are held to the per-stream bound', async () => {
    const h = await serve({ bufferBytes: 256 * 1024 })
    expect(await writeToPausedClient(h)).toEqual({ wroteDirectly: true, ended: true })
    expect(h.logs.join('')).toContain('dropping a test stream that does not read what it is sent')
    expect(h.settings.openStreams.count).toBe(0)
  })

  it('a client that does not read: direct writes count in the unsent budget', async () => {
    const h = await serve({ perUser: 512 * 1024 })
    expect(await writeToPausedClient(h)).toEqual({ wroteDirectly: true, ended: true })
    expect(h.logs.join('')).toContain('closing a test stream: the user\'s streams hold too much unsent data')
    expect(h.settings.unsentBudget.streams).toBe(0)
  })

  it('a stream whose client reads reports to the budget only while it holds unsent data', async () => {
    const h = await serve()
    const source = new EventSource(`${h.url}/stream`)
    try {
      let heard = 0
      source.addEventListener('change', () => { heard++ })
      await new Promise(resolve => source.addEventListener('snapshot', resolve))
      await new Promise(resolve => setTimeout(resolve, 50))
      const noted = vi.spyOn(h.settings.unsentBudget, 'noted')
      for (let version = 2; version < 12; version++) {
        h.streams[0]!.out.write(shared(version, '{"small":true}'))
        await new Promise(resolve => setTimeout(resolve, 5))
      }
      await until(() => heard === 10, 'ten events')
      // The first may report (the snapshot's res.write was last reported with data unsent).
      expect(noted.mock.calls.length).toBeLessThanOrEqual(1)
    } finally {
      source.close()
    }
  })
})

describe('directSocketOf: when the shortcut applies', () => {
  const socket = () => ({ writable: true, destroyed: false, writableLength: 0, _httpMessage: null as unknown })
  function response (overrides: Record<string, unknown> = {}, socketOverrides: Record<string, unknown> = {}) {
    const s = { ...socket(), ...socketOverrides }
    const res = { socket: s, writableEnded: false, destroyed: false, chunkedEncoding: true, _headerSent: true, writableLength: 0, ...overrides }
    if (!('_httpMessage' in socketOverrides)) s._httpMessage = res
    return res as unknown as Response
  }

  it('only for a chunked response whose head went and that holds nothing besides its socket\'s buffer', () => {
    const bailouts: DirectWriteBailout[] = []
    const bailOut = (reason: DirectWriteBailout) => { bailouts.push(reason) }
    const ok = response()
    expect(directSocketOf(ok, bailOut)).toBe(ok.socket)
    // The socket holds data (a client reading slowly): still the same bytes, after it.
    expect(directSocketOf(response({ writableLength: 100 }, { writableLength: 100 }), bailOut)).not.toBeNull()
    expect(directSocketOf(response({ socket: null }), bailOut)).toBeNull()
    expect(directSocketOf(response({ writableEnded: true }), bailOut)).toBeNull()
    expect(directSocketOf(response({ destroyed: true }), bailOut)).toBeNull()
    expect(directSocketOf(response({}, { destroyed: true }), bailOut)).toBeNull()
    expect(directSocketOf(response({}, { writable: false }), bailOut)).toBeNull()
    expect(directSocketOf(response({ chunkedEncoding: false }), bailOut)).toBeNull()
    expect(directSocketOf(response({ _headerSent: false }), bailOut)).toBeNull()
    // Data waiting in the response itself goes first: res.write.
    expect(directSocketOf(response({ writableLength: 10 }), bailOut)).toBeNull()
    // Another response owns the socket (pipelining).
    expect(directSocketOf(response({}, { _httpMessage: {} }), bailOut)).toBeNull()
    expect(bailouts).toEqual([])
  })

  it('stillDirect: the same socket as long as the response owns it, it is writable and the response has not ended', () => {
    const res = response() as unknown as { socket: { writable: boolean, _httpMessage: unknown }, writableEnded: boolean }
    const sock = res.socket as unknown as net.Socket
    expect(stillDirect(res as unknown as Response, sock)).toBe(true)
    res.writableEnded = true
    expect(stillDirect(res as unknown as Response, sock)).toBe(false)
    res.writableEnded = false
    res.socket.writable = false
    expect(stillDirect(res as unknown as Response, sock)).toBe(false)
    res.socket.writable = true
    res.socket._httpMessage = null
    expect(stillDirect(res as unknown as Response, sock)).toBe(false)
  })

  it('tells why when a Node internal it reads is not there', () => {
    const bailouts: DirectWriteBailout[] = []
    const bailOut = (reason: DirectWriteBailout) => { bailouts.push(reason) }
    expect(directSocketOf(response({ chunkedEncoding: undefined }), bailOut)).toBeNull()
    expect(directSocketOf(response({ _headerSent: undefined }), bailOut)).toBeNull()
    expect(directSocketOf(response({}, { _httpMessage: undefined }), bailOut)).toBeNull()
    expect(bailouts).toEqual(['res.chunkedEncoding', 'res._headerSent', 'socket._httpMessage'])
  })

  it('a bailout is counted each time and logged once per reason', async () => {
    const metrics = new Metrics()
    const warn = vi.fn()
    noteDirectBailout('socket._httpMessage', { warn } as never, metrics)
    noteDirectBailout('socket._httpMessage', { warn } as never, metrics)
    expect(await metrics.registry.metrics()).toContain('contentd_sse_direct_write_bailouts_total{reason="socket._httpMessage"} 2')
    expect(warn).toHaveBeenCalledTimes(1)
  })

  it('chunkOf frames as Node does: hex size, CRLF, data, CRLF', () => {
    expect(chunkOf(Buffer.from('é')).toString('latin1')).toBe(`2\r\n${Buffer.from('é').toString('latin1')}\r\n`)
    expect(chunkOf(Buffer.alloc(300, 'a')).subarray(0, 5).toString()).toBe('12c\r\n')
    expect(chunkOf(Buffer.alloc(0))).toHaveLength(0)
  })
})
