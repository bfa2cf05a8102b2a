// The app on a temporary SQLite store with an optional Redis connection, on a free loopback
// port: two of these on one redis-server behave as two nodes of one deployment.
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../server/config.js'
import { createLogger } from '../../server/logger.js'
import { connectRedis, type RedisConnection } from '../../server/redis-connection.js'
import { createNode, type ContentdNode } from '../../server/node.js'
import { openSqliteStore } from '../support/stores.js'

export interface Node {
  url: string
  redis: RedisConnection | undefined
  /** What the node wired (server/node.ts): its change feed, services. */
  node: ContentdNode
  close (): Promise<void>
}

/** `realtime`: Socket.IO on the node's port too (default off). */
export async function startNode (env: Record<string, string>, redisUrl?: string, dataDir?: string, { realtime = false } = {}): Promise<Node> {
  const ownDir = dataDir === undefined
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'contentd-limits-'))
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', ...env, ...(redisUrl ? { REDIS_URL: redisUrl } : {}) })
  const logger = createLogger(config.logLevel)
  const store = openSqliteStore({ dataDir: dir, contentLimitBytes: config.contentLimitBytes, cacheBytes: config.cacheBytes })
  await store.init()
  const redis = redisUrl ? await connectRedis(redisUrl, logger) : undefined
  const node = await createNode({ config, store, logger, redis, realtime })
  const { server } = node
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    redis,
    node,
    async close () {
      await node.close()
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
      if (redis?.isOpen) redis.destroy()
      await store.close()
      if (ownDir) rmSync(dir, { recursive: true, force: true })
    }
  }
}
