// The offline-first SDK (docs/design.md §19) against a real server process, through a TCP
// proxy the test cuts to play "the network is down": writes made offline are kept durably
// (a directory store), shown at once, and land exactly once after a restart of the app even
// when answers are lost on the way; a restart shows the last content before the server
// answers; refused writes are reported and undone while later ones land; the outbox is bounded.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createClient, directoryStore, memoryStore, type ContentdClient, type ContentdError, type OfflineOptions } from '../../shared/client/index.js'
import type { JsonObject } from '../../shared/json.js'
import { CuttableProxy } from '../support/cuttable-proxy.js'
import { call, ownerWithProject } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'

let server: ServerProcess
let proxy: CuttableProxy
const dirs: string[] = []
const clients: ContentdClient[] = []

beforeAll(async () => {
  server = await startServerProcess()
  proxy = new CuttableProxy(server.port)
  await proxy.start()
})
afterAll(async () => {
  for (const client of clients) await client.close()
  await proxy?.stop()
  await server?.stop()
  rmSync(server.dataDir, { recursive: true, force: true })
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

// A failed test must not leave the network down for the next one.
afterEach(() => { proxy.reopen() })

const tempDir = () => { const dir = mkdtempSync(join(tmpdir(), 'contentd-offline-')); dirs.push(dir); return dir }

function offlineClient (token: string, offline: OfflineOptions): ContentdClient {
  const client = createClient({
    baseUrl: `http://127.0.0.1:${proxy.port}`, token, offline, socketOptions: { transports: ['websocket'], reconnectionDelay: 100, reconnectionDelayMax: 200 }
  })
  clients.push(client)
  return client
}

const serverContent = async (path: string, token: string) => {
  const r = await call(server.url, 'GET', `${path}/content`, { token })
  return { content: r.body as JsonObject, version: Number(JSON.parse(r.headers.get('etag') ?? '"-1"')) }
}

describe('offline-first SDK', { timeout: 90_000 }, () => {
  it('200 writes made with the server down land exactly once after restarts of the app and the server, answers lost on the way included', async () => {
    const { key, path } = await ownerWithProject(server.url, 'offa')
    const dir = tempDir()
    const store = directoryStore(dir)
    const first = offlineClient(key, { store })
    const demo = first.project('@offa/demo')
    const views: Array<number | undefined> = []
    const live = demo.subscribe(content => views.push(content.n as number | undefined))
    await live.ready

    proxy.cut()
    const answers: Array<Promise<unknown>> = []
    for (let i = 0; i < 200; i++) answers.push(demo.increment('n').catch((e: unknown) => e))
    // Durable: every write is in the directory; and shown at once in the local copy.
    await until(() => demo.offline?.pending === 200, '200 pending writes')
    let durable = 0
    for (let tries = 0; tries < 500 && durable < 200; tries++) {
      durable = (await store.keys('outbox/')).length
      if (durable < 200) await new Promise(resolve => setTimeout(resolve, 20))
    }
    expect(durable).toBe(200)
    await until(() => live.content?.n === 200, 'the local copy shows the 200 writes')
    expect(live.version).toBe(0)
    expect((await serverContent(path, key)).version).toBe(0)
    // The app stops with its writes unsent (their promises never settle in this run), and the
    // server is stopped and started again on its data meanwhile.
    await first.close()
    await server.stop()
    server = await startServerProcess({ dataDir: server.dataDir, port: server.port })

    // The app starts again, with the same store: the writes go out once the network is back,
    // and one cut half-way loses answers of writes the server applied.
    const second = offlineClient(key, { store: directoryStore(dir) })
    const again = second.project('@offa/demo')
    const view = again.subscribe(() => {})
    await again.offline?.loaded
    expect(again.offline?.pending).toBe(200)
    await until(() => view.content?.n === 200, 'the restarted copy shows the 200 pending writes before the server answers')
    proxy.reopen()
    const deadline = Date.now() + 30_000
    while ((await serverContent(path, key)).version < 60 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
    proxy.cut()
    await new Promise(resolve => setTimeout(resolve, 300))
    proxy.reopen()
    await Promise.race([again.offline?.flush(), new Promise((_resolve, reject) => setTimeout(() => reject(new Error('outbox not empty after 60 s')), 60_000))])

    // Exactly once: the counter is 200 and so is the version (every applied write adds 1).
    expect(await serverContent(path, key)).toEqual({ content: { n: 200 }, version: 200 })
    expect((await store.keys('outbox/')).length).toBe(0)
    await until(() => view.version === 200 && view.content?.n === 200, 'the local copy at the server version')
    expect(views.length).toBeGreaterThan(0)
    void answers
  })

  it('a restart shows the last known content and version before the server answers, then resumes', async () => {
    const { key, path } = await ownerWithProject(server.url, 'offb')
    await call(server.url, 'POST', `${path}/content`, { token: key, body: { title: 'kept', items: [1, 2, 3] } })
    const dir = tempDir()
    const first = offlineClient(key, { store: directoryStore(dir) })
    const live = first.project('@offb/demo').subscribe(() => {})
    await until(() => live.version === 1, 'version 1')
    await first.close()

    proxy.cut()
    const second = offlineClient(key, { store: directoryStore(dir) })
    const shown: Array<{ content: JsonObject, version: number }> = []
    const changes: number[] = []
    const view = second.project('@offb/demo').subscribe((content, version) => shown.push({ content: structuredClone(content), version }), { onChange: change => changes.push(change.version) })
    await view.ready
    // Shown from the store while the server cannot be reached.
    expect(shown[0]).toEqual({ content: { title: 'kept', items: [1, 2, 3] }, version: 1 })
    await call(server.url, 'POST', `${path}/content/push`, { token: key, body: { path: 'items', value: 4 } })
    proxy.reopen()
    // Resumed from version 1: the missed change arrives without a new snapshot.
    await until(() => view.version === 2, 'version 2 after the reconnect', 15_000)
    expect(view.content).toEqual({ title: 'kept', items: [1, 2, 3, 4] })
    expect(view.snapshots).toBe(0)
    expect(changes).toEqual([2])
  })

  it('refused writes (a failed test, a stale If-Match) are removed, undone and reported with the changes in between; later writes land', async () => {
    const { key, session, path } = await ownerWithProject(server.url, 'offc')
    await call(server.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'stock', value: 5 } })
    const rejected: Array<{ code: string, suffix: string, changes: number[] }> = []
    const client = offlineClient(key, {
      store: memoryStore(),
      onRejected: (error, { write, changes }) => rejected.push({ code: error.code, suffix: write.suffix, changes: changes.map(c => c.version) })
    })
    const demo = client.project('@offc/demo')
    const view = demo.subscribe(() => {})
    await until(() => view.version === 1, 'version 1')

    proxy.cut()
    const sell = demo.batch([{ op: 'test', path: 'stock', value: 5 }, { op: 'decrement', path: 'stock' }]).catch((e: unknown) => e as ContentdError)
    const guarded = demo.set('price', 9, { ifVersion: 1 }).catch((e: unknown) => e as ContentdError)
    const note = demo.set('note', 'hi')
    await until(() => view.content?.stock === 4 && view.content.price === 9 && view.content.note === 'hi', 'optimistic view')
    // Meanwhile someone else sells the stock down.
    await call(server.url, 'POST', `${path}/content/set`, { token: session, body: { path: 'stock', value: 3 } })
    proxy.reopen()

    expect(await note).toEqual(expect.objectContaining({ version: 3 }))
    expect(((await sell) as ContentdError).code).toBe('TEST_FAILED')
    expect(((await guarded) as ContentdError).code).toBe('PRECONDITION_FAILED')
    expect(rejected).toEqual([
      { code: 'TEST_FAILED', suffix: '/batch', changes: [2] },
      { code: 'PRECONDITION_FAILED', suffix: '/set', changes: [2] }
    ])
    await until(() => view.version === 3, 'version 3')
    expect(view.content).toEqual({ stock: 3, note: 'hi' })
    expect((await serverContent(path, key)).content).toEqual({ stock: 3, note: 'hi' })
  })

  it('the outbox is bounded: past maxWrites a write throws OUTBOX_FULL and is not queued', async () => {
    const { key } = await ownerWithProject(server.url, 'offd')
    proxy.cut()
    const client = offlineClient(key, { store: memoryStore(), maxWrites: 3 })
    const demo = client.project('@offd/demo')
    for (let i = 0; i < 3; i++) void demo.increment('n').catch(() => {})
    await until(() => demo.offline?.pending === 3, '3 pending')
    const error = await demo.increment('n').then(() => null, (e: unknown) => e as ContentdError)
    expect(error?.code).toBe('OUTBOX_FULL')
    expect(demo.offline?.pending).toBe(3)
    proxy.reopen()
  })
})
