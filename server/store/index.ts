// Picks the store the configuration names.
import type { Config } from '../config.js'
import { SqliteStore } from './sqlite/sqlite-store.js'
import type { Store } from './types.js'

export async function createStore (config: Config): Promise<Store> {
  if (config.store === 'mongodb') {
    throw new Error('STORE=mongodb is not available in this build yet')
  }
  return new SqliteStore({ dataDir: config.dataDir, contentLimitBytes: config.contentLimitBytes, cacheBytes: config.cacheBytes })
}
