// A node (server/node.ts) listening on a free loopback port over a store of the contract
// suite's factories (test/support/stores.ts): SQLite always, MongoDB with MONGODB_URI. For
// tests that must pass on every store through the real transports (HTTP, Socket.IO, SSE).
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../server/config.js'
import { createLogger } from '../../server/logger.js'
import { createNode } from '../../server/node.js'
import type { StoreFactory } from './stores.js'

export interface AppOnStore {
  url: string
  close (): Promise<void>
}

/** `env` uses the variable names of docs/design.md §8; DATA_DIR (the secrets' key file) is a temporary directory. */
export async function startAppOnStore (factory: StoreFactory, env: Record<string, string> = {}): Promise<AppOnStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'contentd-app-on-store-'))
  const config = loadConfig({ DATA_DIR: dataDir, RATE_LIMIT: '0', LOG_LEVEL: 'silent', ...env })
  const { store, cleanup } = await factory.create()
  const node = await createNode({ config, store, logger: createLogger(config.logLevel), realtime: true })
  await new Promise<void>(resolve => node.server.listen(0, '127.0.0.1', resolve))
  const { port } = node.server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    async close () {
      await node.close()
      node.server.closeAllConnections()
      await new Promise<void>(resolve => node.server.close(() => resolve()))
      await cleanup()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
