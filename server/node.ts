// One node of contentd, wired in one place (issue 27): the services, the change feed and its
// Redis relay, the rate limiters, the webhooks, the HTTP app and server, and Socket.IO on the
// same port. The process (index.ts) and the tests (test/support/temp-app.ts,
// test/limits/app-with-redis.ts) build nodes here, so they run the same wiring.
//
// The caller owns the store and the Redis connection (opened before, closed after) and
// listening; close() stops what the node started, not the HTTP server.
import { createServer, type Server as HttpServer } from 'node:http'
import type { Express } from 'express'
import { createApp } from './app.js'
import type { BackupStatus } from './backup/schedule.js'
import type { Clock } from './clock.js'
import type { Config } from './config.js'
import type { ChangeFeed } from './feed/change-feed.js'
import { connectRedisRelay, type RedisRelay } from './feed/redis-relay.js'
import { inviteBodiesWithin } from './http/expect-continue.js'
import { createLimits, type Limits } from './limits/limiter.js'
import type { Logger } from './logger.js'
import { Metrics } from './observability/metrics.js'
import { attachRealtime, type Realtime } from './realtime/index.js'
import type { RedisConnection } from './redis-connection.js'
import { createServices, type Services } from './services/index.js'
import type { Store } from './store/types.js'
import { createWebhooks, type Webhooks } from './webhooks/index.js'
import { HookedProjects } from './webhooks/hooked-projects.js'
import { RecentChanges } from './webhooks/recent-changes.js'
import { SecretBox } from './webhooks/secret-box.js'
import { systemClock } from './clock.js'
import type { Resolver } from './webhooks/target-policy.js'

export interface NodeParts {
  config: Config
  /** Opened and initialised by the caller. */
  store: Store
  logger: Logger
  /** Connected when REDIS_URL is set: shared rate limits, the feed's relay (changes, access, presence events), presence's members. */
  redis?: RedisConnection | undefined
  metrics?: Metrics
  /** Tests pass a clock they move (key and session expiry, rate limits); the process uses the system's. Webhooks keep real time (their signatures carry it). */
  clock?: Clock
  /** Socket.IO on the HTTP server (default true). */
  realtime?: boolean
  /** Scheduled backups, whose last good one /readyz reports. */
  backups?: BackupStatus
  /** Tests: how often the webhook dispatcher looks for work, and how it resolves hosts. */
  webhookPollIntervalMs?: number
  webhookResolve?: Resolver
}

export interface ContentdNode {
  app: Express
  server: HttpServer
  services: Services
  /** The change feed every transport reads (services.feed). */
  feed: ChangeFeed
  limits: Limits
  metrics: Metrics
  webhooks: Webhooks
  /** The projects with webhooks on this node's reckoning, and their recent changes kept for the dispatcher. */
  hooked: HookedProjects
  recent: RecentChanges
  realtime: Realtime | null
  /** The feed between nodes, with Redis. */
  relay: RedisRelay | null
  /** Starts the webhook deliveries (the process does once it listens). */
  startDeliveries (): void
  /**
   * Ends open Server-Sent Events streams (their clients resume elsewhere), stops deliveries,
   * Socket.IO and the relay. Not the HTTP server, the store or Redis: their owner closes them.
   */
  close (): Promise<void>
}

export async function createNode (parts: NodeParts): Promise<ContentdNode> {
  const { config, store, logger, redis, clock } = parts
  const metrics = parts.metrics ?? new Metrics()
  const services = createServices({
    store,
    sessionTtlMs: config.sessionTtlMs,
    quotas: config.quotas,
    schemaLimitBytes: config.schemaLimitBytes,
    slowClientBytes: config.slowClientBytes,
    queryLimits: config.queries,
    // [rules, issue 31] App users' rules keep real time, as the token checks do.
    appRules: { secrets: SecretBox.fromConfig(config), config: config.rules, allowPrivate: config.webhooks.allowPrivate, now: systemClock },
    ...(clock ? { now: clock } : {})
  })
  // Other nodes' changes and access events reach this node's feed, hence every transport.
  const relay = redis ? await connectRedisRelay(redis, services.feed, logger, metrics) : null
  // One set of rate limiters: HTTP requests and Socket.IO handshakes and events share budgets.
  const limits = createLimits(config, redis, { onHeld: held => metrics.heldRefusals.set(held), ...(clock ? { now: clock } : {}) })
  // Only projects with webhooks have their changes kept for the dispatcher, on every node.
  const hooked = new HookedProjects(store)
  const recent = new RecentChanges(services.feed, hooked)
  const stopHearingWebhooks = services.feed.onWebhooks(projectId => {
    hooked.recheck(projectId).catch((e: unknown) => logger.warn({ err: e }, 'reading a project\'s webhooks failed'))
  })
  const webhooks = createWebhooks({
    config,
    store,
    logger,
    metrics,
    recent,
    hooked,
    announce: projectId => services.feed.announceWebhooks(projectId),
    ...(parts.webhookPollIntervalMs ? { pollIntervalMs: parts.webhookPollIntervalMs } : {}),
    ...(parts.webhookResolve ? { resolve: parts.webhookResolve } : {})
  })
  const app = createApp({ config, store, logger, redis, metrics, services, limits, webhooks: webhooks.service, ...(parts.backups ? { backups: parts.backups } : {}) })
  // REQUEST_TIMEOUT bounds how long a client may take to send a request (slowloris); Node
  // answers 408 and closes. Its sweep runs every connectionsCheckingInterval.
  const server = createServer({
    requestTimeout: config.requestTimeoutMs,
    headersTimeout: Math.min(config.requestTimeoutMs, 60_000),
    connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs)
  }, app)
  inviteBodiesWithin(server, config.bodyLimitBytes)
  let realtime: Realtime | null = null
  try {
    // Socket.IO on the same port; with Redis, presence keeps its members there (its events go through the feed's relay).
    if (parts.realtime ?? true) realtime = await attachRealtime({ httpServer: server, store, config, logger, services, redis, metrics, limits })
  } catch (e) {
    await relay?.close()
    stopHearingWebhooks()
    recent.close()
    throw e
  }
  let closed: Promise<void> | null = null
  return {
    app,
    server,
    services,
    feed: services.feed,
    limits,
    metrics,
    webhooks,
    hooked,
    recent,
    realtime,
    relay,
    startDeliveries: () => webhooks.dispatcher.start(),
    close () {
      closed ??= (async () => {
        services.openStreams.closeAll()
        await Promise.all([realtime?.close(), webhooks.dispatcher.stop()])
        await relay?.close()
        stopHearingWebhooks()
        recent.close()
      })()
      return closed
    }
  }
}
