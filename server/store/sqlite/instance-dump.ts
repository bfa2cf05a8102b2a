// The embedded store's whole-instance export and import (docs/design.md §18; the records:
// ../instance-records.ts).
//
// Export reads inside one read transaction, so the records are one moment of the store
// however long the export takes (writers go on: WAL readers never block them). Every list is
// read a page at a time by its key, never with an open iterator across a yield (a connection
// runs one statement at a time) and never all at once: at most a page of entries, or one
// project's content, is held.
//
// Import writes every record in ONE IMMEDIATE transaction: a bad line or a refused record
// rolls everything back, so the store stays empty. The transaction spans the awaits of
// reading the input; the store must not be used by anything else meanwhile (the CLI opens it
// for the import alone; a server on the same file waits on SQLite's lock, busy_timeout).
import type Database from 'better-sqlite3'
import type { JsonObject } from '../../../shared/json.js'
import { indexPathsOf } from '../../../shared/live-path.js'
import { ImportOrder } from '../instance-import-order.js'
import { ImportRefusedError, InstanceLineError, orderedEntry, type ImportCounts, type InstanceRecord } from '../instance-records.js'
import { jsonOrNull, toKey, toUser } from './records.js'
import { toWebhook } from './webhooks.js'

type Row = Record<string, unknown>

const textOrNull = (value: unknown): string | null => value === null || value === undefined ? null : String(value)

/** Rows read per query while exporting. */
const PAGE = 256

