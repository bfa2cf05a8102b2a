// The HTTP application, separate from listening (server/index.ts): tests build it on a
// temporary store and drive it directly.
import cors from 'cors'
import express, { type Express } from 'express'
import helmet from 'helmet'
import { ContentdError } from '../shared/errors.js'
import type { Config } from './config.js'
import { loadIdentity } from './http/auth-middleware.js'
import { errorHandler, notFound } from './http/errors.js'
import { rateLimit } from './http/rate-limit.js'
import { requestLog } from './http/request-log.js'
import { accountRoutes } from './http/routes/accounts.js'
import { contentRoutes } from './http/routes/content.js'
import { keyRoutes } from './http/routes/keys.js'
import { projectRoutes } from './http/routes/projects.js'
import type { Logger } from './logger.js'
import { Accounts } from './services/accounts.js'
import { Keys } from './services/keys.js'
import { Projects } from './services/projects.js'
import type { Store } from './store/types.js'

export interface AppDependencies {
  config: Config
  store: Store
  logger: Logger
}

export function createApp ({ config, store, logger }: AppDependencies): Express {
  const projects = new Projects(store)
  const accounts = new Accounts(store, config.sessionTtlMs)
  const keys = new Keys(store, projects)
  const limit = config.bodyLimitBytes

  const app = express()
  app.disable('x-powered-by')
  // We send our own ETags (the content version); Express's would hash every body.
  app.set('etag', false)
  app.use(requestLog(logger))
  app.use(helmet())
  app.use(cors({
    origin: config.corsOrigins === '*' ? '*' : config.corsOrigins,
    exposedHeaders: ['ETag', 'X-Request-Id', 'Retry-After']
  }))

  app.get('/healthz', async (_req, res) => {
    try {
      await store.ping()
    } catch {
      throw new ContentdError('STORE_UNAVAILABLE')
    }
    res.json({ status: 'ok' })
  })

  const api = express.Router()
  api.use(loadIdentity(store))
  api.use(rateLimit(config.rateLimitPerMinute))
  api.use(accountRoutes(accounts, config.signup === 'open', limit))
  api.use(keyRoutes(keys, limit))
  api.use(projectRoutes(projects, limit))
  api.use('/:username/:projectSlug', contentRoutes(store, projects, limit))
  app.use('/api', api)

  app.use(notFound)
  app.use(errorHandler)
  return app
}
