// The services as createServices builds them, on a temporary SQLite store with a clock the
// test moves, and every access event they announce collected: what the service tests share.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AccessEvent } from '../../server/services/access-events.js'
import { createServices, type Services } from '../../server/services/index.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import { manualClock, type ManualClock } from './clock.js'
import { openSqliteStore } from './stores.js'

export const SESSION_TTL_MS = 60 * 60_000

export interface TempServices {
  dataDir: string
  /** Closed by close(); a test that closes it itself puts an open one back here. */
  store: SqliteStore
  clock: ManualClock
  services: Services
  events: AccessEvent[]
  close: () => Promise<void>
}

export async function openTempServices (prefix: string): Promise<TempServices> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix))
  const store = openSqliteStore({ dataDir, contentLimitBytes: 1 << 20, cacheBytes: 1 << 20 })
  await store.init()
  const clock = manualClock()
  const services = createServices({ store, sessionTtlMs: SESSION_TTL_MS, quotas: { keysPerUser: 1000, projectsPerUser: 1000, webhooksPerProject: 20, idempotencyKeysPerUser: 100_000 }, schemaLimitBytes: 65_536, now: clock.now })
  const events: AccessEvent[] = []
  services.accessEvents.on(event => events.push(event))
  const temp: TempServices = {
    dataDir,
    store,
    clock,
    services,
    events,
    async close () {
      await temp.store.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
  return temp
}
