// The embedded store's webhooks (docs/design.md §11): one row per webhook with its cursor,
// retry state and lease, and its last deliveries. Several processes may share the file, so
// the lease is taken and checked inside single statements/transactions (see
// ../webhook-types.ts for the lease's rules).
import type Database from 'better-sqlite3'
import { DELIVERIES_KEPT } from '../../../shared/webhooks.js'
import { quotaExceeded } from '../quota-exceeded.js'
import type { PageRequest } from '../types.js'
import type { DeliveryRecord, WebhookPosition, WebhookProgress, WebhookRecord, WebhookStore } from '../webhook-types.js'
import { jsonOrNull } from './records.js'

type Row = Record<string, unknown>

/**
 * Due webhooks: enabled, not retrying later, not leased, and whose project has moved past the
 * cursor (an idle webhook costs nothing). Every commit wakes the dispatcher, which asks this.
 * The limit is written into the SQL: with a bound `LIMIT ?` SQLite plans this join anew on
 * every run, 50-200 µs even on an empty table in the increment benchmark (~1-2% of an
 * increment) against a few µs with a literal.
 */
function dueSql (limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`listDue: limit must be a non-negative integer, got ${limit}`)
  return `SELECT w.* FROM webhooks w JOIN projects p ON p.id = w.project_id
      WHERE w.disabled_at IS NULL AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= @now)
        AND (w.lease_until IS NULL OR w.lease_until <= @now) AND p.version > w.cursor
      ORDER BY coalesce(w.next_attempt_at, ''), w.id LIMIT ${limit}`
}

