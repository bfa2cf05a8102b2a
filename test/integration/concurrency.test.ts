// Atomicity under load, over real HTTP against the real server process: simultaneous
// increments and pushes on one path lose nothing, every success gets its own version, and
// two processes sharing one SQLite file still add up exactly.
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SUCCESS_MESSAGES } from '../../shared/operation-table.js'
import { call, ownerWithProject } from '../support/http.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { pooledClient, type PooledClient } from './pooled-client.js'

async function versionOf (url: string, path: string, token: string): Promise<number> {
  const r = await call(url, 'GET', `${path}/content`, { token })
  return Number(JSON.parse(r.headers.get('etag') ?? 'null'))
}

function expectConsecutiveVersions (etags: Array<string | undefined>, from: number): void {
  const versions = etags.map(tag => Number(JSON.parse(tag ?? 'null'))).sort((a, b) => a - b)
  expect(versions).toEqual(Array.from({ length: etags.length }, (_, i) => from + 1 + i))
}

describe('concurrency on one server process', () => {
  let server: ServerProcess
  let client: PooledClient
  let key: string
  let path: string
  beforeAll(async () => {
    server = await startServerProcess()
    client = pooledClient(32)
    ;({ key, path } = await ownerWithProject(server.url, 'busy'))
  })
  afterAll(async () => {
    client.close()
    expect(await server.stop()).toBe(0)
    rmSync(server.dataDir, { recursive: true, force: true })
  })

  it('500 simultaneous increments end at exactly +500, each with its own version', async () => {
    expect((await call(server.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'stats.hits', value: 10 } })).status).toBe(200)
    const before = await versionOf(server.url, path, key)
    const results = await Promise.all(Array.from({ length: 500 }, () =>
      client.post(`${server.url}${path}/content/increment`, key, { path: 'stats.hits' })))
    expect(results.filter(r => r.status !== 200)).toEqual([])
    expect(new Set(results.map(r => JSON.stringify(r.body)))).toEqual(new Set([JSON.stringify({ message: SUCCESS_MESSAGES.increment })]))
    expectConsecutiveVersions(results.map(r => r.etag), before)
    const after = await call(server.url, 'GET', `${path}/content?path=stats.hits`, { token: key })
    expect(after.body).toBe(510)
    expect(await versionOf(server.url, path, key)).toBe(before + 500)
  })

  it('200 concurrent pushes keep every element exactly once', async () => {
    const before = await versionOf(server.url, path, key)
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      client.post(`${server.url}${path}/content/push`, key, { path: 'feed.items', value: { n: i } })))
    expect(results.filter(r => r.status !== 200)).toEqual([])
    expectConsecutiveVersions(results.map(r => r.etag), before)
    const items = (await call(server.url, 'GET', `${path}/content?path=feed.items`, { token: key })).body as Array<{ n: number }>
    expect(items).toHaveLength(200)
    expect(items.map(item => item.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i))
  })

  it('mixed concurrent increments and decrements on several paths all count', async () => {
    const ops = Array.from({ length: 300 }, (_, i) => ({ op: i % 3 === 0 ? 'decrement' : 'increment', path: `mix.c${i % 5}`, value: 2 }))
    const results = await Promise.all(ops.map(o => client.post(`${server.url}${path}/content/${o.op}`, key, { path: o.path, value: o.value })))
    expect(results.filter(r => r.status !== 200)).toEqual([])
    const expected: Record<string, number> = {}
    for (const o of ops) {
      const name = o.path.slice(4)
      expected[name] = (expected[name] ?? 0) + (o.op === 'increment' ? o.value : -o.value)
    }
    expect((await call(server.url, 'GET', `${path}/content?path=mix`, { token: key })).body).toEqual(expected)
  })
})

