// Change-log reads bounded in bytes (docs/design.md §13b, issue 26 finding 3) against the real
// server process: a log of revert entries each carrying the whole document is read by a read
// key through every door — `GET …/content/changes?limit=1000`, an SSE replay from `?since=0`,
// a Socket.IO `subscribe` with `since: 0`, and the SDK resuming after a reconnect. Every page,
// ack and replay burst carries at most CHANGES_PAGE_BYTES of entries (one over-size entry
// alone), says `more: true` while entries remain, and following it yields every version
// exactly once, in order. Small CHANGES_PAGE_BYTES and CONTENT_LIMIT keep it cheap; the
// attack at full size is measured by hand (SECURITY.md).
import { rmSync } from 'node:fs'
import { connect as connectTcp } from 'node:net'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type ContentdClient } from '../../shared/client/index.js'
import type { ChangeEntry, SubscribeAck } from '../../shared/events.js'
import { CuttableProxy } from '../support/cuttable-proxy.js'
import { call, createKey, ownerWithProject } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'
import { connect } from '../realtime/client.js'

const PAGE_BYTES = 4096
/** A document about 2.5 pages big: each revert to it is an entry that must come alone. */
const BIG = { big: 'x'.repeat(10_000), n: 0 }

let server: ServerProcess
let proxy: CuttableProxy
const sockets: Socket[] = []
const clients: ContentdClient[] = []

beforeAll(async () => {
  server = await startServerProcess({
    env: {
      CHANGES_PAGE_BYTES: String(PAGE_BYTES),
      CONTENT_LIMIT: '16384',
      BODY_LIMIT: '16384',
      // Continuing a resume is a new subscribe: let the test's pages through at once.
      SOCKET_RESUBSCRIBE_BYTES: '100000000'
    }
  })
  proxy = new CuttableProxy(server.port)
  await proxy.start()
})
afterAll(async () => {
  for (const socket of sockets) socket.disconnect()
  for (const client of clients) client.close()
  await proxy?.stop()
  await server?.stop()
  rmSync(server.dataDir, { recursive: true, force: true })
})

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
/** An entry's size as sent: the UTF-8 length of its JSON. */
const bytesOf = (entry: unknown) => Buffer.byteLength(JSON.stringify(entry))
const entriesBytes = (entries: unknown[]) => entries.reduce<number>((sum, entry) => sum + bytesOf(entry), 0)

/** Within the bound: at most PAGE_BYTES of entries, or one entry alone. */
function expectBounded (entries: unknown[], what: string): void {
  expect(entries.length, `${what}: empty`).toBeGreaterThan(0)
  if (entries.length > 1) expect(entriesBytes(entries), `${what}: ${entries.length} entries`).toBeLessThanOrEqual(PAGE_BYTES)
}

/**
 * Writes a log of large revert entries between runs of small increments: version 1 sets the
 * big document, then each round is `smalls` increments and two reverts to version 1.
 */
async function writeRevertLog (path: string, token: string, rounds: number, smalls = 12): Promise<number> {
  const ok = async (op: string, body: unknown) => {
    const r = await call(server.url, 'POST', `${path}/content/${op}`, { token, body })
    if (r.status !== 200) throw new Error(`${op}: ${r.status} ${r.text}`)
  }
  await call(server.url, 'POST', `${path}/content`, { token, body: BIG }).then(r => { if (r.status !== 200) throw new Error(r.text) })
  let version = 1
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < smalls; i++) await ok('increment', { path: 'n' })
    await ok('revert', { version: 1 })
    await ok('revert', { version: 1 })
    version += smalls + 2
  }
  return version
}

/** A user with a project holding the revert log, and a read key to it. */
async function attackedProject (username: string, rounds = 3) {
  const owner = await ownerWithProject(server.url, username)
  const total = await writeRevertLog(owner.path, owner.key, rounds)
  const { key: readKey } = await createKey(server.url, owner.session, { name: 'reader', permission: 'read' })
  return { ...owner, readKey, total, ref: `@${username}/demo` }
}

/** Another user's increment on their own project: what must keep answering during a read. */
async function bystander (username: string) {
  const { key, path } = await ownerWithProject(server.url, username)
  return async () => (await call(server.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })).status
}

describe('GET …/content/changes', { timeout: 60_000 }, () => {
  it('pages by bytes with more: true; following them gives every version once, in order', async () => {
    const { readKey, path, total } = await attackedProject('pagehttp')
    const increment = await bystander('pagehttpother')
    const seen: number[] = []
    let pages = 0
    for (let since = 0; ; pages++) {
      const [r, other] = await Promise.all([call(server.url, 'GET', `${path}/content/changes?since=${since}&limit=1000`, { token: readKey }), increment()])
      expect(r.status).toBe(200)
      expect(other).toBe(200)
      const { changes, more, version } = r.body as { changes: ChangeEntry[], more: boolean, version: number }
      expectBounded(changes, `page after ${since}`)
      // The response itself: the entries, their commas and a small envelope.
      if (changes.length > 1) expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(PAGE_BYTES + changes.length + 64)
      expect(version).toBe(total)
      seen.push(...changes.map(c => c.version))
      since = changes.at(-1)!.version
      expect(more, `more after ${since}`).toBe(since < total)
      if (!more) break
    }
    expect(seen).toEqual(range(1, total))
    // Several entries share a page where they fit; the reverts come alone.
    expect(pages).toBeGreaterThan(6)
    expect(pages).toBeLessThan(total)
  })
})

/**
 * An SSE stream read over a raw socket: Node frames each `res.write` as one HTTP chunk, so
 * the chunks are the server's writes — the replay's bursts. Resolves once `lastVersion` came.
 */
