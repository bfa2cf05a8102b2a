// The HTTP application, separate from listening (server/index.ts): tests build it on a
// temporary store and drive it directly.
import express, { type Express } from 'express'
import { ContentdError } from '../shared/errors.js'
import type { Config } from './config.js'
import { loadIdentity } from './http/auth-middleware.js'
import { declaredLengthLimit } from './http/body.js'
import { dashboard } from './http/dashboard.js'
import { errorHandler, notFound } from './http/errors.js'
import { asOneLayer, precomputedHeaders } from './http/fast-path.js'
import { authRateLimit, loginThrottle, rateLimit } from './http/rate-limit.js'
import { createLimits, type Limits, type RedisClient } from './limits/limiter.js'
import { requestLog } from './http/request-log.js'
import { RouteTable } from './http/route-table.js'
import { accountRoutes } from './http/routes/accounts.js'
import { contentRoutes } from './http/routes/content.js'
import { eventRoutes } from './http/routes/events.js'
import { keyRoutes } from './http/routes/keys.js'
import { projectRoutes } from './http/routes/projects.js'
import { schemaRoutes } from './http/routes/schema.js'
import { webhookRoutes } from './http/routes/webhooks.js'
import { rulesRoutes } from './http/routes/rules.js'
import { AppRules } from './services/app-rules.js'
import { SecretBox } from './webhooks/secret-box.js'
import { systemClock } from './clock.js'
import type { Logger } from './logger.js'
import type { BackupStatus } from './backup/schedule.js'
import { Metrics } from './observability/metrics.js'
import { openApiRoutes } from './openapi/routes.js'
import { observabilityRoutes } from './observability/routes.js'
import type { Services } from './services/index.js'
import type { Store } from './store/types.js'
import type { WebhookService } from './webhooks/service.js'
import { createWebhooks } from './webhooks/index.js'

export interface AppDependencies {
  config: Config
  store: Store
  logger: Logger
  /** Connected client when REDIS_URL is set: shared rate limits and readiness. */
  redis?: RedisClient
  /** Pass one in to share it with the realtime layer; otherwise the app makes its own. */
  metrics?: Metrics
  /** From createServices, shared with the realtime layer so it hears of revocations. */
  services: Services
  /** The rate limiters; pass the realtime layer's, so HTTP and Socket.IO share one budget. */
  limits?: Limits
  /** The webhooks' management, shared with the process's dispatcher; made here when absent. */
  webhooks?: WebhookService
  /** Scheduled backups (BACKUP_DIR), whose last good one /readyz reports. */
  backups?: BackupStatus
}

export function createApp ({ config, store, logger, redis, metrics = new Metrics(), services, limits = createLimits(config, redis, { onHeld: held => metrics.heldRefusals.set(held) }), webhooks, backups }: AppDependencies): Express {
  const { projects, accounts, keys } = services
  const limit = config.bodyLimitBytes

  const app = express()
  // docs/design.md §13b: `…/content/` is not `…/content` (set before the router is made).
  app.set('strict routing', true)
  app.disable('x-powered-by')
  // We send our own ETags (the content version); Express's would hash every body.
  app.set('etag', false)
  app.set('trust proxy', config.trustProxy)
  metrics.watch(store)
  // Issue 30: each live-query event timed from its change's commit (docs/operations.md).
  services.queries.timeDeliveries(seconds => { metrics.queryEventDelay.observe(seconds) })
  // What every request goes through before routing, as one layer of the router (fast-path.ts).
  app.use(asOneLayer([
    // The request log and id; the request metrics ride on the log's 'finish' listener.
    requestLog(logger, metrics),
    // helmet's and cors's headers, computed once (see fast-path.ts).
    precomputedHeaders(config.corsOrigins === '*' ? '*' : config.corsOrigins, ['ETag', 'X-Request-Id', 'Retry-After', 'Idempotent-Replayed']),
    // A declared body over BODY_LIMIT is 413 at once, whatever the route (docs/design.md §13b).
    declaredLengthLimit(limit)
  ]))

  // Every route goes through one table (see route-table.ts); every /api route starts with
  // the caller's identity and the one rate limiter content and management share.
  const routes = new RouteTable()
  const api = routes.scope('/api', [loadIdentity(services.identities), rateLimit(limits.api)])
  const outside = routes.scope()

  // [rules, issue 31] App users and rules (docs/design.md §17): content routes take app tokens.
  const appRules = services.appRules ?? new AppRules({ store, secrets: SecretBox.fromConfig(config), config: config.rules, allowPrivate: config.webhooks.allowPrivate, now: systemClock })
  // Content first: the hot path, so its requests are matched after the fewest routes.
  contentRoutes(api, store, projects, limit, { batchLimit: config.batchLimit, idempotencyTtlMs: config.idempotencyTtlMs, idempotencyKeysPerUser: config.quotas.idempotencyKeysPerUser, changesPageBytes: config.changesPageBytes }, appRules)
  // Server-Sent Events: the same /api chain, with ?access_token= accepted for EventSource.
  const streams = routes.scope('/api', [loadIdentity(services.identities, { queryToken: true }), rateLimit(limits.api)])
  eventRoutes(streams, { store, projects, feed: services.feed, openStreams: services.openStreams, unsentBudget: services.unsentBudget, heartbeatMs: config.sseHeartbeatMs, bufferBytes: config.socketSendBufferBytes, streamsPerUser: config.socketConnectionsPerIdentity, logger, metrics, queries: services.queries, changesPageBytes: config.changesPageBytes, appRules })
  outside.get('/healthz', async (_req, res) => {
    try {
      await store.ping()
    } catch {
      throw new ContentdError('STORE_UNAVAILABLE')
    }
    res.json({ status: 'ok' })
  })
  observabilityRoutes(outside, config, store, metrics, redis, backups)
  accountRoutes(api, accounts, config.signup === 'open', limit, authRateLimit(limits.auth), loginThrottle(limits.login))
  keyRoutes(api, keys, limit)
  projectRoutes(api, projects, limit)
  schemaRoutes(api, projects, services.schemas, limit)
  rulesRoutes(api, projects, appRules, limit)
  webhookRoutes(api, webhooks ?? createWebhooks({ config, store, logger }).service, projects, limit)
  // The API reference: GET /openapi.json and the page at /docs.
  openApiRoutes(outside, routes)
  routes.install(app)

  // The live dashboard at "/" (public/): static files, after the routes.
  app.use(dashboard())

  app.use(notFound)
  app.use(errorHandler)
  return app
}
