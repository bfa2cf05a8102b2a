// The SDK and the change log (docs/design.md §9) against a real server process: a live copy
// whose connection is cut (through a TCP proxy the test controls) resumes from its version
// after the reconnect, taking no new snapshot; when the server no longer has the missed
// changes it falls back to a snapshot. project.changes(), at() and revert().
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type ChangesPage, type ContentdClient } from '../../shared/client/index.js'
import { LiveCopy } from '../../shared/client/subscription.js'
import type { ChangeEvent, SubscribeAck } from '../../shared/events.js'
import { CuttableProxy } from '../support/cuttable-proxy.js'
import { call, ownerWithProject } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'

let server: ServerProcess
let proxy: CuttableProxy
const clients: ContentdClient[] = []
const HISTORY_LIMIT = 50

beforeAll(async () => {
  server = await startServerProcess({ env: { HISTORY_LIMIT: String(HISTORY_LIMIT) } })
  proxy = new CuttableProxy(server.port)
  await proxy.start()
})
afterAll(async () => {
  for (const client of clients) client.close()
  await proxy?.stop()
  await server?.stop()
  rmSync(server.dataDir, { recursive: true, force: true })
})

const clientThroughProxy = (token: string) => {
  // Reconnect fast: the test is about what happens after the reconnect.
  const client = createClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, token, socketOptions: { transports: ['websocket'], reconnectionDelay: 100, reconnectionDelayMax: 200 } })
  clients.push(client)
  return client
}

const writeMany = async (path: string, token: string, count: number) => {
  for (let i = 0; i < count; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, count - i) }, () => call(server.url, 'POST', `${path}/content/increment`, { token, body: { path: 'n' } })))
  }
}

describe('live copy after a reconnect', { timeout: 60_000 }, () => {
  it('resumes from its version: only the missed changes, no new snapshot, content equal to the server', async () => {
    const { key, path } = await ownerWithProject(server.url, 'sdkresume')
    const client = clientThroughProxy(key)
    const seen: number[] = []
    const live = client.project('@sdkresume/demo').subscribe((_content, version) => seen.push(version))
    await live.ready
    await writeMany(path, key, 5)
    await until(() => live.version === 5, 'version 5')
    proxy.cut()
    await writeMany(path, key, 30)
    proxy.reopen()
    await until(() => live.version === 35, 'version 35 after the reconnect', 15_000)
    expect(live.snapshots).toBe(1)
    expect(live.resumes).toBe(1)
    expect(live.content).toEqual({ n: 35 })
    expect(seen).toEqual(Array.from({ length: 36 }, (_, i) => i))
    // And live again afterwards.
    await writeMany(path, key, 1)
    await until(() => live.version === 36, 'version 36')
  })

  it('falls back to a snapshot when the missed changes are beyond retention (HISTORY_EXPIRED)', async () => {
    const { key, path } = await ownerWithProject(server.url, 'sdkexpired')
    const client = clientThroughProxy(key)
    const live = client.project('@sdkexpired/demo').subscribe(() => {})
    await live.ready
    proxy.cut()
    await writeMany(path, key, HISTORY_LIMIT + 10)
    proxy.reopen()
    await until(() => live.version === HISTORY_LIMIT + 10, 'the snapshot after the reconnect', 15_000)
    expect(live.snapshots).toBe(2)
    expect(live.resumes).toBe(0)
    expect(live.content).toEqual({ n: HISTORY_LIMIT + 10 })
  })
})

