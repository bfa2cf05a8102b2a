// Idempotency-Key records in the embedded store (docs/design.md §10): one row per project,
// caller and key, in the same file as the content, so they survive a restart and every
// process on the file sees them. A claim is one immediate transaction (read, then insert or
// take over an expired row), so two requests with one key can never both be `claimed`.
import type Database from 'better-sqlite3'
import type { IdempotencyClaim, IdempotencyId, IdempotencyState, StoredResponse } from '../types.js'

interface Row { fingerprint: string, status: number | null, body: string | null, etag: string | null, expires_at: string }

export class SqliteIdempotency {
  private readonly statements

  constructor (private readonly db: Database.Database) {
    this.statements = {
      find: db.prepare('SELECT fingerprint, status, body, etag, expires_at FROM idempotency_keys WHERE project_id = ? AND caller = ? AND key = ?'),
      claim: db.prepare(`INSERT OR REPLACE INTO idempotency_keys (project_id, caller, key, fingerprint, status, body, etag, expires_at)
        VALUES (?, ?, ?, ?, NULL, NULL, NULL, ?)`),
      finish: db.prepare('UPDATE idempotency_keys SET status = ?, body = ?, etag = ? WHERE project_id = ? AND caller = ? AND key = ? AND status IS NULL'),
      release: db.prepare('DELETE FROM idempotency_keys WHERE project_id = ? AND caller = ? AND key = ? AND status IS NULL'),
      deleteExpired: db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?')
    }
  }

  claim (claim: IdempotencyClaim): IdempotencyState {
    return this.db.transaction((): IdempotencyState => {
      const row = this.statements.find.get(claim.projectId, claim.caller, claim.key) as Row | undefined
      if (row && row.expires_at > claim.now) {
        if (row.status === null) return { state: 'running', fingerprint: row.fingerprint }
        return { state: 'done', fingerprint: row.fingerprint, response: { status: row.status, body: row.body ?? '', etag: row.etag } }
      }
      this.statements.claim.run(claim.projectId, claim.caller, claim.key, claim.fingerprint, claim.expiresAt)
      return { state: 'claimed' }
    }).immediate()
  }

  finish (id: IdempotencyId, response: StoredResponse | null): void {
    if (response) this.statements.finish.run(response.status, response.body, response.etag, id.projectId, id.caller, id.key)
    else this.statements.release.run(id.projectId, id.caller, id.key)
  }

  deleteExpired (now: string): number {
    return this.statements.deleteExpired.run(now).changes
  }
}
