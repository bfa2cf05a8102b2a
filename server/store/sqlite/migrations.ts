// Schema migrations for the embedded store, applied in order at start, all in one
// transaction. PRAGMA user_version records how many have run. Append new migrations; never
// edit a released one. A migration is SQL, or a function when rows must be rewritten with
// code (the change log's migration replays the old operation log with applyOperation).
import type Database from 'better-sqlite3'
import type { JsonObject } from '../../../shared/json.js'
import { applyOperation, type Operation } from '../../../shared/operations.js'

export type Migration = string | ((db: Database.Database) => void)

/**
 * The change log (docs/design.md §9): `changes` holds one entry per committed version,
 * `checkpoints` the whole content at some versions (content-log.ts explains the layout), and
 * `projects.history_floor` the oldest version whose content and later changes are known.
 * Before it, `projects.content` held a snapshot and `content_log` the operations after it,
 * without time or author: not a history. So each project's history starts at its current
 * version: its content (snapshot + replayed operations) becomes a checkpoint there, and
 * history_floor that version. The old table and columns go.
 */
function changeLog (db: Database.Database): void {
  db.exec(`
    CREATE TABLE changes (
      project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      version INTEGER NOT NULL,
      entry TEXT NOT NULL,
      PRIMARY KEY (project_id, version)
    ) WITHOUT ROWID;
    CREATE TABLE checkpoints (
      project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      version INTEGER NOT NULL,
      content TEXT,
      PRIMARY KEY (project_id, version)
    ) WITHOUT ROWID;
    ALTER TABLE projects ADD COLUMN history_floor INTEGER NOT NULL DEFAULT 0;
  `)
  const projects = db.prepare('SELECT id, version, snapshot_version, content FROM projects').all() as Array<{ id: string, version: number, snapshot_version: number, content: string }>
  const operationsAfter = db.prepare('SELECT operation FROM content_log WHERE project_id = ? AND version > ? ORDER BY version').pluck()
  const insertCheckpoint = db.prepare('INSERT INTO checkpoints (project_id, version, content) VALUES (?, ?, ?)')
  const setFloor = db.prepare('UPDATE projects SET history_floor = ? WHERE id = ?')
  for (const project of projects) {
    const operations = operationsAfter.all(project.id, project.snapshot_version) as string[]
    let doc = JSON.parse(project.content) as JsonObject
    for (const operation of operations) doc = applyOperation(doc, JSON.parse(operation) as Operation)
    const json = operations.length === 0 ? project.content : JSON.stringify(doc)
    // A project still at version 0 with {} needs nothing: that is where every history starts.
    if (project.version === 0 && json === '{}') continue
    insertCheckpoint.run(project.id, project.version, json)
    setFloor.run(project.version, project.id)
  }
  db.exec(`
    DROP TABLE content_log;
    ALTER TABLE projects DROP COLUMN content;
    ALTER TABLE projects DROP COLUMN snapshot_version;
  `)
}

