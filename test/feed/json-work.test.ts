// Issue 35's goal, counted: for one `set` of a ~96 KB value with 2 Server-Sent Events streams,
// 1 Socket.IO subscriber and 1 webhook listening, the server parses the value's JSON once (the
// request body) and serializes it at most once (the write, whose text every consumer then
// sends): not at all when the body is what JSON.stringify writes, as clients send it, since
// the value's JSON is then found in the body's own text (shared/json-text.ts); once when the
// body is written otherwise (indented, here).
//
// How it counts: JSON.parse and JSON.stringify are wrapped for the time of the write; a call
// counts when its text (parse's input, stringify's output) holds the value's marker, and when
// the server made it: calls made by the clients in this process (socket.io-client decoding
// the event, this file) are told apart by their stack. Printed, so the numbers can be quoted
// (BENCHMARKS.md "JSON work per write").
//
// The write is a steady-state one: the document already holds more than the write adds, so
// the store's checkpoint policy (history-policy.ts: a checkpoint once the entries since the
// last one outweigh it) does not rewrite the whole document on this write. A write that does
// make a checkpoint serializes the document once more; the second test counts that case.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Socket } from 'socket.io-client'
import { call, ownerWithProject } from '../support/http.js'
import { openEvents, type SseStream } from '../support/sse.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { until } from '../support/wait.js'
import { connect, Recorder, subscribe } from '../realtime/client.js'
import { startReceiver, type Receiver } from '../webhooks/receiver.js'

const MARKER = 'json-work-marker-7f3a'
const CLIENT_FRAMES = ['socket.io-client', 'engine.io-client', '/test/']

interface Counts { parses: number, serializations: number, clientParses: number }

/** Counts the server's JSON work on texts holding MARKER until the returned stop is called. */
function countJsonWork (): { counts: Counts, stop: () => void } {
  const counts: Counts = { parses: 0, serializations: 0, clientParses: 0 }
  const { parse, stringify } = JSON
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 100
  const byClient = () => {
    const stack = new Error().stack ?? ''
    // The first frame is this file's wrapper: look past it.
    const frames = stack.split('\n').slice(3).join('\n')
    return CLIENT_FRAMES.some(frame => frames.includes(frame))
  }
  JSON.parse = function (text: string, reviver?: Parameters<typeof parse>[1]) {
    if (typeof text === 'string' && text.includes(MARKER)) {
      if (byClient()) counts.clientParses++
      else counts.parses++
    }
    return parse(text, reviver)
  } as typeof JSON.parse
  JSON.stringify = function (value: unknown, replacer?: Parameters<typeof stringify>[1], space?: Parameters<typeof stringify>[2]) {
    const text = stringify(value, replacer as never, space)
    if (typeof text === 'string' && text.includes(MARKER) && !byClient()) counts.serializations++
    return text
  } as typeof JSON.stringify
  return {
    counts,
    stop: () => {
      JSON.parse = parse
      JSON.stringify = stringify
      Error.stackTraceLimit = limit
    }
  }
}

/** POSTs a `set` whose body is already JSON text (the client's serialization is not counted). */
async function postSet (base: string, owner: { path: string, key: string }, body: string): Promise<void> {
  const response = await fetch(`${base}${owner.path}/content/set`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
    body
  })
  expect(response.status).toBe(200)
  await response.arrayBuffer()
}

