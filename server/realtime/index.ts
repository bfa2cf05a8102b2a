// The realtime layer (docs/design.md §7): Socket.IO on the HTTP server's own port. Its rooms
// read the change feed (server/feed/, §7b), which carries this node's commits and, with
// Redis, the other nodes'; access events from the same feed end subscriptions on every node.
import type { Server as HttpServer } from 'node:http'
import { Server } from 'socket.io'
import { EVENTS } from '../../shared/events.js'
import type { Config } from '../config.js'
import { createLimits, type Limits } from '../limits/limiter.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../observability/metrics.js'
import type { RedisConnection } from '../redis-connection.js'
import { systemClock } from '../clock.js'
import { AccessRecheck } from '../services/access-recheck.js'
import type { Services } from '../services/index.js'
import type { UnsentBudget, UnsentHolder } from '../services/unsent-budget.js'
import type { Store } from '../store/types.js'
import { ConnectionSlots } from './connection-slots.js'
import { engineGate } from './engine-gate.js'
import { routeEvents, type Reply } from './event-router.js'
import { atTime } from '../services/expiry.js'
import { handshake } from './handshake.js'
import { preEncodingParser } from './pre-encoded.js'
import { Presence } from './presence.js'
import { RedisPresenceShare } from './presence-redis.js'
import { LocalPresenceShare, type PresenceShare } from './presence-share.js'
import { RoomAdapter } from './room-adapter.js'
import { capSendBuffer, type SendBuffer } from './send-buffer.js'
import { writeBatching } from './write-batching.js'
import { DirectFrames } from './direct-frames.js'
import { closeConnections } from './shutdown.js'
import { Subscriptions } from './subscriptions.js'
import { isQueryRequest, QuerySubscriptions } from './query-subscriptions.js'
import { PathSubscriptions } from './path-subscriptions.js'
import { AppRules } from '../services/app-rules.js'
import type { AppUser } from '../services/app-tokens.js'
import { SecretBox } from '../webhooks/secret-box.js'
import type { RealtimeServer, RealtimeSocket } from './types.js'

export interface RealtimeDependencies {
  httpServer: HttpServer
  store: Store
  config: Config
  logger: Logger
  /** The same services as the HTTP app's (from createServices): revocations reach live sockets. */
  services: Services
  /**
   * The node's Redis connection when REDIS_URL is set: presence's members and the shared rate
   * limits. What crosses nodes (changes, access and presence events) takes the change feed's
   * relay, which createNode connects (server/node.ts).
   */
  redis?: RedisConnection | undefined
  metrics?: Metrics | undefined
  /** The HTTP app's rate limiters: handshakes and events draw from the same budgets. */
  limits?: Limits | undefined
}

export interface Realtime {
  io: RealtimeServer
  /** Tells every client `shutdown`, closes its connection (clients reconnect elsewhere), then presence's share. */
  close (): Promise<void>
}

// Client messages are small ({ project }); the limit keeps a hostile client from making the
// server buffer megabytes.
const MAX_CLIENT_MESSAGE_BYTES = 16 * 1024
// How long closing waits for clients to receive the `shutdown` event (a long-polling client
// collects it on its next request); well inside the process's 10 s shutdown limit.
const SHUTDOWN_FLUSH_GRACE_MS = 1000
// An Engine.IO connection that has not completed its Socket.IO CONNECT by then is closed
// (Socket.IO's default is 45 s, long for a slot of memory that costs a client one request).
const CONNECT_TIMEOUT_MS = 10_000

