// One Redis connection for the node's own commands (shared rate limits, readiness). At start
// an unreachable Redis is an error (the process exits with one clear line, docs/design.md §8);
// once running, a lost connection is retried with backoff and logged, never fatal.
//
// The client library is imported here, when REDIS_URL asks for a connection, not when the
// server starts: it is ~400 modules and ~4 MiB of live heap that a node without Redis never
// uses (BENCHMARKS.md, the memory scenario).
import type { createClient } from 'redis'
import type { Logger } from './logger.js'

export type RedisConnection = ReturnType<typeof createClient>

export async function connectRedis (url: string, logger: Logger): Promise<RedisConnection> {
  let connected = false
  const { createClient } = await import('redis')
  const client = createClient({
    url,
    socket: {
      connectTimeout: 5000,
      // Before the first connection: give up at once so start-up fails clearly.
      reconnectStrategy: (retries, cause) => connected ? Math.min(100 * 2 ** retries, 5000) : cause
    }
  })
  client.on('error', (e: unknown) => {
    if (connected) logger.warn({ err: e }, 'redis connection problem')
  })
  await client.connect()
  connected = true
  return client
}
