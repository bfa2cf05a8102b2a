// Idempotency-Key records in the embedded store (docs/design.md §10): one row per project,
// caller and key, in the same file as the content, so they survive a restart and every
// process on the file sees them. A claim is one immediate transaction (read, then insert or
// take over an expired row), so two requests with one key can never both be `claimed`.
//
// Per-user bound (MAX_IDEMPOTENCY_KEYS_PER_USER, docs/design.md §13b): idempotency_usage
// counts each user's records by usage bucket (../idempotency-usage.ts); a claim sums the
// user's unfinished buckets (a range of at most 25 rows of the primary key) inside the same
// transaction, so the bound holds across processes and costs the same at 10 records or 100k.
import type Database from 'better-sqlite3'
import { usageBucketEnd } from '../idempotency-usage.js'
import type { IdempotencyClaim, IdempotencyId, IdempotencyState, StoredResponse } from '../types.js'

interface Row {
  fingerprint: string
  status: number | null
  body: string | null
  etag: string | null
  expires_at: string
  user_id: string | null
  usage_bucket: number | null
}

interface Usage { live: number | null, oldest: number | null }

export class SqliteIdempotency {
  private readonly statements

  constructor (private readonly db: Database.Database) {
    this.statements = {
      find: db.prepare('SELECT fingerprint, status, body, etag, expires_at, user_id, usage_bucket FROM idempotency_keys WHERE project_id = ? AND caller = ? AND key = ?'),
      claim: db.prepare(`INSERT OR REPLACE INTO idempotency_keys (project_id, caller, key, fingerprint, status, body, etag, expires_at, user_id, usage_bucket)
        VALUES (?, ?, ?, ?, NULL, NULL, NULL, ?, ?, ?)`),
      finish: db.prepare('UPDATE idempotency_keys SET status = ?, body = ?, etag = ? WHERE project_id = ? AND caller = ? AND key = ? AND status IS NULL'),
      release: db.prepare('DELETE FROM idempotency_keys WHERE project_id = ? AND caller = ? AND key = ? AND status IS NULL RETURNING user_id, usage_bucket'),
      deleteExpired: db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?'),
      usage: db.prepare('SELECT sum(records) AS live, min(CASE WHEN records > 0 THEN bucket_end END) AS oldest FROM idempotency_usage WHERE user_id = ? AND bucket_end > ?'),
      count: db.prepare(`INSERT INTO idempotency_usage (user_id, bucket_end, records) VALUES (?, ?, 1)
        ON CONFLICT (user_id, bucket_end) DO UPDATE SET records = records + 1`),
      uncount: db.prepare('UPDATE idempotency_usage SET records = records - 1 WHERE user_id = ? AND bucket_end = ? AND records > 0'),
      deleteEndedUsage: db.prepare('DELETE FROM idempotency_usage WHERE bucket_end <= ?')
    }
  }

  claim (claim: IdempotencyClaim): IdempotencyState {
    return this.db.transaction((): IdempotencyState => {
      const s = this.statements
      const row = s.find.get(claim.projectId, claim.caller, claim.key) as Row | undefined
      if (row && row.expires_at > claim.now) {
        if (row.status === null) return { state: 'running', fingerprint: row.fingerprint }
        return { state: 'done', fingerprint: row.fingerprint, response: { status: row.status, body: row.body ?? '', etag: row.etag } }
      }
      const now = Date.parse(claim.now)
      if (claim.maxPerUser !== undefined) {
        const usage = s.usage.get(claim.userId, now) as Usage
        if ((usage.live ?? 0) >= claim.maxPerUser) return { state: 'full', retryAt: new Date(usage.oldest ?? now).toISOString() }
      }
      // The expired row this claim replaces stops counting now.
      if (row && row.user_id !== null && row.usage_bucket !== null && row.usage_bucket > now) s.uncount.run(row.user_id, row.usage_bucket)
      const bucket = usageBucketEnd(claim.now, claim.expiresAt)
      s.claim.run(claim.projectId, claim.caller, claim.key, claim.fingerprint, claim.expiresAt, claim.userId, bucket)
      s.count.run(claim.userId, bucket)
      return { state: 'claimed' }
    }).immediate()
  }

  finish (id: IdempotencyId, response: StoredResponse | null): void {
    if (response) {
      this.statements.finish.run(response.status, response.body, response.etag, id.projectId, id.caller, id.key)
      return
    }
    this.db.transaction(() => {
      const released = this.statements.release.get(id.projectId, id.caller, id.key) as Pick<Row, 'user_id' | 'usage_bucket'> | undefined
      if (released?.user_id != null && released.usage_bucket !== null) this.statements.uncount.run(released.user_id, released.usage_bucket)
    }).immediate()
  }

  deleteExpired (now: string): number {
    this.statements.deleteEndedUsage.run(Date.parse(now))
    return this.statements.deleteExpired.run(now).changes
  }
}