function prepareStatements (db: Database.Database) {
  return {
    insert: db.prepare(`INSERT INTO webhooks (id, project_id, url, paths, ops, description, secret_ciphertext, created_at, cursor,
        failures, failing_since, next_attempt_at, disabled_at, disabled_reason, lease_owner, lease_until)
      VALUES (@id, @projectId, @url, @paths, @ops, @description, @secretCiphertext, @createdAt, @cursor,
        @failures, @failingSince, @nextAttemptAt, @disabledAt, @disabledReason, @leaseOwner, @leaseUntil)`),
    byId: db.prepare('SELECT * FROM webhooks WHERE id = ?'),
    countOfProject: db.prepare('SELECT count(*) FROM webhooks WHERE project_id = ?').pluck(),
    // One page through the (project_id, created_at, id) index.
    pageOfProject: db.prepare('SELECT * FROM webhooks WHERE project_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?'),
    delete: db.prepare('DELETE FROM webhooks WHERE project_id = ? AND id = ?'),
    // Read from the (project_id, created_at, id) index alone.
    projectIds: db.prepare('SELECT DISTINCT project_id FROM webhooks').pluck(),
    claim: db.prepare(`UPDATE webhooks SET lease_owner = @owner, lease_until = @until
      WHERE id = @id AND disabled_at IS NULL AND (lease_owner IS NULL OR lease_until <= @now OR lease_owner = @owner)
      RETURNING *`),
    release: db.prepare('UPDATE webhooks SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?'),
    progress: db.prepare(`UPDATE webhooks SET cursor = @cursor, failures = @failures, failing_since = @failingSince,
        next_attempt_at = @nextAttemptAt, disabled_at = @disabledAt, disabled_reason = @disabledReason,
        lease_owner = CASE WHEN @disabledAt IS NULL THEN lease_owner END,
        lease_until = CASE WHEN @disabledAt IS NULL THEN @until END
      WHERE id = @id AND lease_owner = @owner`),
    lastSeq: db.prepare('SELECT coalesce(max(seq), 0) FROM webhook_deliveries WHERE webhook_id = ?').pluck(),
    insertDelivery: db.prepare(`INSERT INTO webhook_deliveries (webhook_id, seq, version, status, outcome, attempt, error, at, duration_ms)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    trimDeliveries: db.prepare('DELETE FROM webhook_deliveries WHERE webhook_id = ? AND seq <= ?'),
    deliveries: db.prepare('SELECT * FROM webhook_deliveries WHERE webhook_id = ? ORDER BY seq DESC LIMIT ?')
  }
}

export class SqliteWebhooks implements WebhookStore {
  private readonly statements: ReturnType<typeof prepareStatements>
  /** dueSql's statement per limit asked for (the dispatcher always asks the same one). */
  private readonly dueByLimit = new Map<number, Database.Statement>()
  private readonly recordTransaction: (id: string, owner: string, progress: WebhookProgress, deliveries: DeliveryRecord[], until: string) => boolean
  private readonly insertWithinQuota: (row: Row, max: number) => void

  constructor (private readonly db: Database.Database) {
    const s = this.statements = prepareStatements(db)
    const record = db.transaction((id: string, owner: string, progress: WebhookProgress, deliveries: DeliveryRecord[], until: string): boolean => {
      if (s.progress.run({ id, owner, until, ...progress }).changes === 0) return false
      let seq = s.lastSeq.get(id) as number
      for (const d of deliveries) {
        seq += 1
        s.insertDelivery.run(id, seq, d.version, d.status, d.outcome, d.attempt, d.error, d.at, d.durationMs)
      }
      s.trimDeliveries.run(id, seq - DELIVERIES_KEPT)
      return true
    })
    // IMMEDIATE: another process may write the file at the same time.
    this.recordTransaction = (...args) => record.immediate(...args)
    // Count and insert in one IMMEDIATE transaction: a second process's create waits for it,
    // so concurrent creates at the limit cannot both pass (docs/design.md §13b).
    const insert = db.transaction((row: Row, max: number) => {
      if ((s.countOfProject.get(row.projectId) as number) >= max) throw quotaExceeded(max, 'webhook')
      s.insert.run(row)
    })
    this.insertWithinQuota = (row, max) => insert.immediate(row, max)
  }

  async create (w: WebhookRecord, maxPerProject = Number.POSITIVE_INFINITY): Promise<void> {
    this.insertWithinQuota({ ...w, paths: jsonOrNull(w.paths), ops: jsonOrNull(w.ops) }, maxPerProject)
  }

  async find (id: string): Promise<WebhookRecord | null> {
    return toWebhook(this.statements.byId.get(id) as Row | undefined)
  }

  async list (projectId: string, page: PageRequest<WebhookPosition>): Promise<WebhookRecord[]> {
    const after = page.after ?? { createdAt: '', id: '' }
    return (this.statements.pageOfProject.all(projectId, after.createdAt, after.id, page.limit) as Row[]).map(row => toWebhook(row) as WebhookRecord)
  }

  async delete (projectId: string, id: string): Promise<boolean> {
    return this.statements.delete.run(projectId, id).changes > 0
  }

  async projectIds (): Promise<string[]> {
    return this.statements.projectIds.all() as string[]
  }

  async listDue (now: string, limit: number): Promise<WebhookRecord[]> {
    let due = this.dueByLimit.get(limit)
    if (!due) {
      due = this.db.prepare(dueSql(limit))
      if (this.dueByLimit.size < 8) this.dueByLimit.set(limit, due)
    }
    return (due.all({ now }) as Row[]).map(row => toWebhook(row) as WebhookRecord)
  }

  async claim (id: string, owner: string, now: string, until: string): Promise<WebhookRecord | null> {
    return toWebhook(this.statements.claim.get({ id, owner, now, until }) as Row | undefined)
  }

  async release (id: string, owner: string): Promise<void> {
    this.statements.release.run(id, owner)
  }

  async record (id: string, owner: string, progress: WebhookProgress, deliveries: DeliveryRecord[], until: string): Promise<boolean> {
    return this.recordTransaction(id, owner, progress, deliveries, until)
  }

  async deliveries (id: string): Promise<DeliveryRecord[]> {
    return (this.statements.deliveries.all(id, DELIVERIES_KEPT) as Row[]).map(row => ({
      version: row.version as number,
      status: row.status as number | null,
      outcome: row.outcome as DeliveryRecord['outcome'],
      attempt: row.attempt as number,
      error: row.error as string | null,
      at: row.at as string,
      durationMs: row.duration_ms as number
    }))
  }
}


export function toWebhook (row: Row | undefined): WebhookRecord | null {
  if (!row) return null
  return {
    id: row.id as string,
    projectId: row.project_id as string,
    url: row.url as string,
    paths: row.paths === null ? null : JSON.parse(row.paths as string) as string[],
    ops: row.ops === null ? null : JSON.parse(row.ops as string) as string[],
    description: row.description as string | null,
    secretCiphertext: row.secret_ciphertext as string,
    createdAt: row.created_at as string,
    cursor: row.cursor as number,
    failures: row.failures as number,
    failingSince: row.failing_since as string | null,
    nextAttemptAt: row.next_attempt_at as string | null,
    disabledAt: row.disabled_at as string | null,
    disabledReason: row.disabled_reason as string | null,
    leaseOwner: row.lease_owner as string | null,
    leaseUntil: row.lease_until as string | null
  }
}