function sseWrites (path: string, token: string, lastVersion: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp(server.port, '127.0.0.1')
    const writes: string[] = []
    let buffer = Buffer.alloc(0)
    let headed = false
    const fail = (error: Error) => { socket.destroy(); reject(error) }
    const timer = setTimeout(() => fail(new Error(`timed out; ${writes.length} writes`)), 20_000)
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${token}\r\n\r\n`)
    socket.on('error', fail)
    socket.on('data', (data: Buffer) => {
      buffer = Buffer.concat([buffer, data])
      if (!headed) {
        const end = buffer.indexOf('\r\n\r\n')
        if (end < 0) return
        const head = buffer.subarray(0, end).toString()
        if (!head.startsWith('HTTP/1.1 200') || !/transfer-encoding: chunked/i.test(head)) { fail(new Error(head)); return }
        headed = true
        buffer = buffer.subarray(end + 4)
      }
      for (;;) {
        const line = buffer.indexOf('\r\n')
        if (line < 0) return
        const size = Number.parseInt(buffer.subarray(0, line).toString(), 16)
        if (buffer.length < line + 2 + size + 2) return
        writes.push(buffer.subarray(line + 2, line + 2 + size).toString())
        buffer = buffer.subarray(line + 2 + size + 2)
        if (writes.at(-1)!.includes(`id: ${lastVersion}\n`)) {
          clearTimeout(timer)
          socket.destroy()
          resolve(writes)
          return
        }
      }
    })
  })
}

/** The `change` events of one write, parsed. */
function changesIn (write: string): ChangeEntry[] {
  return write.split('\n\n').filter(frame => frame.includes('event: change')).map(frame => {
    const data = frame.split('\n').find(line => line.startsWith('data: '))!
    return JSON.parse(data.slice('data: '.length)) as ChangeEntry
  })
}

describe('SSE replay from ?since=0', { timeout: 60_000 }, () => {
  it('comes in bursts of at most CHANGES_PAGE_BYTES of entries, every version once, in order', async () => {
    const { readKey, path, total } = await attackedProject('pagesse')
    const increment = await bystander('pagesseother')
    const [writes, other] = await Promise.all([sseWrites(`${path}/content/events?since=0`, readKey, total), increment()])
    expect(other).toBe(200)
    const bursts = writes.map(changesIn).filter(changes => changes.length > 0)
    bursts.forEach((changes, i) => expectBounded(changes, `burst ${i}`))
    expect(bursts.flat().map(c => c.version)).toEqual(range(1, total))
    expect(bursts.length).toBeGreaterThan(6)
  })
})

describe('Socket.IO subscribe with since: 0', { timeout: 60_000 }, () => {
  it('acks a page at a time with more: true; continuing gets every version once, then live changes', async () => {
    const { readKey, key, path, total, ref } = await attackedProject('pagesocket')
    const increment = await bystander('pagesocketother')
    const socket = await connect(server.url, readKey)
    sockets.push(socket)
    const live: number[] = []
    socket.on('change', (change: ChangeEntry) => live.push(change.version))
    const seen: number[] = []
    let acks = 0
    for (let since = 0; ; acks++) {
      const [ack, other] = await Promise.all([socket.timeout(10_000).emitWithAck('subscribe', { project: ref, since }) as Promise<SubscribeAck>, increment()])
      expect(other).toBe(200)
      if (!ack.ok || !('changes' in ack)) throw new Error(`refused: ${JSON.stringify(ack)}`)
      expectBounded(ack.changes, `ack after ${since}`)
      seen.push(...ack.changes.map(c => c.version))
      expect(ack.version).toBe(ack.changes.at(-1)!.version)
      since = ack.version
      expect(ack.more, `more after ${since}`).toBe(since < total ? true : undefined)
      if (!ack.more) break
    }
    expect(seen).toEqual(range(1, total))
    expect(acks).toBeGreaterThan(6)
    // The last ack put the subscription in place: live changes follow it.
    expect(live).toEqual([])
    expect((await call(server.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })).status).toBe(200)
    await until(() => live.length === 1, 'the live change')
    expect(live).toEqual([total + 1])
  })
})

describe('the SDK', { timeout: 60_000 }, () => {
  it('a live copy resuming after a reconnect follows more: true and gets every change', async () => {
    const { key, path, readKey, ref } = await attackedProject('pagesdk', 0)
    const client = createClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, token: readKey, socketOptions: { transports: ['websocket'], reconnectionDelay: 100, reconnectionDelayMax: 200 } })
    clients.push(client)
    const changed: number[] = []
    const live = client.project(ref).subscribe(() => {}, { onChange: change => changed.push(change.version) })
    await live.ready
    expect(live.version).toBe(1)
    proxy.cut()
    // The missed changes: several pages, over-size reverts among them.
    let total = 1
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 12; i++) await call(server.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })
      await call(server.url, 'POST', `${path}/content/revert`, { token: key, body: { version: 1 } })
      total += 13
    }
    await call(server.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })
    total += 1
    proxy.reopen()
    await until(() => live.version === total, `version ${total} after the reconnect`, 20_000)
    expect(changed).toEqual(range(2, total))
    expect([live.snapshots, live.resumes]).toEqual([1, 1])
    expect(live.content).toEqual((await call(server.url, 'GET', `${path}/content`, { token: key })).body)
    // The HTTP side of the SDK: changes() follows `more` through byte-bounded pages.
    const project = createClient({ baseUrl: server.url, token: readKey }).project(ref)
    const pages: ChangeEntry[][] = []
    for await (const page of project.changes({ limit: 1000 })) pages.push(page.changes)
    pages.forEach((page, i) => expectBounded(page, `SDK page ${i}`))
    expect(pages.flat().map(c => c.version)).toEqual(range(1, total))
  })
})
