// The HTTP application, separate from listening (server/index.ts): tests build it on a
// temporary store and drive it directly.
import express, { type Express } from 'express'
import { ContentdError } from '../shared/errors.js'
import type { Config } from './config.js'
import { loadIdentity } from './http/auth-middleware.js'
import { jsonBody } from './http/body.js'
import { dashboard } from './http/dashboard.js'
import { errorHandler, notFound } from './http/errors.js'
import { authRateLimit, createLimits, loginThrottle, rateLimit, type Limits, type RedisClient } from './http/rate-limit.js'
import { requestLog } from './http/request-log.js'
import { responseHeaders } from './http/response-headers.js'
import { accountRoutes } from './http/routes/accounts.js'
import { contentRoutes } from './http/routes/content.js'
import { keyRoutes } from './http/routes/keys.js'
import { projectRoutes } from './http/routes/projects.js'
import type { Logger } from './logger.js'
import { Metrics } from './observability/metrics.js'
import { openApiRoutes } from './openapi/routes.js'
import { observabilityRoutes } from './observability/routes.js'
import { AccessEvents } from './services/access-events.js'
import { Accounts } from './services/accounts.js'
import { Keys } from './services/keys.js'
import { Projects } from './services/projects.js'
import type { Store } from './store/types.js'

export interface AppDependencies {
  config: Config
  store: Store
  logger: Logger
  /** Connected client when REDIS_URL is set: shared rate limits and readiness. */
  redis?: RedisClient
  /** Pass one in to share it with the realtime layer; otherwise the app makes its own. */
  metrics?: Metrics
  /** Where revocations are announced; pass the realtime layer's so it ends subscriptions. */
  accessEvents?: AccessEvents
  /** The rate limiters; pass the realtime layer's, so HTTP and Socket.IO share one budget. */
  limits?: Limits
}

export function createApp ({ config, store, logger, redis, metrics = new Metrics(), accessEvents = new AccessEvents(), limits = createLimits(config, redis) }: AppDependencies): Express {
  const projects = new Projects(store, accessEvents)
  const accounts = new Accounts(store, config.sessionTtlMs, accessEvents)
  const keys = new Keys(store, projects, accessEvents)
  const limit = config.bodyLimitBytes

  const app = express()
  app.disable('x-powered-by')
  // We send our own ETags (the content version); Express's would hash every body.
  app.set('etag', false)
  app.set('trust proxy', config.trustProxy)
  app.use(requestLog(logger))
  metrics.watch(store)
  app.use(metrics.track)
  // helmet's and cors's headers, computed once (see response-headers.ts).
  app.use(responseHeaders(config.corsOrigins === '*' ? '*' : config.corsOrigins, ['ETag', 'X-Request-Id', 'Retry-After']))

  const identity = loadIdentity(store)
  // One limiter for the whole API (content and management share each caller's budget).
  const apiRateLimit = rateLimit(limits.api)

  // Content first: the hot path. Its URLs have three or more segments after /api and end in
  // /content or /content/<operation>, which no other route uses; identity and the rate limit
  // run as the first handlers of these routes only (see contentRoutes).
  contentRoutes(store, projects, limit, { prelude: [identity, apiRateLimit], base: '/api/:username/:projectSlug', into: app })

  app.get('/healthz', async (_req, res) => {
    try {
      await store.ping()
    } catch {
      throw new ContentdError('STORE_UNAVAILABLE')
    }
    res.json({ status: 'ok' })
  })

  app.use(observabilityRoutes(config, store, metrics, redis))

  // The live dashboard at "/" (public/), before the API so "/" is not a 404.
  app.use(dashboard())

  const api = express.Router()
  api.use(identity)
  api.use(apiRateLimit)
  api.post(['/auth/login', '/auth/signup'], authRateLimit(limits.auth))
  api.post('/auth/login', jsonBody(limit), loginThrottle(limits.login))
  api.use(accountRoutes(accounts, config.signup === 'open', limit))
  api.use(keyRoutes(keys, limit))
  api.use(projectRoutes(projects, limit))
  app.use('/api', api)

  // The API reference: GET /openapi.json and the page at /docs.
  app.use(openApiRoutes())

  app.use(notFound)
  app.use(errorHandler)
  return app
}
