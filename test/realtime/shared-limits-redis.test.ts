// With REDIS_URL, Socket.IO handshakes and events draw from the same Redis-held budgets as
// HTTP on every node: a user's events on one node and their requests to another share one
// RATE_LIMIT. Two real server processes on one data directory and one redis-server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { requireRedisUnlessAbsentLocally, startRedisServer, type RedisServer } from '../support/redis-server.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { connect, subscribe } from './client.js'

const run = requireRedisUnlessAbsentLocally()

describe.skipIf(!run)('Socket.IO and HTTP share the rate limit through Redis', () => {
  let redis: RedisServer
  let nodeA: ServerProcess
  let nodeB: ServerProcess
  beforeAll(async () => {
    redis = await startRedisServer()
    const dataDir = makeDataDir()
    const env = { RATE_LIMIT: '8', REDIS_URL: redis.url }
    nodeA = await startServerProcess({ dataDir, env })
    nodeB = await startServerProcess({ dataDir, env })
  })
  afterAll(async () => {
    await nodeA?.stop()
    await nodeB?.stop()
    await redis?.stop()
  })

  it('events on one node and requests to the other count against one budget per user', async () => {
    const { session, key } = await ownerWithProject(nodeA.url, 'shared') // 2 of the user's 8, on node A
    const socket = await connect(nodeB.url, key) // 3, on node B
    try {
      const acks = await Promise.all(Array.from({ length: 10 }, () => subscribe(socket, '@shared/demo')))
      expect(acks.filter(a => a.ok)).toHaveLength(5) // 4…8
      expect(acks.filter(a => !a.ok).every(a => !a.ok && a.code === 'RATE_LIMITED' && typeof a.retryAfter === 'number')).toBe(true)
      const http = await call(nodeA.url, 'GET', '/api/me', { token: session })
      expect(http.status).toBe(429)
      expect(http.body.code).toBe('RATE_LIMITED')
    } finally {
      socket.disconnect()
    }
  })
})
