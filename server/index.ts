// The process: read configuration, open the store, listen, and shut down cleanly on
// SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the store, exit 0).
// Start-up problems end the process with one clear line and a non-zero code, no stack.
import './heap-growth.js'
import type { AddressInfo } from 'node:net'
import { BackupSchedule } from './backup/schedule.js'
import { closeListener } from './http/close-listener.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { createLogger } from './logger.js'
import { Metrics } from './observability/metrics.js'
import { createNode, type ContentdNode } from './node.js'
import { connectRedis, type RedisConnection } from './redis-connection.js'
import { listeningLine } from './startup-line.js'
import { createStore } from './store/index.js'
import { sqliteFile } from './store/sqlite/file.js'
import type { Store } from './store/types.js'

const SHUTDOWN_GRACE_MS = 10_000
// Long enough for a loaded server to read a request a client wrote on a keep-alive connection
// just before the signal; the sweep would otherwise take that connection for idle.
const IDLE_CONNECTION_GRACE_MS = 1000
// Connections already in the accept queue at the signal are accepted first (one per turn),
// but a stream of new ones must not hold the listener open.
const ACCEPT_DRAIN_MAX_MS = 1000

function fail (line: string): never {
  process.stderr.write(`contentd: ${line}\n`)
  process.exit(1)
}

async function main (): Promise<void> {
  let config: Config
  try {
    config = loadConfig()
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message)
    throw e
  }
  const logger = createLogger(config.logLevel)
  let store: Store
  try {
    store = await createStore(config)
    await store.init()
  } catch (e) {
    fail(`cannot open the ${config.store} store: ${e instanceof Error ? e.message : String(e)}`)
  }
  let redis: RedisConnection | undefined
  if (config.redisUrl) {
    try {
      redis = await connectRedis(config.redisUrl, logger)
    } catch (e) {
      fail(`cannot reach Redis at REDIS_URL: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  const metrics = new Metrics()
  // Scheduled backups copy the embedded store's file (config.ts refuses BACKUP_DIR with MongoDB).
  const backups = config.backup.dir === undefined
    ? undefined
    : new BackupSchedule({ source: sqliteFile(config.dataDir), dir: config.backup.dir, intervalMs: config.backup.intervalMs, keep: config.backup.keep, logger, metrics })
  // The node: services, the change feed (and its Redis relay), limits, webhooks, the app, and
  // Socket.IO on the same port (node.ts).
  let node: ContentdNode
  try {
    node = await createNode({ config, store, logger, redis, metrics, ...(backups ? { backups } : {}) })
  } catch (e) {
    fail(`cannot connect the change feed or presence to Redis at REDIS_URL: ${e instanceof Error ? e.message : String(e)}`)
  }
  const { server } = node
  server.on('error', (e: NodeJS.ErrnoException) => {
    fail(e.code === 'EADDRINUSE' ? `port ${config.port} on ${config.host} is already in use` : `cannot listen: ${e.message}`)
  })
  try {
    backups?.start()
  } catch (e) {
    fail(`cannot use BACKUP_DIR: ${e instanceof Error ? e.message : String(e)}`)
  }
  server.listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo
    logger.info({ port, host: config.host, store: config.store }, 'contentd listening')
    // The same news for people: a plain line on stdout next to the JSON logs (log shippers
    // keep a non-JSON line as a raw message). It is info-level news (docs/design.md §13), so it
    // shows exactly when info logs do: LOG_LEVEL=warn, error or silent keep stdout quiet.
    if (logger.isLevelEnabled('info')) process.stdout.write(listeningLine(config, port) + '\n')
    // Deliveries start once the node serves; they resume from each webhook's durable cursor.
    node.startDeliveries()
  })

  let stopping = false
  const shutdown = (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down')
    const force = setTimeout(() => { logger.error('shutdown took too long; exiting'); process.exit(1) }, SHUTDOWN_GRACE_MS)
    force.unref()
    // Live sockets would hold close() open: drop them (clients reconnect to another node).
    // A backup in progress is not waited for: its worker ends with the process, leaving only
    // a .partial file, never a contentd-*.sqlite that was not checked.
    void backups?.stop()
    // Server-Sent Events streams hold their connections open too; their clients resume
    // elsewhere. Socket.IO clients are told and dropped; deliveries and the relay stop.
    const realtimeClosed = node.close()
    // Stop accepting once the connections already established are taken up (their clients
    // may have sent requests: close-listener.ts); once every connection has ended, close the
    // store and Redis and exit. In-flight requests finish; responses tell clients not to
    // reuse the connection. After a short grace, connections left idle are swept until none
    // remain (they would hold the close open).
    server.on('request', (_req, res) => { if (!res.headersSent) res.setHeader('Connection', 'close') })
    // Each sweep runs in the check phase (setImmediate), after the poll phase has read what
    // clients sent: right after a stalled event loop, timers run before pending input is read,
    // and a connection whose request is still unread would look idle and be dropped.
    const sweep = () => setImmediate(() => server.closeIdleConnections())
    closeListener(server, {
      maxDrainMs: ACCEPT_DRAIN_MAX_MS,
      // Started once no connection is accepted any more: a connection accepted last has
      // its request read in the next turn, long before the grace ends.
      onListenerClosed: () => setTimeout(() => {
        sweep()
        setInterval(sweep, 100).unref()
      }, IDLE_CONNECTION_GRACE_MS).unref(),
      onAllClosed: () => {
        realtimeClosed.then(() => store.close()).then(() => redis?.close()).then(() => process.exit(0), (e: unknown) => { logger.error({ err: e }, 'closing the store failed'); process.exit(1) })
      }
    })
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)))
