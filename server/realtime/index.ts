// The realtime layer (DESIGN.md §7): Socket.IO on the HTTP server's own port. Every
// committed change goes to the project's subscribers on this node and, with Redis, to the
// other nodes, which deliver it to theirs; access events end subscriptions on every node.
import type { Server as HttpServer } from 'node:http'
import { Server } from 'socket.io'
import { EVENTS, changeEventOf } from '../../shared/events.js'
import type { Config } from '../config.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../observability/metrics.js'
import type { RedisConnection } from '../redis-connection.js'
import type { Services } from '../services/index.js'
import { projectRef } from '../services/projects.js'
import type { Store } from '../store/types.js'
import { atTime } from './expiry.js'
import { ConnectionCounter, handshake } from './handshake.js'
import { connectRedisAdapter, type RedisAdapter } from './redis-adapter.js'
import { closeConnections } from './shutdown.js'
import { Subscriptions } from './subscriptions.js'
import type { RealtimeServer } from './types.js'

export interface RealtimeDependencies {
  httpServer: HttpServer
  store: Store
  config: Config
  logger: Logger
  /** The same services the HTTP app uses: their access events end subscriptions. */
  services: Services
  /** The node's Redis connection when REDIS_URL is set: enables multi-node broadcast. */
  redis?: RedisConnection | undefined
  metrics?: Metrics | undefined
}

export interface Realtime {
  io: RealtimeServer
  /** Tells every client `shutdown`, closes its connection (clients reconnect elsewhere), then the Redis clients. */
  close (): Promise<void>
}

// Client messages are small ({ project }); the limit keeps a hostile client from making the
// server buffer megabytes.
const MAX_CLIENT_MESSAGE_BYTES = 16 * 1024
// How long closing waits for clients to receive the `shutdown` event (a long-polling client
// collects it on its next request); well inside the process's 10 s shutdown limit.
const SHUTDOWN_FLUSH_GRACE_MS = 1000

export async function attachRealtime (deps: RealtimeDependencies): Promise<Realtime> {
  const { httpServer, store, config, logger, services, metrics } = deps
  const io: RealtimeServer = new Server(httpServer, {
    cors: { origin: config.corsOrigins === '*' ? '*' : config.corsOrigins },
    maxHttpBufferSize: MAX_CLIENT_MESSAGE_BYTES
  })
  let redisAdapter: RedisAdapter | null = null
  if (deps.redis) {
    redisAdapter = await connectRedisAdapter(deps.redis, logger)
    io.adapter(redisAdapter.adapter)
  }
  const multiNode = redisAdapter !== null
  const subscriptions = new Subscriptions(io, store, services.projects, services.identities, config.socketSubscriptionsPerConnection, logger)
  const counter = new ConnectionCounter(config.socketConnectionsPerIdentity)

  io.use(handshake(services.identities, counter, config.socketConnectionsPerIdentity, logger))
  io.on('connection', socket => {
    metrics?.activeSockets.inc()
    const { session, key } = socket.data.identity
    const expiresAt = session?.expiresAt ?? key?.expiresAt ?? null
    const cancelExpiry = expiresAt === null ? null : atTime(Date.parse(expiresAt), () => subscriptions.revokeSocket(socket, 'INVALID_TOKEN'))
    socket.on(EVENTS.subscribe, (request, ack) => { void subscriptions.subscribe(socket, request, ack) })
    socket.on(EVENTS.unsubscribe, (request, ack) => subscriptions.unsubscribe(socket, request, ack))
    socket.on('disconnect', () => {
      metrics?.activeSockets.dec()
      cancelExpiry?.()
      subscriptions.forget(socket)
    })
  })

  let closed = false
  store.onCommit(committed => {
    if (closed) return
    const projectId = committed.project.id
    if (!multiNode && !subscriptions.hasSubscribers(projectId)) return
    const change = changeEventOf(projectRef(committed.project), committed.version, committed.operation, committed.at)
    subscriptions.deliver(projectId, change)
    metrics?.broadcastLag.observe(Math.max(0, Date.now() - Date.parse(committed.at)) / 1000)
    if (multiNode) io.serverSideEmit('contentd:change', projectId, change)
  })
  services.accessEvents.on(event => {
    if (closed) return
    subscriptions.applyAccessEvent(event)
    if (multiNode) io.serverSideEmit('contentd:access', event)
  })
  if (multiNode) {
    io.sockets.on('contentd:change', (projectId, change) => subscriptions.deliver(projectId, change))
    io.sockets.on('contentd:access', event => subscriptions.applyAccessEvent(event))
  }

  return {
    io,
    async close () {
      closed = true
      // Not io.close(): that would also close the HTTP server, which the caller owns.
      await closeConnections(io, SHUTDOWN_FLUSH_GRACE_MS)
      subscriptions.close()
      await redisAdapter?.close()
    }
  }
}
