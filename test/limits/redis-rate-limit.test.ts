// With REDIS_URL the rate-limit counters are shared: two nodes on one redis-server allow
// RATE_LIMIT requests between them, not each. /readyz reports Redis; a lost Redis makes
// the node unready but still answers requests (each node falls back to its own counters).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call } from '../support/http.js'
import { startNode, type Node } from './app-with-redis.js'
import { requireRedisUnlessAbsentLocally, startRedisServer, type RedisServer } from '../support/redis-server.js'

const run = requireRedisUnlessAbsentLocally()

describe.skipIf(!run)('rate limits shared through Redis', () => {
  let redis: RedisServer
  let nodeA: Node
  let nodeB: Node
  beforeAll(async () => {
    redis = await startRedisServer()
    nodeA = await startNode({ RATE_LIMIT: '4' }, redis.url)
    nodeB = await startNode({ RATE_LIMIT: '4' }, redis.url)
  })
  afterAll(async () => {
    await nodeA?.close()
    await nodeB?.close()
    await redis?.stop()
  })

  it('counts requests to both nodes against one budget', async () => {
    const statuses: number[] = []
    for (const node of [nodeA, nodeB, nodeA, nodeB]) statuses.push((await call(node.url, 'GET', '/api/me')).status)
    expect(statuses).toEqual([401, 401, 401, 401])
    const fifth = await call(nodeA.url, 'GET', '/api/me')
    expect(fifth.status).toBe(429)
    expect(fifth.body.code).toBe('RATE_LIMITED')
    expect(Number(fifth.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect((await call(nodeB.url, 'GET', '/api/me')).status).toBe(429)
  })

  it('is ready while Redis answers, and unready (503) once it is gone, still answering requests', async () => {
    const ready = await call(nodeA.url, 'GET', '/readyz')
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ status: 'ready', checks: { store: 'ok', redis: 'ok' } })
    await redis.stop()
    const unready = await call(nodeA.url, 'GET', '/readyz')
    expect(unready.status).toBe(503)
    expect(unready.body).toEqual({ message: 'The store is unavailable; retry later', code: 'STORE_UNAVAILABLE' })
    // Liveness is unaffected, and the API falls back to per-node counters instead of failing.
    expect((await call(nodeA.url, 'GET', '/healthz')).status).toBe(200)
    const fallback = await call(nodeA.url, 'GET', '/api/me')
    expect([401, 429]).toContain(fallback.status)
  })
})
