// SQLite's page cache per connection of the embedded store (SQLITE_CACHE_BYTES,
// server/store/sqlite/page-cache.ts): by default the 16,000 KiB better-sqlite3 builds SQLite
// with; smaller saves memory on a large store at some write CPU (BENCHMARKS.md's memory scenario).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../server/config.js'
import { openDatabase } from '../../server/store/sqlite/database.js'
import { cacheSizePragma, DEFAULT_SQLITE_CACHE_BYTES } from '../../server/store/sqlite/page-cache.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import { openSqliteStore } from '../support/stores.js'

let dataDir: string
const closing: Array<() => unknown> = []
beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'contentd-page-cache-')) })
afterEach(async () => {
  for (const close of closing.splice(0)) await close()
  rmSync(dataDir, { recursive: true, force: true })
})

// What SQLite reports: a negative cache_size is a budget in KiB, a positive one in pages.
const cacheSizeOf = (db: Database.Database) => db.pragma('cache_size', { simple: true }) as number
const connectionOf = (store: SqliteStore) => (store as unknown as { db: Database.Database }).db

describe("the embedded store's SQLite page cache", () => {
  it('is 16,000 KiB by default, what better-sqlite3 builds SQLite with', () => {
    const db = openDatabase(dataDir, 5000)
    closing.push(() => db.close())
    expect(DEFAULT_SQLITE_CACHE_BYTES).toBe(16_000 * 1024)
    expect(cacheSizeOf(db)).toBe(-16_000)
    expect(loadConfig({}).sqliteCacheBytes).toBe(DEFAULT_SQLITE_CACHE_BYTES)
  })

  it('follows SQLITE_CACHE_BYTES from the configuration to the store\'s connection', async () => {
    const config = loadConfig({ SQLITE_CACHE_BYTES: String(4 * 1024 * 1024) })
    expect(config.sqliteCacheBytes).toBe(4 * 1024 * 1024)
    const store = openSqliteStore({ dataDir, contentLimitBytes: 1024 * 1024, cacheBytes: 1024 * 1024, sqliteCacheBytes: config.sqliteCacheBytes })
    closing.push(() => store.close())
    expect(cacheSizeOf(connectionOf(store))).toBe(-4096)
    const defaults = openSqliteStore({ dataDir, contentLimitBytes: 1024 * 1024, cacheBytes: 1024 * 1024 })
    closing.push(() => defaults.close())
    expect(cacheSizeOf(connectionOf(defaults))).toBe(-16_000)
  })

  it('rounds a budget down to whole KiB, to at least 1 KiB (SQLite would take 0 for its compiled-in default)', () => {
    expect(cacheSizePragma(4 * 1024 * 1024 + 1000)).toBe('cache_size = -4096')
    expect(cacheSizePragma(1023)).toBe('cache_size = -1')
    const db = openDatabase(dataDir, 5000, 1024)
    closing.push(() => db.close())
    expect(cacheSizeOf(db)).toBe(-1)
  })

  it('refuses a SQLITE_CACHE_BYTES that is not an integer of at least 1024', () => {
    expect(() => loadConfig({ SQLITE_CACHE_BYTES: '0' })).toThrow(/SQLITE_CACHE_BYTES/)
    expect(() => loadConfig({ SQLITE_CACHE_BYTES: '-1' })).toThrow(/SQLITE_CACHE_BYTES/)
    expect(() => loadConfig({ SQLITE_CACHE_BYTES: '4mb' })).toThrow(/SQLITE_CACHE_BYTES/)
  })
})
