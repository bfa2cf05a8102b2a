// The Socket.IO Redis adapter (multi-node): its own publish and subscribe connections,
// duplicated from the node's Redis connection so they share its URL and retry policy.
import { createAdapter } from '@socket.io/redis-adapter'
import type { Logger } from '../logger.js'
import type { RedisConnection } from '../redis-connection.js'

export interface RedisAdapter {
  adapter: ReturnType<typeof createAdapter>
  close (): Promise<void>
}

export async function connectRedisAdapter (base: RedisConnection, logger: Logger): Promise<RedisAdapter> {
  const pub = base.duplicate()
  const sub = base.duplicate()
  // Without an 'error' listener a dropped connection would throw and end the process; the
  // clients reconnect by themselves (the base connection's reconnect strategy).
  pub.on('error', (e: unknown) => logger.warn({ err: e }, 'redis (socket.io publish) connection problem'))
  sub.on('error', (e: unknown) => logger.warn({ err: e }, 'redis (socket.io subscribe) connection problem'))
  await Promise.all([pub.connect(), sub.connect()])
  // The adapter publishes without awaiting the result. While Redis is away a publish can
  // fail, and an unhandled rejection would end the process: log it instead. Broadcasts lost
  // that way show up to clients as a version gap, and they re-subscribe (docs/design.md §7).
  const publish = pub.publish.bind(pub)
  const safePublish = (...args: Parameters<typeof publish>) => publish(...args).catch((e: unknown) => {
    logger.warn({ err: e }, 'redis publish failed; a broadcast to other nodes was lost')
    return 0
  })
  Object.assign(pub, { publish: safePublish })
  return {
    adapter: createAdapter(pub, sub),
    async close () {
      await Promise.allSettled([pub.close(), sub.close()])
    }
  }
}
