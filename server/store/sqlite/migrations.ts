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
  `
]
