// Picks the store the configuration names.
import type { Config } from '../config.js'
import { CommitCounter } from './sqlite/lookup-cache.js'
import { SqliteStore } from './sqlite/sqlite-store.js'
import type { Store } from './types.js'

export async function createStore (config: Config): Promise<Store> {
  if (config.store === 'mongodb') {
    // Loaded only when chosen, so the embedded default never loads the driver.
    const { MongoStore } = await import('./mongodb/mongo-store.js')
    return new MongoStore({ uri: config.mongodbUri as string, contentLimitBytes: config.contentLimitBytes, historyLimit: config.history.limit, changesPageBytes: config.changesPageBytes })
  }
  // The server and the CLI open one store per process, so the store's counter is the
  // process's; code that opens several on one file (tests) gives them one counter itself.
  return new SqliteStore({ dataDir: config.dataDir, contentLimitBytes: config.contentLimitBytes, cacheBytes: config.cacheBytes, sqliteCacheBytes: config.sqliteCacheBytes, history: config.history, changesPageBytes: config.changesPageBytes, commits: new CommitCounter() })
}
