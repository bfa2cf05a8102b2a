// Issue 30's third performance goal, counted: a change that does not alter a live query's
// result costs no serialization of a `query` event for that query's subscribers, and a change
// that alters it is serialized once for all of them (server/queries/query-wire.ts), however
// many subscribers and transports share the result, even when their `prev`s differ.
//
// How it counts: JSON.stringify is wrapped while the changes are made; a call counts when its
// text holds a serialized event item (`"key":"qm-…`, the children's keys all start so). The
// hub's own serializations of a child's value (to tell whether it changed) hold no `"key":`,
// and the clients in this process only parse what they receive, so every call counted is the
// server encoding a `query` event. Socket.IO's own encoder (JSON.stringify of the packet) would
// count too, once per socket: the count would show it.
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { QueryEventPayload } from '../../shared/api/queries.js'
import { call, ownerWithProject } from '../support/http.js'
import { openEvents, type SseStream } from '../support/sse.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { until } from '../support/wait.js'
import { connect } from '../realtime/client.js'
import { socketQueryPayload, sseQueryData } from '../../server/queries/query-wire.js'

const ITEM = '"key":"qm-'

/** Counts the server's serializations of `query` event items until the returned stop is called. */
function countEventEncodings (): { count: () => number, stop: () => void } {
  let count = 0
  const { stringify } = JSON
  JSON.stringify = function (value: unknown, replacer?: Parameters<typeof stringify>[1], space?: Parameters<typeof stringify>[2]) {
    const text = stringify(value, replacer as never, space)
    if (typeof text === 'string' && text.includes(ITEM)) count++
    return text
  } as typeof JSON.stringify
  return { count: () => count, stop: () => { JSON.stringify = stringify } }
}

const TOP3 = { orderBy: 'score', direction: 'desc', limit: 3 }
const BOTTOM2 = { orderBy: 'score', direction: 'asc', limit: 2 }

