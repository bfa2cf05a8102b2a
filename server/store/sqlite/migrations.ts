// Schema migrations for the embedded store, applied in order at start. PRAGMA user_version
// records how many have run. Append new migrations; never edit a released one.
export const MIGRATIONS: readonly string[] = [
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
  `
]