describe('history through the SDK', { timeout: 60_000 }, () => {
  it('changes() pages through the log; at() reads a past version; revert() makes it current again', async () => {
    const { key, keyId, path } = await ownerWithProject(server.url, 'sdkhistory')
    await writeMany(path, key, 7)
    const project = createClient({ baseUrl: server.url, token: key }).project('@sdkhistory/demo')
    const pages: ChangesPage[] = []
    for await (const page of project.changes({ since: 1, limit: 3 })) pages.push(page)
    expect(pages.map(p => [p.changes.map(c => c.version), p.more])).toEqual([[[2, 3, 4], true], [[5, 6, 7], false]])
    expect(pages[0]?.changes[0]).toMatchObject({ op: 'increment', actor: { type: 'key', id: keyId } })
    expect(await project.at(3)).toEqual({ value: { n: 3 }, version: 3 })
    expect(await project.revert(3)).toEqual({ message: 'Content reverted to version 3.', version: 8, replayed: false })
    expect(await project.get()).toEqual({ n: 3 })
    await expect(project.at(99)).rejects.toMatchObject({ status: 404, code: 'VERSION_NOT_FOUND' })
    const all: number[] = []
    for await (const page of project.changes()) all.push(...page.changes.map(c => c.version))
    expect(all).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
  })
})

describe('LiveCopy.resume, driven by hand', () => {
  const change = (version: number): ChangeEvent => ({ project: '@a/b', version, op: 'increment', path: 'n', value: 1, at: '', actor: { type: 'user', name: '@a' } })
  const requester = () => {
    const asked: Array<number | undefined> = []
    const answers: Array<(ack: SubscribeAck) => void> = []
    return { asked, answer: (i: number, ack: SubscribeAck) => answers[i]?.(ack), request: (since?: number) => { asked.push(since); return new Promise<SubscribeAck>(resolve => answers.push(resolve)) } }
  }
  const flush = () => new Promise(resolve => setImmediate(resolve))
  /** A copy that took a snapshot at version 2 and has just asked to resume from it (request 1). */
  const resumingFromVersion2 = async () => {
    const r = requester()
    const copy = new LiveCopy('@a/b', () => {}, {}, r.request, () => {})
    copy.resync()
    r.answer(0, { ok: true, project: '@a/b', version: 2, content: { n: 2 } })
    await copy.ready
    copy.resume()
    return { r, copy }
  }

  it('asks with since = its version, applies the changes, then what arrived meanwhile', async () => {
    const { r, copy } = await resumingFromVersion2()
    copy.receive(change(5)) // live, during the resume
    r.answer(1, { ok: true, project: '@a/b', version: 4, changes: [change(3), change(4)] })
    await flush()
    expect(r.asked).toEqual([undefined, 2])
    expect([copy.version, copy.content, copy.snapshots, copy.resumes]).toEqual([5, { n: 5 }, 1, 1])
  })

  it('an ack with more: true is one page: it asks again from the page\'s last version until the log is done', async () => {
    const { r, copy } = await resumingFromVersion2()
    r.answer(1, { ok: true, project: '@a/b', version: 4, changes: [change(3), change(4)], more: true })
    await flush()
    expect(r.asked).toEqual([undefined, 2, 4])
    expect([copy.version, copy.resumes]).toEqual([4, 0])
    r.answer(2, { ok: true, project: '@a/b', version: 6, changes: [change(5), change(6)] })
    await flush()
    expect(r.asked).toEqual([undefined, 2, 4])
    expect([copy.version, copy.content, copy.snapshots, copy.resumes]).toEqual([6, { n: 6 }, 1, 1])
  })

  it('takes a snapshot on HISTORY_EXPIRED, or when the changes do not continue its version', async () => {
    const { r, copy } = await resumingFromVersion2()
    r.answer(1, { ok: false, code: 'HISTORY_EXPIRED', message: 'old' })
    await flush()
    r.answer(2, { ok: true, project: '@a/b', version: 9, content: { n: 9 } })
    await flush()
    copy.resume()
    r.answer(3, { ok: true, project: '@a/b', version: 12, changes: [change(11), change(12)] }) // starts after 10: a gap
    await flush()
    r.answer(4, { ok: true, project: '@a/b', version: 12, content: { n: 12 } })
    await flush()
    expect(r.asked).toEqual([undefined, 2, undefined, 9, undefined])
    expect([copy.version, copy.snapshots, copy.resumes]).toEqual([12, 3, 0])
  })
})
