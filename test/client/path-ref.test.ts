// The SDK's `project.ref(path)` (docs/design.md §15) against a real server: get(), the live
// value of subscribe() (only the changes that touch the path, never anything else), resumed
// after a reconnect from its version, a snapshot after expired history, and changes({since}).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type ContentdClient } from '../../shared/client/index.js'
import type { Json } from '../../shared/json.js'
import { CuttableProxy } from '../support/cuttable-proxy.js'
import { call, createKey, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { until } from '../support/wait.js'

let app: TestApp
let proxy: CuttableProxy
const clients: ContentdClient[] = []

beforeAll(async () => {
  app = await startTestApp({ HISTORY_LIMIT: '40' }, { realtime: true })
  proxy = new CuttableProxy(Number(new URL(app.url).port))
  await proxy.start()
})
afterAll(async () => {
  for (const client of clients) client.close()
  await proxy?.stop()
  await app?.close()
})

const clientOf = (token: string) => {
  const client = createClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, token, socketOptions: { transports: ['websocket'], reconnectionDelay: 100, reconnectionDelayMax: 200 } })
  clients.push(client)
  return client
}

const post = async (path: string, token: string, op: string, body: unknown) => {
  const r = await call(app.url, 'POST', `${path}/content/${op}`, { token, body })
  expect(r.status, r.text).toBe(200)
}

describe('project.ref(path)', { timeout: 60_000 }, () => {
  it('get(), subscribe() and changes() of one path; a narrowed key may use them all', async () => {
    const { key, session, path } = await ownerWithProject(app.url, 'sdkref')
    await post(path, key, 'set', { path: 'votes', value: { up: 1 } })
    await post(path, key, 'set', { path: 'secret', value: 'hidden' })
    const narrowed = (await createKey(app.url, session, { name: 'votes', permission: 'read', paths: ['votes'] })).key
    const project = clientOf(narrowed).project('@sdkref/demo')
    expect(project.reference).toBe('@sdkref/demo')
    const votes = project.ref('votes')
    expect(await votes.get()).toEqual({ up: 1 })
    expect(await project.ref('votes.none').get()).toBeUndefined()
    const seen: Array<[Json | undefined, number]> = []
    const live = votes.subscribe((value, version) => seen.push([structuredClone(value), version]))
    await live.ready
    await post(path, key, 'increment', { path: 'votes.up' })
    await post(path, key, 'increment', { path: 'other' })
    await post(path, key, 'delete', { path: 'votes' })
    await post(path, key, 'set', { path: 'votes', value: { up: 5 } })
    await until(() => live.version === 6, 'version 6')
    expect(seen).toEqual([[{ up: 1 }, 2], [{ up: 2 }, 3], [undefined, 5], [{ up: 5 }, 6]])
    expect(live.value).toEqual({ up: 5 })
    const pages = []
    for await (const page of votes.changes({ since: 0, limit: 2 })) pages.push(page)
    expect(pages.flatMap(page => page.changes.map(change => change.version))).toEqual([1, 3, 5, 6])
    await expect(project.ref('secret').get()).rejects.toMatchObject({ code: 'KEY_SCOPE_DENIED' })
    expect(() => project.ref('a..b')).toThrow()
  })

  it('resumes after a reconnect from its version (only the path\'s changes), and takes a snapshot when history expired', async () => {
    const { key, path } = await ownerWithProject(app.url, 'sdkrefresume')
    await post(path, key, 'set', { path: 'list', value: [] })
    const live = clientOf(key).project('@sdkrefresume/demo').ref('list.1').subscribe(() => {})
    await live.ready
    expect(live.exists).toBe(false)
    proxy.cut()
    await post(path, key, 'push', { path: 'list', value: 'a' })
    await post(path, key, 'push', { path: 'list', value: 'b' })
    for (let i = 0; i < 5; i++) await post(path, key, 'increment', { path: 'n' })
    proxy.reopen()
    await until(() => live.value === 'b', 'b after the reconnect', 15_000)
    expect(live.snapshots + live.resumes).toBeGreaterThanOrEqual(2)
    await post(path, key, 'insert', { path: 'list', index: 0, value: 'z' })
    await until(() => live.value === 'a', 'a, shifted in by the insert')
    proxy.cut()
    for (let i = 0; i < 45; i++) await post(path, key, 'increment', { path: 'n' })
    await post(path, key, 'set', { path: 'list.1', value: 'after' })
    proxy.reopen()
    await until(() => live.value === 'after', 'the value after expired history', 15_000)
  })
})
