// Request shapes a client library rarely sends, written byte by byte on a socket
// (docs/design.md §13b "Bodies", "Routing is strict", "Conditional requests"; SECURITY.md, issue
// 26): an empty body (Content-Length: 0 without Content-Type, a chunked body of no bytes, no
// body at all), a trailing slash, a declared Content-Length of 48 MiB with and without
// `Expect: 100-continue`. Each must fail without changing the content or telling a subscriber
// anything; the oversized one must be answered from its headers alone.
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { openEvents, type SseStream } from '../support/sse.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

const MIB = 1024 * 1024

interface RawAnswer {
  /** Everything the server sent, as text (interim 1xx answers included). */
  text: string
  /** The final answer's status. */
  status: number
  /** The final answer's body, parsed. */
  body: any
  /** True when the server closed the connection. */
  closed: boolean
}

/**
 * Writes `head` (and `body`) on a fresh connection and collects what comes back until the
 * final answer's body is complete (by its Content-Length) or the server closes.
 */
async function rawRequest (base: string, head: string, body = ''): Promise<RawAnswer> {
  const { hostname, port } = new URL(base)
  const socket: Socket = connect(Number(port), hostname)
  socket.on('error', () => undefined)
  let text = ''
  let closed = false
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no complete answer in 10 s; got ${JSON.stringify(text)}`)), 10_000)
    const check = () => {
      const final = finalAnswer(text)
      if (closed || (final && Buffer.byteLength(final.body) >= final.length)) { clearTimeout(timer); resolve() }
    }
    socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1'); check() })
    socket.on('close', () => { closed = true; check() })
  })
  await new Promise<void>(resolve => socket.once('connect', resolve))
  socket.write(head + body)
  await done
  // A server that means to close does so right after its answer.
  if (!closed) await Promise.race([new Promise(resolve => socket.once('close', resolve)), new Promise(resolve => setTimeout(resolve, 200))])
  closed ||= socket.destroyed || socket.readyState === 'closed'
  socket.destroy()
  const final = finalAnswer(text)
  if (!final) throw new Error(`no final answer: ${JSON.stringify(text)}`)
  return { text, status: final.status, body: final.body ? JSON.parse(final.body) : undefined, closed }
}

/** The last non-1xx answer in `text`: its status, declared length and the body so far. */
function finalAnswer (text: string): { status: number, length: number, body: string } | null {
  const pattern = /HTTP\/1\.1 (\d{3})[^\r]*\r\n((?:[^\r]+\r\n)*)\r\n/g
  let match: RegExpExecArray | null
  while ((match = pattern.exec(text)) !== null) {
    const status = Number(match[1])
    if (status < 200) continue
    const length = Number(/^content-length: *(\d+)/im.exec(match[2] ?? '')?.[1] ?? 0)
    return { status, length, body: text.slice(pattern.lastIndex) }
  }
  return null
}

const head = (method: string, path: string, headers: Record<string, string>) =>
  `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`

describe('empty bodies never become {} (docs/design.md §13b)', () => {
  let app: TestApp
  let key: string
  let path: string
  let events: SseStream
  beforeAll(async () => {
    app = await startTestApp()
    ;({ key, path } = await ownerWithProject(app.url, 'alice'))
    expect((await call(app.url, 'POST', `${path}/content`, { token: key, body: { keep: { n: 1 } } })).status).toBe(200)
    events = await openEvents(app.url, `${path}/content/events`, { token: key })
    expect(events.status).toBe(200)
  })
  afterAll(async () => { events.close(); await app.close() })

  const version = async () => {
    const r = await call(app.url, 'GET', `${path}/content`, { token: key })
    return { content: r.body as unknown, version: Number(JSON.parse(r.headers.get('etag') ?? 'null')) }
  }
  const auth = () => ({ Authorization: `Bearer ${key}` })

  const EMPTY_SHAPES: Array<[string, (target: string) => string]> = [
    ['Content-Length: 0 without Content-Type', target => head('POST', target, { ...auth(), 'Content-Length': '0' })],
    ['Content-Length: 0 with Content-Type: application/json', target => head('POST', target, { ...auth(), 'Content-Type': 'application/json', 'Content-Length': '0' })],
    ['a chunked body of no bytes', target => head('POST', target, { ...auth(), 'Transfer-Encoding': 'chunked' }) + '0\r\n\r\n'],
    ['no body at all (neither Content-Length nor Transfer-Encoding)', target => head('POST', target, auth())]
  ]

  for (const [shape, request] of EMPTY_SHAPES) {
    it(`POST …/content with ${shape} is 400 INVALID_JSON; content, version and subscribers untouched`, async () => {
      const before = await version()
      const seen = events.changes().length
      for (const op of ['', '/set', '/increment', '/batch', '/revert']) {
        const r = await rawRequest(app.url, request(`${path}/content${op}`))
        expect(r.status, `${op}: ${r.text}`).toBe(400)
        expect(r.body.code, op).toBe('INVALID_JSON')
      }
      expect(await version()).toEqual(before)
      // The next real change is the first the subscriber hears of: the refused ones sent nothing.
      expect((await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'keep.n' } })).status).toBe(200)
      await events.until(() => events.changes().length > seen, 'the real change')
      expect(events.changes().slice(seen).map(c => c.version)).toEqual([before.version + 1])
    })
  }

  it('PATCH …/content with a JSON Patch media type and a zero-length chunked body is 400 INVALID_JSON', async () => {
    const before = await version()
    const r = await rawRequest(app.url, head('PATCH', `${path}/content`, { ...auth(), 'Content-Type': 'application/json-patch+json', 'Transfer-Encoding': 'chunked' }) + '0\r\n\r\n')
    expect(r.status, r.text).toBe(400)
    expect(r.body.code).toBe('INVALID_JSON')
    expect(await version()).toEqual(before)
  })

  it('HEAD …/content honours If-Match (412) before If-None-Match (304), as GET does', async () => {
    const { version: v } = await version()
    const head412 = await call(app.url, 'HEAD', `${path}/content`, { token: key, headers: { 'if-match': `"${v + 1}"`, 'if-none-match': `"${v}"` } })
    expect(head412.status).toBe(412)
    const head304 = await call(app.url, 'HEAD', `${path}/content`, { token: key, headers: { 'if-match': `"${v}"`, 'if-none-match': `"${v}"` } })
    expect(head304.status).toBe(304)
    expect(head304.headers.get('etag')).toBe(`"${v}"`)
  })

  it('POST …/content/ (a trailing slash) with an operation body is 404 and replaces nothing', async () => {
    const before = await version()
    const body = '{"path":"keep.n","value":5}'
    const r = await rawRequest(app.url, head('POST', `${path}/content/`, { ...auth(), 'Content-Type': 'application/json', 'Content-Length': String(body.length) }), body)
    expect(r.status, r.text).toBe(404)
    expect(r.body.code).toBe('NOT_FOUND')
    expect(await version()).toEqual(before)
  })
})

describe('a declared Content-Length over BODY_LIMIT is answered from the headers (docs/design.md §13b)', () => {
  // The built server: server/index.ts wires Expect: 100-continue.
  let server: ServerProcess
  let key: string
  let path: string
  beforeAll(async () => {
    server = await startServerProcess({ env: { LOG_LEVEL: 'silent' } })
    ;({ key, path } = await ownerWithProject(server.url, 'alice'))
  })
  afterAll(async () => { await server.stop() })

  const declared = String(48 * MIB)
  const version = async () => (await call(server.url, 'GET', `${path}/content`, { token: key })).headers.get('etag')

  it('Expect: 100-continue with 48 MiB declared gets 413 and no 100 Continue, the body never sent', async () => {
    const before = await version()
    const r = await rawRequest(server.url, head('POST', `${path}/content`, { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': declared, Expect: '100-continue' }))
    expect(r.text).not.toMatch(/^HTTP\/1\.1 100/)
    expect(r.status, r.text).toBe(413)
    expect(r.body.code).toBe('BODY_TOO_LARGE')
    // The body was not asked for, so the connection cannot carry another request.
    expect(r.closed).toBe(true)
    expect(await version()).toBe(before)
  })

  it('48 MiB declared without Expect: the 413 comes before any byte of the body is sent', async () => {
    const r = await rawRequest(server.url, head('POST', `${path}/content/set`, { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': declared }))
    expect(r.status, r.text).toBe(413)
    expect(r.body.code).toBe('BODY_TOO_LARGE')
    expect(r.closed).toBe(true)
  })

  it('Expect: 100-continue within the limit still gets 100 Continue and succeeds', async () => {
    const body = '{"path":"n","value":1}'
    const { hostname, port } = new URL(server.url)
    const socket = connect(Number(port), hostname)
    let text = ''
    socket.on('data', (chunk: Buffer) => { text += chunk.toString() })
    await new Promise<void>(resolve => socket.once('connect', resolve))
    socket.write(head('POST', `${path}/content/set`, { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': String(body.length), Expect: '100-continue' }))
    const deadline = Date.now() + 5000
    while (!text.includes('100 Continue') && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
    expect(text).toMatch(/^HTTP\/1\.1 100 Continue/)
    socket.write(body)
    while (!/HTTP\/1\.1 200/.test(text) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
    socket.destroy()
    expect(text).toMatch(/HTTP\/1\.1 200 OK/)
  })
})
