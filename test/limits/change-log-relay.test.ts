// Issue 26 finding 3, by structure rather than by time: relaying the change log must cost a
// copy per entry, not a parse and a serialization. A revert entry holds the whole document
// (7 MB in the review); parsing it and serializing it again for every SSE replay burst, changes
// page and Socket.IO resume ack held the event loop for hundreds of ms per entry, and another
// user waited seconds (SECURITY.md has the numbers). The store hands out each entry's JSON as
// stored (readChangesJson) and every door writes it as it is (docs/design.md §13b). This test
// runs the app in this process and records every JSON.parse of, and JSON.stringify into, a
// text as large as the document while a read key reads the log through each door: there must
// be none (the test's own Socket.IO client decoding the ack aside).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { ChangeEntry, SubscribeAck } from '../../shared/events.js'
import { call, createKey, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { connect } from '../realtime/client.js'

const BIG = 100_000
/** Version 1 the big document, 2–3 increments, 4–5 reverts to version 1: three big entries. */
const VERSIONS = [1, 2, 3, 4, 5]

let app: TestApp
let path: string
let readKey: string

beforeAll(async () => {
  app = await startTestApp({}, { realtime: true })
  const owner = await ownerWithProject(app.url, 'relay')
  path = owner.path
  const write = async (op: string, body: unknown) => {
    const r = await call(app.url, 'POST', `${path}/content${op}`, { token: owner.key, body })
    if (r.status !== 200) throw new Error(`${op}: ${r.status} ${r.text}`)
  }
  await write('', { big: 'x'.repeat(BIG), n: 0 })
  await write('/increment', { path: 'n' })
  await write('/increment', { path: 'n' })
  await write('/revert', { version: 1 })
  await write('/revert', { version: 1 })
  readKey = (await createKey(app.url, owner.session, { name: 'reader', permission: 'read' })).key
}, 30_000)
afterAll(async () => { await app?.close() })

/** Where each JSON.parse or JSON.stringify of a text of BIG characters or more came from, while `work` runs. */
async function largeJsonWork<T> (work: () => Promise<T>): Promise<{ result: T, calls: string[] }> {
  const calls: string[] = []
  const record = (what: string, length: number) => {
    if (length < BIG) return
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 60
    const stack = new Error('here').stack ?? ''
    Error.stackTraceLimit = limit
    // The test's own client decoding what it received.
    if (/socket\.io-client|engine\.io-client/.test(stack)) return
    calls.push(`${what} of ${length} characters:${stack.split('\n').slice(3, 8).join('\n')}`)
  }
  const { parse, stringify } = JSON
  vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    record('JSON.parse', typeof text === 'string' ? text.length : 0)
    return parse(text, reviver)
  })
  vi.spyOn(JSON, 'stringify').mockImplementation((...args: Parameters<typeof JSON.stringify>) => {
    const json = stringify(...args)
    record('JSON.stringify', typeof json === 'string' ? json.length : 0)
    return json
  })
  try {
    return { result: await work(), calls }
  } finally {
    vi.restoreAllMocks()
  }
}

/** The `data:` of each `change` event of an SSE stream from ?since=0, until `last` came. */
async function sseReplay (last: number): Promise<string[]> {
  const controller = new AbortController()
  const r = await fetch(`${app.url}${path}/content/events?since=0`, { headers: { authorization: `Bearer ${readKey}` }, signal: controller.signal })
  expect(r.status).toBe(200)
  let text = ''
  const decoder = new TextDecoder()
  for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true })
    if (text.includes(`id: ${last}\n`) && text.endsWith('\n\n')) break
  }
  controller.abort()
  return text.split('\n\n').filter(frame => frame.includes('event: change')).map(frame => frame.split('\n').find(line => line.startsWith('data: '))!.slice('data: '.length))
}

describe('relaying the change log (docs/design.md §13b)', { timeout: 30_000 }, () => {
  it('the changes API writes the stored entries as they are: no large parse or serialization', async () => {
    const { result: text, calls } = await largeJsonWork(async () => {
      const r = await fetch(`${app.url}${path}/content/changes?since=0&limit=1000`, { headers: { authorization: `Bearer ${readKey}` } })
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8')
      return r.text()
    })
    expect(calls).toEqual([])
    // The same answer as the entries serialized, character for character.
    const page = JSON.parse(text) as { version: number, changes: ChangeEntry[], more: boolean }
    expect(text).toBe(JSON.stringify(page))
    expect(page.changes.map(change => change.version)).toEqual(VERSIONS)
    expect(page.changes[3]).toMatchObject({ project: '@relay/demo', op: 'revert', revertedTo: 1, value: { n: 0 } })
    expect([page.version, page.more]).toEqual([5, false])
  })

  it('an SSE replay writes each stored entry as its event data: no large parse or serialization', async () => {
    const { result: data, calls } = await largeJsonWork(() => sseReplay(5))
    expect(calls).toEqual([])
    const changes = data.map(json => JSON.parse(json) as ChangeEntry)
    expect(changes.map(change => change.version)).toEqual(VERSIONS)
    expect(data).toEqual(changes.map(change => JSON.stringify(change)))
    const page = (await call(app.url, 'GET', `${path}/content/changes?since=0`, { token: readKey })).body as { changes: ChangeEntry[] }
    expect(changes).toEqual(page.changes)
  })

  it('a Socket.IO subscribe with since: 0 acks the stored entries as they are: no large parse or serialization', async () => {
    const socket = await connect(app.url, readKey)
    try {
      const { result: ack, calls } = await largeJsonWork(() => socket.timeout(10_000).emitWithAck('subscribe', { project: '@relay/demo', since: 0 }) as Promise<SubscribeAck>)
      expect(calls).toEqual([])
      if (!ack.ok || !('changes' in ack)) throw new Error(`refused: ${JSON.stringify(ack)}`)
      expect(Object.keys(ack)).toEqual(['ok', 'project', 'version', 'changes'])
      expect(ack.version).toBe(5)
      const page = (await call(app.url, 'GET', `${path}/content/changes?since=0`, { token: readKey })).body as { changes: ChangeEntry[] }
      expect(ack.changes).toEqual(page.changes)
    } finally {
      socket.disconnect()
    }
  })
})