export const MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
  );
  CREATE INDEX sessions_by_user ON sessions(user_id);
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    permission TEXT NOT NULL CHECK (permission IN ('read', 'write')),
    project_ids TEXT,
    expires_at TEXT,
    created_at TEXT NOT NULL
  );
  CREATE INDEX api_keys_by_user ON api_keys(user_id);
  CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    content TEXT NOT NULL DEFAULT '{}',
    UNIQUE (owner_id, slug)
  );
  CREATE TABLE members (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('viewer', 'editor')),
    PRIMARY KEY (project_id, user_id)
  );
  CREATE INDEX members_by_user ON members(user_id);
  `,
  // Large documents are not rewritten on every change: projects.content is the document at
  // snapshot_version, and content_log holds the operations committed after it, in order.
  `
  ALTER TABLE projects ADD COLUMN snapshot_version INTEGER NOT NULL DEFAULT 0;
  UPDATE projects SET snapshot_version = version;
  CREATE TABLE content_log (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    operation TEXT NOT NULL,
    PRIMARY KEY (project_id, version)
  ) WITHOUT ROWID;
  `,
  changeLog,
  // Lists are read a page at a time in the order people see them (docs/design.md §13): each
  // page must be one index range, not a sort of everything a user can see, since other users
  // decide how many projects one is a member of. Usernames and slugs never change, so a
  // membership keeps copies of the names it is listed by.
  `
  ALTER TABLE members ADD COLUMN member_name TEXT NOT NULL DEFAULT '';
  ALTER TABLE members ADD COLUMN project_owner TEXT NOT NULL DEFAULT '';
  ALTER TABLE members ADD COLUMN project_slug TEXT NOT NULL DEFAULT '';
  UPDATE members SET
    member_name = (SELECT username FROM users WHERE users.id = members.user_id),
    project_owner = (SELECT u.username FROM projects p JOIN users u ON u.id = p.owner_id WHERE p.id = members.project_id),
    project_slug = (SELECT slug FROM projects WHERE projects.id = members.project_id);
  DROP INDEX members_by_user;
  CREATE INDEX members_by_user_project ON members(user_id, project_owner, project_slug);
  CREATE INDEX members_by_project_name ON members(project_id, member_name);
  DROP INDEX api_keys_by_user;
  CREATE INDEX api_keys_by_user_age ON api_keys(user_id, created_at, id);
  `,
  // Webhooks (docs/design.md §11): each with its durable cursor, retry state and lease, and
  // its last deliveries. Deleting a project deletes its webhooks; a webhook, its deliveries.
  `
  CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    paths TEXT,
    ops TEXT,
    description TEXT,
    secret_ciphertext TEXT NOT NULL,
    created_at TEXT NOT NULL,
    cursor INTEGER NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0,
    failing_since TEXT,
    next_attempt_at TEXT,
    disabled_at TEXT,
    disabled_reason TEXT,
    lease_owner TEXT,
    lease_until TEXT
  );
  CREATE INDEX webhooks_by_project ON webhooks(project_id, created_at);
  CREATE TABLE webhook_deliveries (
    webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    version INTEGER NOT NULL,
    status INTEGER,
    outcome TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    error TEXT,
    at TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (webhook_id, seq)
  ) WITHOUT ROWID;
  `,
  // Idempotency-Key records (docs/design.md §10, idempotency.ts): status NULL while running.
  `
  CREATE TABLE idempotency_keys (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    caller TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER,
    body TEXT,
    etag TEXT,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (project_id, caller, key)
  ) WITHOUT ROWID;
  CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys(expires_at);
  `,
  // Content schemas (docs/design.md §12), one per project at most; API keys narrowed to paths
  // and operations (JSON arrays, NULL when not narrowed).
  `
  CREATE TABLE project_schemas (
    project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    revision TEXT NOT NULL,
    schema TEXT NOT NULL,
    set_by TEXT NOT NULL,
    set_at TEXT NOT NULL
  ) WITHOUT ROWID;
  ALTER TABLE api_keys ADD COLUMN paths TEXT;
  ALTER TABLE api_keys ADD COLUMN ops TEXT;
  `,
  // Bounded work (docs/design.md §13b). Webhooks are listed a page at a time by (created_at,
  // id). Idempotency-Key records name the user they count against (NULL for the records of
  // before: they are not counted, and are gone within IDEMPOTENCY_TTL) and the usage bucket
  // they were counted in; idempotency_usage holds the per-user counts (idempotency.ts).
  `
  DROP INDEX webhooks_by_project;
  CREATE INDEX webhooks_by_project_age ON webhooks(project_id, created_at, id);
  ALTER TABLE idempotency_keys ADD COLUMN user_id TEXT;
  ALTER TABLE idempotency_keys ADD COLUMN usage_bucket INTEGER;
  CREATE TABLE idempotency_usage (
    user_id TEXT NOT NULL,
    bucket_end INTEGER NOT NULL,
    records INTEGER NOT NULL,
    PRIMARY KEY (user_id, bucket_end)
  ) WITHOUT ROWID;
  CREATE INDEX idempotency_usage_by_end ON idempotency_usage(bucket_end);
  `,
  // Entry sizes (docs/design.md §13b): each entry's UTF-8 length, written at commit, so a page
  // of the log is measured from changes_by_size alone. Reading a value's length in this
  // WITHOUT ROWID table walks all its overflow pages: 7 MB read to measure a 7 MB entry.
  // Entries of before stay NULL and are measured when first paged (content-log.ts):
  // filling them in here would read and rewrite the whole log at start. The index is built
  // from the rows' first pages only (bytes, NULL, is past the end of the old records).
  `
  ALTER TABLE changes ADD COLUMN bytes INTEGER;
  CREATE INDEX changes_by_size ON changes(project_id, version, bytes);
  `,
  // Remembered Idempotency-Keys (docs/design.md §19): each change made under a key keeps the
  // caller, the key and the request's fingerprint beside its entry (never inside it: the
  // entry is what others read), so a retry after IDEMPOTENCY_TTL is still known as applied.
  // The partial index holds only keyed changes, so unkeyed writes cost nothing more.
  `
  ALTER TABLE changes ADD COLUMN idem_caller TEXT;
  ALTER TABLE changes ADD COLUMN idem_key TEXT;
  ALTER TABLE changes ADD COLUMN idem_fingerprint TEXT;
  CREATE INDEX changes_by_idempotency_key ON changes(project_id, idem_caller, idem_key) WHERE idem_key IS NOT NULL;
  `,
  // The path index of the change log (docs/design.md §15): the paths each change writes
  // (shared/live-path.ts indexPathsOf), so `changes?path=` and a path resume read only the
  // changes that may touch the path. No index by version: with one, SQLite's planner walks
  // the project's whole log in version order instead of the paths' keys (measured: 100,000
  // entries); retention's pruning (once per checkpoint) reads the project's keys instead.
  // Entries of before are not indexed: up to path_index_from a path read takes every entry
  // as a candidate (content-log.ts pathEntries); new projects start at 0.
  `
  CREATE TABLE change_paths (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (project_id, path, version)
  ) WITHOUT ROWID;
  ALTER TABLE projects ADD COLUMN path_index_from INTEGER NOT NULL DEFAULT 0;
  UPDATE projects SET path_index_from = version;
  `,
  // App users and rules (docs/design.md §17): a project's rules document and the app sign-in
  // it trusts, one row each at most; the HS256 secret only encrypted (secret-box.ts).
  `
  CREATE TABLE project_rules (
    project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    revision TEXT NOT NULL,
    document TEXT NOT NULL,
    set_by TEXT NOT NULL,
    set_at TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE project_app_auth (
    project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    revision TEXT NOT NULL,
    issuer TEXT NOT NULL,
    audience TEXT,
    jwks TEXT,
    jwks_url TEXT,
    secret_ciphertext TEXT,
    set_by TEXT NOT NULL,
    set_at TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // The change log as a rowid table (BENCHMARKS.md, "The change log's append, counted in WAL
  // pages"). As a WITHOUT ROWID table with a size index beside it, each group commit wrote
  // ~17 WAL pages for entries that fill less than one: SQLite splits index b-trees by
  // rebalancing the last leaf with its siblings, rowid tables appending at the end the quick
  // way. The size needs no index of its own now: `bytes` (and every small column) comes
  // before `entry`, so reading it reads only the row's first page, never the entry's overflow
  // pages. Rewrites every entry once, in this start's transaction (docs/operations.md,
  // "Upgrading"): rows copied in key order, sizes left unknown by the older release (NULL)
  // measured here as the UTF-8 length Buffer.byteLength gives at commit (content-log.ts
  // append), so every row has one. With foreign keys on, dropping the old table deletes
  // nothing else (nothing references it).
  `
  CREATE TABLE changes_rowid (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    idem_caller TEXT,
    idem_key TEXT,
    idem_fingerprint TEXT,
    entry TEXT NOT NULL
  );
  INSERT INTO changes_rowid (project_id, version, bytes, idem_caller, idem_key, idem_fingerprint, entry)
    SELECT project_id, version, coalesce(bytes, length(CAST(entry AS BLOB))), idem_caller, idem_key, idem_fingerprint, entry
    FROM changes ORDER BY project_id, version;
  DROP TABLE changes;
  ALTER TABLE changes_rowid RENAME TO changes;
  CREATE UNIQUE INDEX changes_by_version ON changes(project_id, version);
  CREATE INDEX changes_by_idempotency_key ON changes(project_id, idem_caller, idem_key) WHERE idem_key IS NOT NULL;
  `,
  // The path index by unit (path-index.ts): one row per path for the versions a project
  // appended together, keyed by the unit's last version, `versions` listing the unit's
  // versions that recorded the path (NULL: the key alone, as every row before this reads).
  `
  ALTER TABLE change_paths ADD COLUMN versions TEXT;
  `
]
