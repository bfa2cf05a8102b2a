// Two real server processes on one SQLite data directory with a real redis-server between
// them (started here on a free port): changes and revocations made on one node reach
// subscribers on the other, in order. Skipped, loudly, only off CI when redis-server is missing.
import { rmSync } from 'node:fs'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, createKey, ownerWithProject } from '../support/http.js'
import { freePort, makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { requireRedisUnlessAbsentLocally, startRedisServer, type RedisServer } from '../support/redis-server.js'
import { connect, Recorder, subscribe } from './client.js'

const hasRedis = requireRedisUnlessAbsentLocally()

describe.skipIf(!hasRedis)('two nodes with Redis', () => {
  let redis: RedisServer
  let node1: ServerProcess
  let node2: ServerProcess
  const dataDir = makeDataDir()
  const sockets: Socket[] = []

  beforeAll(async () => {
    redis = await startRedisServer()
    const env = { REDIS_URL: redis.url }
    node1 = await startServerProcess({ dataDir, env })
    node2 = await startServerProcess({ dataDir, env })
  })
  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    await Promise.all([node1?.stop(), node2?.stop()])
    await redis?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  const open = async (url: string, token: string) => {
    const socket = await connect(url, token)
    sockets.push(socket)
    return new Recorder(socket)
  }

  it('a change made through node 1 reaches a subscriber on node 2, and the other way round', async () => {
    const { key, keyId, path } = await ownerWithProject(node1.url, 'multi')
    const onNode2 = await open(node2.url, key)
    const onNode1 = await open(node1.url, key)
    expect(await subscribe(onNode2.socket, '@multi/demo')).toMatchObject({ ok: true, version: 0 })
    expect(await subscribe(onNode1.socket, '@multi/demo')).toMatchObject({ ok: true, version: 0 })
    expect((await call(node1.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'hits', value: 2 } })).status).toBe(200)
    await onNode2.untilVersion(1)
    expect(onNode2.changes).toEqual([{ project: '@multi/demo', version: 1, op: 'increment', path: 'hits', value: 2, at: expect.any(String), actor: { type: 'key', id: keyId, name: 'writer' } }])
    expect((await call(node2.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'from', value: 'node2' } })).status).toBe(200)
    await onNode1.untilVersion(2)
    expect(onNode1.changes.map(c => [c.version, c.op])).toEqual([[1, 'increment'], [2, 'set']])
  })

  it('writers on both nodes at once: subscribers on each node see every version once, in order', async () => {
    const { key, path } = await ownerWithProject(node1.url, 'both')
    const watchers = [await open(node1.url, key), await open(node2.url, key)]
    for (const w of watchers) expect(await subscribe(w.socket, '@both/demo')).toMatchObject({ ok: true, version: 0 })
    const writes = Array.from({ length: 60 }, (_, i) =>
      call(i % 2 === 0 ? node1.url : node2.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } }))
    expect((await Promise.all(writes)).every(r => r.status === 200)).toBe(true)
    for (const w of watchers) {
      await w.untilVersion(60)
      expect(w.changes.map(c => c.version)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1))
    }
  })

  it('revoking a key through node 1 disconnects its socket on node 2', async () => {
    const { session } = await ownerWithProject(node1.url, 'multirevoke')
    const doomed = await createKey(node1.url, session, { name: 'doomed', permission: 'read' })
    const recorder = await open(node2.url, doomed.key)
    await subscribe(recorder.socket, '@multirevoke/demo')
    expect((await call(node1.url, 'DELETE', `/api/keys/${doomed.id}`, { token: session })).status).toBe(200)
    await recorder.until(() => recorder.disconnectReason !== null, 'disconnect')
    expect(recorder.revoked).toMatchObject([{ code: 'INVALID_TOKEN' }])
  })

  it('survives Redis going away: writes still succeed, and broadcasts resume once it is back', async () => {
    const { key, path } = await ownerWithProject(node1.url, 'outage')
    await redis.stop()
    expect((await call(node1.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })).status).toBe(200)
    expect((await call(node2.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })).status).toBe(200)
    await new Promise(resolve => setTimeout(resolve, 500))
    expect([node1.child.exitCode, node2.child.exitCode]).toEqual([null, null])
    redis = await startRedisServer(redis.port)
    const onNode2 = await open(node2.url, key)
    expect(await subscribe(onNode2.socket, '@outage/demo')).toMatchObject({ ok: true, version: 2 })
    // The nodes reconnect with backoff; keep writing (bounded) until one write crosses over.
    for (let attempt = 0; attempt < 40 && onNode2.changes.length === 0; attempt++) {
      expect((await call(node1.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })).status).toBe(200)
      await new Promise(resolve => setTimeout(resolve, 250))
    }
    expect(onNode2.changes.length).toBeGreaterThan(0)
    expect([node1.child.exitCode, node2.child.exitCode]).toEqual([null, null])
  })
})

describe.skipIf(!hasRedis)('Redis at start', () => {
  it('an unreachable REDIS_URL ends the process with one clear line naming Redis', async () => {
    const deadPort = await freePort()
    const dataDir = makeDataDir()
    try {
      const error = await startServerProcess({ dataDir, env: { REDIS_URL: `redis://127.0.0.1:${deadPort}` } }).then(() => null, (e: Error) => e)
      expect(error?.message).toMatch(/server exited with 1: contentd: .*Redis/)
      const lines = (error?.message ?? '').split(': ').slice(1).join(': ').trim().split('\n')
      expect(lines).toHaveLength(1)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