describe('races on one server process', () => {
  let server: ServerProcess
  let client: PooledClient
  beforeAll(async () => {
    server = await startServerProcess()
    client = pooledClient(16)
  })
  afterAll(async () => {
    client.close()
    expect(await server.stop()).toBe(0)
    rmSync(server.dataDir, { recursive: true, force: true })
  })

  it('20 writes with the same If-Match: exactly one wins, the rest are 412', async () => {
    const { key, path } = await ownerWithProject(server.url, 'optimist')
    const version = await versionOf(server.url, path, key)
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      call(server.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'winner', value: i }, headers: { 'if-match': `"${version}"` } }).then(r => r.status)))
    expect(results.filter(s => s === 200)).toHaveLength(1)
    expect(results.filter(s => s === 412)).toHaveLength(19)
    expect(await versionOf(server.url, path, key)).toBe(version + 1)
  })

  it('simultaneous signups of one name: one 201, the rest 409', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) =>
      call(server.url, 'POST', '/api/auth/signup', { body: { username: i % 2 === 0 ? 'racer' : '@RACER', password: 'correct horse battery staple' } })))
    expect(results.map(r => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409])
    for (const r of results.filter(r => r.status === 409)) expect(r.body.code).toBe('USERNAME_TAKEN')
  })

  it('simultaneous creation of one project: one 201, the rest 409', async () => {
    const { session } = await ownerWithProject(server.url, 'creator')
    const results = await Promise.all(Array.from({ length: 10 }, () =>
      call(server.url, 'POST', '/api/projects', { token: session, body: { slug: 'same' } })))
    expect(results.map(r => r.status).sort()).toEqual([201, ...Array<number>(9).fill(409)])
  })

  it('deleting a project under a stream of writes answers 200 or 404, never 5xx', async () => {
    const { key, session, path } = await ownerWithProject(server.url, 'doomed')
    const writes = Array.from({ length: 100 }, () => client.post(`${server.url}${path}/content/increment`, key, { path: 'n' }))
    const deletion = call(server.url, 'DELETE', path, { token: session })
    const statuses = (await Promise.all(writes)).map(r => r.status)
    expect((await deletion).status).toBe(200)
    expect(statuses.filter(s => s !== 200 && s !== 404)).toEqual([])
    expect((await call(server.url, 'GET', `${path}/content`, { token: key })).status).toBe(404)
    // The slug is free again, and the new project starts empty at version 0.
    expect((await call(server.url, 'POST', '/api/projects', { token: session, body: { slug: 'demo' } })).status).toBe(201)
    const fresh = await call(server.url, 'GET', `${path}/content`, { token: key })
    expect(fresh.body).toEqual({})
    expect(fresh.headers.get('etag')).toBe('"0"')
  })
})

describe('two server processes on one SQLite file', () => {
  const dataDir = makeDataDir()
  let first: ServerProcess
  let second: ServerProcess
  let clients: PooledClient[] = []
  afterAll(async () => {
    for (const client of clients) client.close()
    const codes = await Promise.all([first?.stop(), second?.stop()])
    rmSync(dataDir, { recursive: true, force: true })
    expect(codes).toEqual([0, 0])
  })

  it('250 concurrent increments through each process end at exactly 500', { timeout: 90_000 }, async () => {
    first = await startServerProcess({ dataDir })
    second = await startServerProcess({ dataDir })
    expect(second.port).not.toBe(first.port)
    clients = [pooledClient(16), pooledClient(16)]
    const { key, path } = await ownerWithProject(first.url, 'shared')
    // The second process sees the account, project and key the first one created.
    expect((await call(second.url, 'GET', `${path}/content`, { token: key })).status).toBe(200)
    const before = await versionOf(first.url, path, key)

    const batches = [first, second].map((server, i) => Promise.all(Array.from({ length: 250 }, () =>
      (clients[i] as PooledClient).post(`${server.url}${path}/content/increment`, key, { path: 'counter' }))))
    const results = (await Promise.all(batches)).flat()
    expect(results.filter(r => r.status !== 200)).toEqual([])
    expectConsecutiveVersions(results.map(r => r.etag), before)

    for (const server of [first, second]) {
      const r = await call(server.url, 'GET', `${path}/content`, { token: key })
      expect(r.body).toEqual({ counter: 500 })
      expect(r.headers.get('etag')).toBe(`"${before + 500}"`)
    }
  })
})
