// The app on a temporary SQLite store, listening on a free loopback port: for tests that
// drive the HTTP API in-process. Stop it with close(); the data directory is removed.
import { mkdtempSync, rmSync } from 'node:fs'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Express } from 'express'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type Config } from '../../server/config.js'
import { createLogger } from '../../server/logger.js'
import { createNode, type ContentdNode } from '../../server/node.js'
import type { Realtime } from '../../server/realtime/index.js'
import type { Services } from '../../server/services/index.js'
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
  /** Everything the node wired (server/node.ts): the feed, webhooks, limits. */
  node: ContentdNode
  close (): Promise<void>
}

export interface TestAppOptions {
  realtime?: boolean
  /** The services' time (key and session expiry); the system clock when absent. */
  clock?: ManualClock
  /** Start the webhook deliveries (woken by the change feed; polling at the default interval). */
  webhooks?: boolean
  /** How often the webhook dispatcher polls the store (default 1 s). */
  webhookPollIntervalMs?: number
}

/** `env` uses the variable names of docs/design.md §8 (e.g. { BODY_LIMIT: '2048' }). */
export async function startTestApp (env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'contentd-test-'))
  const config = loadConfig({ DATA_DIR: dataDir, RATE_LIMIT: '0', LOG_LEVEL: 'silent', ...env })
  const store = openSqliteStore({ dataDir, contentLimitBytes: config.contentLimitBytes, cacheBytes: config.cacheBytes, history: config.history })
  await store.init()
  const logger = createLogger(config.logLevel)
  const node = await createNode({ config, store, logger, realtime: options.realtime ?? false, ...(options.clock ? { clock: options.clock.now } : {}), ...(options.webhookPollIntervalMs ? { webhookPollIntervalMs: options.webhookPollIntervalMs } : {}) })
  const { app, server, services, realtime } = node
  if (options.webhooks) node.startDeliveries()
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
    node,
    async close () {
      await node.close()
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
      await store.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