function prepareStatements (db: Database.Database) {
  return {
    holdsData: db.prepare('SELECT EXISTS (SELECT 1 FROM users) OR EXISTS (SELECT 1 FROM projects)').pluck(),
    users: db.prepare('SELECT * FROM users WHERE id > ? ORDER BY id LIMIT ?'),
    keys: db.prepare('SELECT * FROM api_keys WHERE id > ? ORDER BY id LIMIT ?'),
    projects: db.prepare(`SELECT p.id, p.owner_id, u.username AS owner_name, p.slug, p.name, p.created_at, p.version, p.history_floor
      FROM projects p JOIN users u ON u.id = p.owner_id WHERE p.id > ? ORDER BY p.id LIMIT ?`),
    schema: db.prepare('SELECT revision, schema, set_by, set_at FROM project_schemas WHERE project_id = ?'),
    members: db.prepare('SELECT user_id, role FROM members WHERE project_id = ? AND user_id > ? ORDER BY user_id LIMIT ?'),
    checkpoints: db.prepare('SELECT version, content FROM checkpoints WHERE project_id = ? AND version > ? ORDER BY version LIMIT ?'),
    changes: db.prepare('SELECT version, entry FROM changes WHERE project_id = ? AND version > ? ORDER BY version LIMIT ?'),
    webhooks: db.prepare('SELECT * FROM webhooks WHERE project_id = ? AND id > ? ORDER BY id LIMIT ?'),
    rules: db.prepare('SELECT revision, document, set_by, set_at FROM project_rules WHERE project_id = ?'),
    appAuth: db.prepare('SELECT revision, issuer, audience, jwks, jwks_url, secret_ciphertext, set_by, set_at FROM project_app_auth WHERE project_id = ?'),

    insertUser: db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)'),
    insertKey: db.prepare(`INSERT INTO api_keys (id, user_id, name, prefix, key_hash, permission, project_ids, paths, ops, expires_at, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    insertProject: db.prepare('INSERT INTO projects (id, owner_id, slug, name, created_at, version, history_floor) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    insertSchema: db.prepare('INSERT INTO project_schemas (project_id, revision, schema, set_by, set_at) VALUES (?, ?, ?, ?, ?)'),
    insertMember: db.prepare(`INSERT INTO members (project_id, user_id, role, member_name, project_owner, project_slug)
      SELECT p.id, mu.id, :role, mu.username, ou.username, p.slug
      FROM projects p JOIN users ou ON ou.id = p.owner_id JOIN users mu ON mu.id = :user WHERE p.id = :project`),
    insertCheckpoint: db.prepare('INSERT INTO checkpoints (project_id, version, content) VALUES (?, ?, ?)'),
    // With its UTF-8 length, as a commit writes it (content-log.ts append): pages are sized by it.
    insertChange: db.prepare('INSERT INTO changes (project_id, version, entry, bytes) VALUES (?, ?, ?, ?)'),
    // The path index (docs/design.md §15): imported changes are indexed like committed ones.
    insertChangePath: db.prepare('INSERT OR IGNORE INTO change_paths (project_id, path, version) VALUES (?, ?, ?)'),
    insertWebhook: db.prepare(`INSERT INTO webhooks (id, project_id, url, paths, ops, description, secret_ciphertext, created_at, cursor,
        failures, failing_since, next_attempt_at, disabled_at, disabled_reason, lease_owner, lease_until)
      VALUES (@id, @projectId, @url, @paths, @ops, @description, @secretCiphertext, @createdAt, @cursor,
        @failures, @failingSince, @nextAttemptAt, @disabledAt, @disabledReason, NULL, NULL)`),
    insertRules: db.prepare('INSERT INTO project_rules (project_id, revision, document, set_by, set_at) VALUES (?, ?, ?, ?, ?)'),
    insertAppAuth: db.prepare(`INSERT INTO project_app_auth (project_id, revision, issuer, audience, jwks, jwks_url, secret_ciphertext, set_by, set_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  }
}


/** Every row of a keyset-paged query, a page at a time. */
function * paged<K> (readPage: (after: K) => Row[], keyOf: (row: Row) => K, first: K): Generator<Row> {
  let after = first
  for (;;) {
    const rows = readPage(after)
    yield * rows
    if (rows.length < PAGE) return
    after = keyOf(rows[rows.length - 1] as Row)
  }
}

export class SqliteInstanceDump {
  private readonly s: ReturnType<typeof prepareStatements>

  /** `currentContent`: the project's content now (content-log.ts; it may be the cached document). */
  /** `afterImport`: the store forgets what it remembered (its own commits do not move data_version; lookup-cache.ts). */
  constructor (
    private readonly db: Database.Database,
    private readonly currentContent: (projectId: string) => { version: number, json: string } | null,
    private readonly afterImport: () => void
  ) {
    this.s = prepareStatements(db)
  }

  async * exportRecords (): AsyncIterable<InstanceRecord> {
    const s = this.s
    this.db.exec('BEGIN')
    try {
      for (const row of paged(after => s.users.all(after, PAGE) as Row[], row => String(row.id), '')) {
        yield { type: 'user', ...toUser(row) as NonNullable<ReturnType<typeof toUser>> }
      }
      for (const row of paged(after => s.keys.all(after, PAGE) as Row[], row => String(row.id), '')) {
        yield { type: 'apiKey', ...toKey(row) }
      }
      for (const row of paged(after => s.projects.all(after, PAGE) as Row[], row => String(row.id), '')) {
        yield * this.exportProject(row)
      }
    } finally {
      if (this.db.inTransaction) this.db.exec('COMMIT')
    }
  }

  private * exportProject (row: Row): Generator<InstanceRecord> {
    const s = this.s
    const projectId = String(row.id)
    yield {
      type: 'project',
      id: projectId,
      ownerId: String(row.owner_id),
      ownerName: String(row.owner_name),
      slug: String(row.slug),
      name: String(row.name),
      createdAt: String(row.created_at),
      version: Number(row.version),
      historyFloor: Number(row.history_floor)
    }
    const schema = s.schema.get(projectId) as Row | undefined
    if (schema) {
      yield { type: 'schema', projectId, revision: String(schema.revision), schema: JSON.parse(String(schema.schema)), setBy: String(schema.set_by), setAt: String(schema.set_at) }
    }
    const content = this.currentContent(projectId)
    if (!content) throw new Error(`project ${projectId} vanished during the export`)
    yield { type: 'content', projectId, version: content.version, content: JSON.parse(content.json) as JsonObject }
    for (const member of paged(after => s.members.all(projectId, after, PAGE) as Row[], r => String(r.user_id), '')) {
      yield { type: 'member', projectId, userId: String(member.user_id), role: member.role as 'viewer' | 'editor' }
    }
    for (const checkpoint of paged(after => s.checkpoints.all(projectId, after, PAGE) as Row[], r => Number(r.version), -1)) {
      yield { type: 'checkpoint', projectId, version: Number(checkpoint.version), content: checkpoint.content === null ? null : JSON.parse(String(checkpoint.content)) as JsonObject }
    }
    for (const change of paged(after => s.changes.all(projectId, after, PAGE) as Row[], r => Number(r.version), 0)) {
      yield { type: 'change', projectId, entry: orderedEntry(JSON.parse(String(change.entry)) as Record<string, unknown>) }
    }
    for (const webhook of paged(after => s.webhooks.all(projectId, after, PAGE) as Row[], r => String(r.id), '')) {
      const { leaseOwner: _owner, leaseUntil: _until, ...record } = toWebhook(webhook) as NonNullable<ReturnType<typeof toWebhook>>
      yield { type: 'webhook', ...record }
    }
    const rules = s.rules.get(projectId) as Row | undefined
    if (rules) {
      yield { type: 'rules', projectId, revision: String(rules.revision), document: JSON.parse(String(rules.document)) as JsonObject, setBy: String(rules.set_by), setAt: String(rules.set_at) }
    }
    const auth = s.appAuth.get(projectId) as Row | undefined
    if (auth) {
      yield {
        type: 'appAuth',
        projectId,
        revision: String(auth.revision),
        issuer: String(auth.issuer),
        audience: textOrNull(auth.audience),
        jwks: auth.jwks === null ? null : JSON.parse(String(auth.jwks)) as JsonObject,
        jwksUrl: textOrNull(auth.jwks_url),
        secretCiphertext: textOrNull(auth.secret_ciphertext),
        setBy: String(auth.set_by),
        setAt: String(auth.set_at)
      }
    }
  }

  async importRecords (records: AsyncIterable<InstanceRecord>): Promise<ImportCounts> {
    const order = new ImportOrder()
    // IMMEDIATE: the emptiness check and every insert are one step against other processes.
    this.db.exec('BEGIN IMMEDIATE')
    try {
      if (this.s.holdsData.get() === 1) throw new ImportRefusedError()
      for await (const record of records) {
        order.admit(record)
        try {
          this.insert(record)
        } catch (error) {
          throw new InstanceLineError(order.line, `refused by the store: ${(error as Error).message}`)
        }
      }
      order.finish()
      this.db.exec('COMMIT')
      this.afterImport()
      return order.counts
    } finally {
      if (this.db.inTransaction) this.db.exec('ROLLBACK')
    }
  }

  private insert (record: InstanceRecord): void {
    const s = this.s
    switch (record.type) {
      case 'user':
        s.insertUser.run(record.id, record.username, record.passwordHash, record.createdAt)
        return
      case 'apiKey':
        s.insertKey.run(record.id, record.userId, record.name, record.prefix, record.keyHash, record.permission,
          jsonOrNull(record.projectIds), jsonOrNull(record.paths), jsonOrNull(record.ops), record.expiresAt, record.createdAt)
        return
      case 'project':
        s.insertProject.run(record.id, record.ownerId, record.slug, record.name, record.createdAt, record.version, record.historyFloor)
        return
      case 'schema':
        s.insertSchema.run(record.projectId, record.revision, JSON.stringify(record.schema), record.setBy, record.setAt)
        return
      case 'content':
        // The embedded store derives the content from checkpoints and the change log
        // (content-log.ts); the record's version was checked against the project's.
        return
      case 'member':
        if (s.insertMember.run({ project: record.projectId, user: record.userId, role: record.role }).changes === 0) throw new Error(`member ${record.userId} is not a user`)
        return
      case 'checkpoint':
        s.insertCheckpoint.run(record.projectId, record.version, record.content === null ? null : JSON.stringify(record.content))
        return
      case 'change': {
        const entry = JSON.stringify(record.entry)
        s.insertChange.run(record.projectId, record.entry.version, entry, Buffer.byteLength(entry))
        for (const path of indexPathsOf(record.entry)) s.insertChangePath.run(record.projectId, path, record.entry.version)
        return
      }
      case 'webhook': {
        const { type: _type, ...webhook } = record
        s.insertWebhook.run({ ...webhook, paths: jsonOrNull(webhook.paths), ops: jsonOrNull(webhook.ops) })
        return
      }
      case 'rules':
        s.insertRules.run(record.projectId, record.revision, JSON.stringify(record.document), record.setBy, record.setAt)
        return
      case 'appAuth':
        s.insertAppAuth.run(record.projectId, record.revision, record.issuer, record.audience, record.jwks === null ? null : JSON.stringify(record.jwks),
          record.jwksUrl, record.secretCiphertext, record.setBy, record.setAt)
    }
  }
}
