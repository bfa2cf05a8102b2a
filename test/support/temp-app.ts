// The app on a temporary SQLite store, listening on a free loopback port: for tests that
// drive the HTTP API in-process. Stop it with close(); the data directory is removed.
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Express } from 'express'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../server/app.js'
import { loadConfig, type Config } from '../../server/config.js'
import { createLogger } from '../../server/logger.js'
import { inviteBodiesWithin } from '../../server/http/expect-continue.js'
import { createLimits } from '../../server/limits/limiter.js'
import { attachRealtime, type Realtime } from '../../server/realtime/index.js'
import { createServices, type Services } from '../../server/services/index.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import type { ManualClock } from './clock.js'
import { openSqliteStore } from './stores.js'

export interface TestApp {
  url: string
  /** The Express app itself (RouteTable.of(app) lists its routes). */
  app: Express
  config: Config
  store: SqliteStore
  services: Services
  server: Server
  dataDir: string
  /** Socket.IO on the same port, when started with { realtime: true }. */
  realtime: Realtime | null
  close (): Promise<void>
}

export interface TestAppOptions {
  realtime?: boolean
  /** The services' time (key and session expiry); the system clock when absent. */
  clock?: ManualClock
}

/** `env` uses the variable names of docs/design.md §8 (e.g. { BODY_LIMIT: '2048' }). */
export async function startTestApp (env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'contentd-test-'))
  const config = loadConfig({ DATA_DIR: dataDir, RATE_LIMIT: '0', LOG_LEVEL: 'silent', ...env })
  const store = openSqliteStore({ dataDir, contentLimitBytes: config.contentLimitBytes, cacheBytes: config.cacheBytes, history: config.history })
  await store.init()
  const logger = createLogger(config.logLevel)
  const services = createServices({ store, sessionTtlMs: config.sessionTtlMs, quotas: config.quotas, schemaLimitBytes: config.schemaLimitBytes, slowClientBytes: config.slowClientBytes, queryLimits: config.queries, ...(options.clock ? { now: options.clock.now } : {}) })
  const limits = createLimits(config, undefined, options.clock ? { now: options.clock.now } : {})
  const app = createApp({ config, store, logger, services, limits })
  const server = createServer(app)
  inviteBodiesWithin(server, config.bodyLimitBytes)
  const realtime = options.realtime ? await attachRealtime({ httpServer: server, store, config, logger, services, limits }) : null
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    config,
    store,
    services,
    server,
    dataDir,
    realtime,
    async close () {
      await realtime?.close()
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
      await store.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