describe('JSON work per write (issue 35)', () => {
  let app: TestApp
  let receiver: Receiver
  const streams: SseStream[] = []
  let socket: Socket | undefined

  beforeAll(async () => {
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { realtime: true, webhooks: true })
    receiver = await startReceiver()
  })
  afterAll(async () => {
    for (const s of streams) s.close()
    socket?.disconnect()
    await receiver?.stop()
    await app?.close()
  })

  it('a 96 KB set with 2 SSE streams, 1 Socket.IO subscriber and 1 webhook: parsed once, its JSON found in the body', async () => {
    const owner = await ownerWithProject(app.url, 'counted')
    const hook = await call(app.url, 'POST', `${owner.path}/webhooks`, { token: owner.session, body: { url: receiver.url } })
    expect(hook.status, hook.text).toBe(201)
    // Steady state (see the top): a checkpoint of a document larger than the write.
    const base = await call(app.url, 'POST', `${owner.path}/content/set`, { token: owner.key, body: { path: 'base', value: 'b'.repeat(256 * 1024) } })
    expect(base.status).toBe(200)
    for (let i = 0; i < 2; i++) {
      const stream = await openEvents(app.url, `${owner.path}/content/events`, { token: owner.key })
      expect(stream.status).toBe(200)
      await stream.until(() => stream.events.some(e => e.event === 'snapshot'), 'the snapshot')
      streams.push(stream)
    }
    socket = await connect(app.url, owner.key)
    const recorder = new Recorder(socket)
    expect(await subscribe(socket, '@counted/demo')).toMatchObject({ ok: true, version: 1 })

    // The body as the client sends it, made before counting starts.
    const value = { note: MARKER, text: 'x'.repeat(96 * 1024), list: [1, 2, 3] }
    const body = JSON.stringify({ path: 'big', value })
    const { counts, stop } = countJsonWork()
    try {
      await postSet(app.url, owner, body)
      await recorder.untilVersion(2)
      for (const stream of streams) await stream.until(() => stream.events.some(e => e.event === 'change' && e.data.includes(MARKER)), 'the change on SSE')
      await until(() => receiver.received.some(r => r.body.includes(MARKER)), 'the webhook delivery')
    } finally {
      stop()
    }
    // Every consumer got the same entry, value and all.
    const sent = receiver.received.find(r => r.body.includes(MARKER))?.body as string
    for (const stream of streams) expect(stream.events.find(e => e.event === 'change')?.data).toBe(sent)
    expect(recorder.changes[0]).toEqual(JSON.parse(sent))
    expect(recorder.changes[0]).toMatchObject({ project: '@counted/demo', version: 2, op: 'set', path: 'big', value })

    console.log(`JSON work per write (96 KB set; 2 SSE, 1 Socket.IO, 1 webhook): ${counts.parses} parse / ${counts.serializations} serialization of the value on the server (${counts.clientParses} parse by the in-process Socket.IO client, not counted)`)
    // The counter sees the client's own decoding: it can tell the two apart.
    expect(counts.clientParses).toBeGreaterThanOrEqual(1)
    expect({ parses: counts.parses, serializations: counts.serializations }).toEqual({ parses: 1, serializations: 0 })
  })
  it('a body written otherwise than JSON.stringify writes it (indented): the value serialized once', async () => {
    const owner = await ownerWithProject(app.url, 'indented')
    await call(app.url, 'POST', `${owner.path}/content/set`, { token: owner.key, body: { path: 'base', value: 'b'.repeat(256 * 1024) } })
    const body = JSON.stringify({ path: 'big', value: { note: MARKER, text: 'x'.repeat(96 * 1024), list: [1, 2, 3] } }, null, 1)
    const { counts, stop } = countJsonWork()
    try {
      await postSet(app.url, owner, body)
    } finally {
      stop()
    }
    console.log(`JSON work per write of an indented body: ${counts.parses} parse / ${counts.serializations} serialization`)
    expect({ parses: counts.parses, serializations: counts.serializations }).toEqual({ parses: 1, serializations: 1 })
  })
  it('a write that makes a checkpoint serializes the document once more (the store, not the consumers)', async () => {
    const owner = await ownerWithProject(app.url, 'checkpointed')
    const stream = await openEvents(app.url, `${owner.path}/content/events`, { token: owner.key })
    streams.push(stream)
    await stream.until(() => stream.events.some(e => e.event === 'snapshot'), 'the snapshot')
    // 96 KB into an empty document: the entry outweighs the last checkpoint, so one is due.
    const body = JSON.stringify({ path: 'big', value: { note: MARKER, text: 'x'.repeat(96 * 1024) } })
    const { counts, stop } = countJsonWork()
    try {
      await postSet(app.url, owner, body)
      await stream.until(() => stream.events.some(e => e.event === 'change' && e.data.includes(MARKER)), 'the change on SSE')
    } finally {
      stop()
    }
    console.log(`JSON work per write that makes a checkpoint: ${counts.parses} parse / ${counts.serializations} serializations (the document for the checkpoint; the value's JSON is the body's)`)
    expect({ parses: counts.parses, serializations: counts.serializations }).toEqual({ parses: 1, serializations: 1 })
  })
})