export async function attachRealtime (deps: RealtimeDependencies): Promise<Realtime> {
  const { httpServer, store, config, logger, services, metrics } = deps
  const limits = deps.limits ?? createLimits(config, deps.redis)
  const io: RealtimeServer = new Server(httpServer, {
    cors: { origin: config.corsOrigins === '*' ? '*' : config.corsOrigins },
    maxHttpBufferSize: MAX_CLIENT_MESSAGE_BYTES,
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Snapshot acks around the store's JSON text, not serialized again (pre-encoded.ts).
    parser: preEncodingParser,
    // A broadcast to one room without a Set of its recipients per change (room-adapter.ts).
    adapter: RoomAdapter
  })
  // Origin and the per-IP handshake budget, before Engine.IO allocates a session.
  io.engine.use(engineGate({ corsOrigins: config.corsOrigins, limiter: limits.api, trustProxy: config.trustProxy, logger }))
  // Each connection's backlog, counted in the unsent budget once its user is known (below).
  const sendBuffers = new WeakMap<object, SendBuffer>()
  const batchWebSocketWrites = writeBatching({ logger, metrics })
  // A room broadcast's frame straight to the TCP socket when nothing is queued (direct-frames.ts).
  const directFrames = new DirectFrames(logger, metrics)
  io.engine.on('connection', (connection: Parameters<typeof capSendBuffer>[0]) => {
    batchWebSocketWrites(connection)
    const sendBuffer = capSendBuffer(connection, config.socketSendBufferBytes, queuedBytes => {
      metrics?.slowConsumers.inc()
      logger.warn({ queuedBytes, limit: config.socketSendBufferBytes }, 'dropping a Socket.IO connection that does not read what it is sent')
    })
    sendBuffers.set(connection, sendBuffer)
    directFrames.attach(connection, sendBuffer)
  })
  const subscriptions = new Subscriptions(io, store, services.projects, services.identities, {
    perConnection: config.socketSubscriptionsPerConnection,
    resubscribeWindowMs: config.socketResubscribeWindowMs,
    resubscribeBytes: config.socketResubscribeBytes
  }, logger, limits.tarpit, services.feed, metrics)
  // [rules, issue 31] App users subscribe with their tokens and the project's rules (docs/design.md §17).
  const appRules = services.appRules ?? new AppRules({ store, secrets: SecretBox.fromConfig(config), config: config.rules, allowPrivate: config.webhooks.allowPrivate, now: systemClock })
  subscriptions.useAppRules(appRules)
  const appUsers = { rules: appRules, adopt: (socket: RealtimeSocket, user: AppUser) => subscriptions.adoptAppUser(socket, user) }
  // Presence (docs/design.md §14): members on every node through Redis, else in memory.
  // Path subscriptions (docs/design.md §15) hear changes through services.feed, which
  // carries other nodes' changes too; they share the per-connection limit.
  const pathSubscriptions = new PathSubscriptions({
    store,
    projects: services.projects,
    identities: services.identities,
    feed: services.feed,
    perConnection: config.socketSubscriptionsPerConnection,
    projectSubscriptions: socket => subscriptions.count(socket),
    pageBytes: config.changesPageBytes,
    logger,
    appUsers
  })
  subscriptions.countAlso(socket => pathSubscriptions.count(socket))
  const redisShare = deps.redis
    ? new RedisPresenceShare({ redis: deps.redis, ttlMs: config.presenceTtlMs, logger, announce: (entry, type) => presence.announce(entry, type) })
    : null
  const share: PresenceShare = redisShare ?? new LocalPresenceShare()
  const presence = new Presence({ io, feed: services.feed, share, subscriptions, projects: services.projects, identities: services.identities, logger }, {
    stateBytes: config.presenceStateLimitBytes,
    members: config.presenceMembersLimit
  })
  await redisShare?.start()
  subscriptions.observe(presence)
  // Revocations reach live streams even when their one message was lost (Redis down) or
  // never sent here (the CLI): every node re-checks its streams against the store.
  const recheck = new AccessRecheck(store, services.accessEvents, systemClock, logger)
  recheck.addSource(subscriptions)
  // [rules, issue 31] A change of rules whose message this node missed still re-decides its app streams.
  recheck.watchAppProjects(projectIds => appRules.refresh(projectIds))
  // Live queries (docs/design.md §16): `subscribe` with a `query` member, over the shared hub.
  const queries = new QuerySubscriptions(services.queries, services.projects, services.identities, config.queries.perConnection, logger, appUsers)
  recheck.addSource(queries)
  recheck.addSource(services.openStreams)
  recheck.addSource(pathSubscriptions)
  recheck.start()
  const slots = new ConnectionSlots(config.socketConnectionsPerIdentity, held => metrics?.connectionSlots.set(held))
  const handlers = {
    [EVENTS.subscribe]: (socket: RealtimeSocket, request: unknown, reply: Reply) => {
      if (isQueryRequest(request)) queries.subscribe(socket, request, reply)
      else if (PathSubscriptions.names(request)) pathSubscriptions.subscribe(socket, request, reply)
      else subscriptions.subscribe(socket, request, reply)
    },
    [EVENTS.unsubscribe]: (socket: RealtimeSocket, request: unknown, reply: Reply) => {
      if (queries.unsubscribe(socket, request, reply)) return
      if (PathSubscriptions.names(request)) pathSubscriptions.unsubscribe(socket, request, reply)
      else subscriptions.unsubscribe(socket, request, reply)
    },
    ...presence.handlers()
  }

  io.use(handshake({ identities: services.identities, slots, limiter: limits.api, trustProxy: config.trustProxy, logger }))
  io.on('connection', socket => {
    metrics?.activeSockets.inc()
    const { session, key } = socket.data.identity
    const expiresAt = session?.expiresAt ?? key?.expiresAt ?? null
    const cancelExpiry = expiresAt === null ? null : atTime(Date.parse(expiresAt), () => subscriptions.revokeSocket(socket, 'INVALID_TOKEN'))
    const stopCounting = countUnsent(socket, sendBuffers.get(socket.conn), services.unsentBudget, logger, metrics)
    routeEvents(socket, handlers, { limiter: limits.api, logger, metrics })
    // A packet the parser rejects closes the connection; without a listener Socket.IO would
    // also print the client's garbage to stderr.
    socket.on('error', (e: Error) => logger.debug({ err: e }, 'socket closed on a malformed packet'))
    socket.on('disconnect', () => {
      metrics?.activeSockets.dec()
      cancelExpiry?.()
      stopCounting()
      subscriptions.forget(socket)
      queries.forget(socket)
      pathSubscriptions.forget(socket)
      presence.forget(socket)
    })
  })

  let closed = false
  // Changes reach the rooms through the change feed (feed-relay.ts); access events, this
  // node's and (through the feed's relay) the other nodes', end subscriptions here.
  const stopAccess = services.feed.onAccess(event => {
    if (closed) return
    subscriptions.applyAccessEvent(event)
    queries.applyAccessEvent(event)
    pathSubscriptions.applyAccessEvent(event)
  })
  // [rules, issue 31] A change of rules (any node's, heard through the feed after the rules'
  // cache forgot them): app users' subscriptions are decided again (docs/design.md §17).
  const stopRules = appRules.watch(projectId => {
    if (closed) return
    subscriptions.recheckRules(projectId)
    queries.recheckRules(projectId)
    pathSubscriptions.recheckRules(projectId)
  })

  return {
    io,
    async close () {
      closed = true
      stopAccess()
      stopRules()
      await recheck.stop()
      // Not io.close(): that would also close the HTTP server, which the caller owns.
      await closeConnections(io, SHUTDOWN_FLUSH_GRACE_MS)
      subscriptions.close()
      // The leaves of this node's members reach Redis and (through the feed's relay, which
      // the node closes after this) the other nodes.
      await presence.close()
    }
  }
}

/**
 * Counts the connection's backlog in the budget SSE streams share (docs/design.md §13b); the
 * budget drops the connection when the user's or the process's streams hold too much.
 */
function countUnsent (socket: RealtimeSocket, buffer: SendBuffer | undefined, budget: UnsentBudget, logger: Logger, metrics: Metrics | undefined): () => void {
  if (!buffer) return () => {}
  const holder: UnsentHolder = {
    userId: socket.data.identity.user.id,
    unsent: () => buffer.unsent(),
    close: (unsentBytes, scope) => {
      metrics?.slowConsumers.inc()
      logger.warn({ unsentBytes, scope }, `dropping a Socket.IO connection: the ${scope}'s streams hold too much unsent data`)
      buffer.drop()
    }
  }
  const stop = budget.add(holder)
  buffer.onChange = () => budget.noted(holder)
  return () => { buffer.onChange = null; stop() }
}
