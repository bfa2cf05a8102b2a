// SQLite's page cache per connection of the embedded store (SQLITE_CACHE_BYTES). Its own
// module so the entry reader's worker thread (entry-reader-worker.ts) sets it without loading
// the migrations.

/** SQLITE_CACHE_BYTES's default: what better-sqlite3 builds SQLite with (config.ts says why). */
export const DEFAULT_SQLITE_CACHE_BYTES = 16_000 * 1024

/** `PRAGMA cache_size` for a page cache of at most `bytes` (a negative size is in KiB). */
export function cacheSizePragma (bytes: number): string {
  // At least 1 KiB: SQLite takes a cache_size of 0 for "not set" when it loads the schema, and
  // puts its compiled-in default (better-sqlite3's 16 MB) in its place.
  return `cache_size = -${Math.max(1, Math.floor(bytes / 1024))}`
}
