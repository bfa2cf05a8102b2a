// The process: read configuration, open the store, listen, and shut down cleanly on
// SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the store, exit 0).
// Start-up problems end the process with one clear line and a non-zero code, no stack.
import { createServer } from 'node:http'
import { createApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { createLogger } from './logger.js'
import { createStore } from './store/index.js'
import type { Store } from './store/types.js'

const SHUTDOWN_GRACE_MS = 10_000

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
  const app = createApp({ config, store, logger })
  const server = createServer(app)
  server.on('error', (e: NodeJS.ErrnoException) => {
    fail(e.code === 'EADDRINUSE' ? `port ${config.port} on ${config.host} is already in use` : `cannot listen: ${e.message}`)
  })
  server.listen(config.port, config.host, () => {
    logger.info({ port: config.port, host: config.host, store: config.store }, 'contentd listening')
  })

  let stopping = false
  const shutdown = (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down')
    const force = setTimeout(() => { logger.error('shutdown took too long; exiting'); process.exit(1) }, SHUTDOWN_GRACE_MS)
    force.unref()
    server.close(() => {
      store.close().then(() => process.exit(0), (e: unknown) => { logger.error({ err: e }, 'closing the store failed'); process.exit(1) })
    })
    // Idle keep-alive connections would hold close() open; in-flight requests finish.
    server.closeIdleConnections()
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)))