describe('serializations of live query events (issue 30)', () => {
  let app: TestApp
  const sockets: Socket[] = []
  const streams: SseStream[] = []

  beforeAll(async () => { app = await startTestApp({}, { realtime: true }) })
  afterAll(async () => {
    for (const s of sockets) s.disconnect()
    for (const s of streams) s.close()
    await app?.close()
  })

  async function subscriber (key: string, query: typeof TOP3) {
    const socket = await connect(app.url, key)
    sockets.push(socket)
    const events: QueryEventPayload[] = []
    socket.on('query', (e: QueryEventPayload) => events.push(e))
    const ack = await socket.timeout(10_000).emitWithAck('subscribe', { project: '@qser/demo', path: 'board', query }) as { ok: boolean, version: number }
    expect(ack.ok).toBe(true)
    return { events, ack }
  }

  it('changes that do not alter a result encode nothing; one that does is encoded once for every subscriber', async () => {
    const { key, path } = await ownerWithProject(app.url, 'qser')
    const write = async (op: string, body: unknown) => {
      const r = await call(app.url, 'POST', `${path}/content/${op}`, { token: key, body })
      expect(r.status, r.text).toBe(200)
      return Number(JSON.parse(r.headers.get('etag') as string))
    }
    const board = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`qm-${i}`, { score: i }]))
    await write('set', { path: 'board', value: board })
    await write('set', { path: 'other', value: 0 })
    // Three Socket.IO subscribers and one SSE stream share the top three; one socket watches the bottom two.
    const top = [await subscriber(key, TOP3), await subscriber(key, TOP3), await subscriber(key, TOP3)]
    const bottom = await subscriber(key, BOTTOM2)
    const stream = await openEvents(app.url, `${path}/content/events?path=board&orderBy=score&direction=desc&limit=3`, { token: key })
    streams.push(stream)
    expect(stream.status).toBe(200)
    await stream.until(() => stream.events.some(e => e.event === 'snapshot'), 'the snapshot')
    const queryEvents = () => stream.events.filter(e => e.event === 'query')

    const counter = countEventEncodings()
    let quiet: number
    let altering: number
    try {
      // 30 changes that alter neither result: children between the two windows move among
      // themselves, one gets a new member, a child in the top three is set to what it holds,
      // and a value outside the queried path changes.
      for (let i = 0; i < 24; i++) await write('increment', { path: `board.qm-${5 + (i % 10)}.score`, value: 0.25 })
      await write('set', { path: 'board.qm-9.name', value: 'nine' })
      await write('set', { path: 'board.qm-19.score', value: 19 })
      for (let i = 0; i < 4; i++) await write('increment', { path: 'other' })
      // The server sends a change's events before it answers the write; wait a little longer anyway.
      await new Promise(resolve => setTimeout(resolve, 200))
      quiet = counter.count()
      // Into first place: alters the top three (not the bottom two).
      altering = await write('increment', { path: 'board.qm-10.score', value: 100 })
      for (const { events } of top) await until(() => events.length >= 1, 'the query event on Socket.IO')
      await stream.until(() => queryEvents().length >= 1, 'the query event on SSE')
    } finally {
      counter.stop()
    }
    // Printed for the bench's goals table (bench/scenarios/query-encodings.mjs reads this line).
    console.log(`Live query event serializations (3 Socket.IO subscribers and 1 SSE stream of one result): ${quiet} for 30 changes that alter no result / ${counter.count()} for 1 that alters it`)
    expect(quiet).toBe(0)
    expect(counter.count()).toBe(1)
    const items = [{ key: 'qm-10', value: { score: 110.5 } }, { key: 'qm-19' }, { key: 'qm-18' }]
    for (const { events, ack } of top) expect(events).toEqual([{ project: '@qser/demo', subscription: 'board', version: altering, prev: ack.version, items }])
    expect(queryEvents().map(e => JSON.parse(e.data) as unknown)).toEqual([{ version: altering, items }])
    expect(bottom.events).toEqual([])
  })

  it('subscribers of one result with different prevs: the items are still serialized once per event', async () => {
    const { key, path } = await ownerWithProject(app.url, 'qprev', 'demo')
    const write = async (op: string, body: unknown) => {
      const r = await call(app.url, 'POST', `${path}/content/${op}`, { token: key, body })
      expect(r.status, r.text).toBe(200)
      return Number(JSON.parse(r.headers.get('etag') as string))
    }
    await write('set', { path: 'board', value: { 'qm-a': { score: 1 }, 'qm-b': { score: 2 }, 'qm-c': { score: 3 }, 'qm-d': { score: 4 } } })
    const subscribe = async () => {
      const socket = await connect(app.url, key)
      sockets.push(socket)
      const events: QueryEventPayload[] = []
      socket.on('query', (e: QueryEventPayload) => events.push(e))
      const ack = await socket.timeout(10_000).emitWithAck('subscribe', { project: '@qprev/demo', path: 'board', query: TOP3 }) as { ok: boolean, version: number }
      expect(ack.ok).toBe(true)
      return { events, ack }
    }
    const early = [await subscribe(), await subscribe()]
    // A change the result does not see moves the version on: a later subscriber's prev differs.
    await write('set', { path: 'other', value: 1 })
    const late = await subscribe()
    expect(late.ack.version).toBe(early[0]!.ack.version + 1)

    const counter = countEventEncodings()
    let version: number
    try {
      version = await write('increment', { path: 'board.qm-a.score', value: 10 })
      for (const { events } of [...early, late]) await until(() => events.length >= 1, 'the query event')
    } finally {
      counter.stop()
    }
    expect(counter.count()).toBe(1)
    const items = [{ key: 'qm-a', value: { score: 11 } }, { key: 'qm-d' }, { key: 'qm-c' }]
    for (const { events, ack } of [...early, late]) expect(events).toEqual([{ project: '@qprev/demo', subscription: 'board', version, prev: ack.version, items }])
  })

  it('the shared encodings are the texts JSON.stringify makes of each payload', () => {
    const event = { version: 7, items: [{ key: 'a"\u2028', value: { s: 'é\n', n: [1, null] } }, { key: '0' }] }
    for (const prev of [6, 3]) {
      const payload = { project: '@o/p', subscription: 'a.b "c"', version: 7, prev, items: event.items }
      expect(socketQueryPayload(event, '@o/p', 'a.b "c"', prev)).toBe(JSON.stringify(payload))
    }
    expect(sseQueryData(event)).toBe(JSON.stringify({ version: 7, items: event.items }))
  })
})
