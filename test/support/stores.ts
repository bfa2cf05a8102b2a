// Every store the contract suite (test/store-contract/, a file per concern) runs against.
// SQLite is always here, twice: with a document cache and with none, so both the cache-hit
// and the re-read paths are exercised. MongoDB joins when MONGODB_URI is set; each run gets a
// database of its own, dropped afterwards, so runs never see each other's data.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CommitCounter } from '../../server/store/sqlite/lookup-cache.js'
import { SqliteStore, type SqliteStoreOptions } from '../../server/store/sqlite/sqlite-store.js'
import type { ApplyOptions, Store } from '../../server/store/types.js'

/**
 * The commit counter of this test file's process. Every SQLite store a test opens gets it,
 * as every store of one process must: two stores on one file then see each other's commits
 * at once (see server/store/sqlite/lookup-cache.ts).
 */
export const processCommits = new CommitCounter()

/** Options for tests' direct store writes: a user, as a session over HTTP would be recorded. */
export const AS_TESTER: ApplyOptions = { actor: { type: 'user', name: '@tester' } }

/** The server's defaults (HISTORY_LIMIT 10000); tests that are about history pass their own. */
export const DEFAULT_HISTORY = { limit: 10_000, enabled: true } as const

export function openSqliteStore (options: Omit<SqliteStoreOptions, 'commits' | 'history'> & Partial<Pick<SqliteStoreOptions, 'history'>>): SqliteStore {
  return new SqliteStore({ history: DEFAULT_HISTORY, ...options, commits: processCommits })
}

/** Small enough that limit tests stay cheap, large enough for every ordinary test. */
export const CONTRACT_CONTENT_LIMIT = 64 * 1024

export interface StoreUnderTest {
  store: Store
  /** Closes the store and removes everything it stored (directory or database). */
  cleanup (): Promise<void>
}

export interface StoreFactory {
  name: string
  kind: Store['kind']
  /**
   * `historyLimit`: HISTORY_LIMIT (default 10000, the server's), for the retention tests;
   * `changesPageBytes`: CHANGES_PAGE_BYTES (default 1 MiB), for the page-size tests.
   */
  create (options?: { historyLimit?: number, changesPageBytes?: number }): Promise<StoreUnderTest>
}

function sqliteFactory (name: string, cacheBytes: number): StoreFactory {
  return {
    name,
    kind: 'sqlite',
    async create ({ historyLimit = DEFAULT_HISTORY.limit, changesPageBytes }: { historyLimit?: number, changesPageBytes?: number } = {}) {
      const dataDir = mkdtempSync(join(tmpdir(), 'contentd-contract-'))
      const store = openSqliteStore({ dataDir, contentLimitBytes: CONTRACT_CONTENT_LIMIT, cacheBytes, history: { limit: historyLimit, enabled: true }, changesPageBytes })
      await store.init()
      return {
        store,
        async cleanup () {
          await store.close()
          rmSync(dataDir, { recursive: true, force: true })
        }
      }
    }
  }
}

function mongoFactory (uri: string): StoreFactory {
  return {
    name: 'mongodb',
    kind: 'mongodb',
    async create ({ historyLimit = DEFAULT_HISTORY.limit, changesPageBytes }: { historyLimit?: number, changesPageBytes?: number } = {}) {
      const { MongoStore } = await import('../../server/store/mongodb/mongo-store.js')
      const databaseName = `contentd_contract_${Date.now()}_${randomBytes(4).toString('hex')}`
      const store: Store = new MongoStore({ uri, contentLimitBytes: CONTRACT_CONTENT_LIMIT, historyLimit, databaseName, changesPageBytes })
      await store.init()
      return {
        store,
        async cleanup () {
          await store.close()
          const { MongoClient } = await import('mongodb')
          const client = new MongoClient(uri)
          try {
            await client.connect()
            await client.db(databaseName).dropDatabase()
          } finally {
            await client.close()
          }
        }
      }
    }
  }
}

function availableStores (): StoreFactory[] {
  const factories = [
    sqliteFactory('sqlite', 16 * 1024 * 1024),
    sqliteFactory('sqlite (no document cache)', 0)
  ]
  const mongoUri = process.env.MONGODB_URI
  if (mongoUri) {
    factories.push(mongoFactory(mongoUri))
  } else if (process.env.CI === 'true') {
    // Loud on purpose: a CI run that silently skips a store would look like it passed it.
    console.warn('!!! STORE CONTRACT: MongoDB run SKIPPED — MONGODB_URI is not set (no MongoDB server is available on this machine); only SQLite was checked !!!')
  }
  return factories
}

export const storeFactories: StoreFactory[] = availableStores()
