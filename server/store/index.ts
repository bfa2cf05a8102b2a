// Picks the store the configuration names.
import type { Config } from '../config.js'
import { SqliteStore } from './sqlite/sqlite-store.js'
import type { Store } from './types.js'

export async function createStore (config: Config): Promise<Store> {
  if (config.store === 'mongodb') {
    // Loaded only when chosen, so the embedded default never loads the driver.
    const { MongoStore } = await import('./mongodb/mongo-store.js')
    return new MongoStore({ uri: config.mongodbUri as string, contentLimitBytes: config.contentLimitBytes })
  }
  return new SqliteStore({ dataDir: config.dataDir, contentLimitBytes: config.contentLimitBytes, cacheBytes: config.cacheBytes })
}
