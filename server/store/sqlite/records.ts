// The embedded store's records: users, sessions, API keys, projects and members. Every
// request looks some of them up, so the look-ups go through the LookupCache, and every
// write here empties it (see lookup-cache.ts for why that keeps revocation immediate).
// Project content is not here: content-writer.ts and content-log.ts own it.
import type Database from 'better-sqlite3'
import { ContentdError } from '../../../shared/errors.js'
import type { ApiKeyRecord, MemberRecord, MemberRole, ProjectRecord, ProjectRole, SessionRecord, UserRecord } from '../types.js'
import type { LookupCache } from './lookup-cache.js'

type Row = Record<string, unknown>

const PROJECT_COLUMNS = `p.id, p.owner_id, u.username AS owner_name, p.slug, p.name, p.created_at, p.version`

function prepareStatements (db: Database.Database) {
  return {
    insertUser: db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)'),
    userByName: db.prepare('SELECT * FROM users WHERE username = ?'),
    userById: db.prepare('SELECT * FROM users WHERE id = ?'),
    allUsers: db.prepare('SELECT * FROM users ORDER BY username'),
    insertSession: db.prepare('INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)'),
    sessionByHash: db.prepare('SELECT * FROM sessions WHERE token_hash = ?'),
    deleteSession: db.prepare('DELETE FROM sessions WHERE token_hash = ?'),
    insertKey: db.prepare(`INSERT INTO api_keys (id, user_id, name, prefix, key_hash, permission, project_ids, paths, ops, expires_at, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    keyByHash: db.prepare('SELECT * FROM api_keys WHERE key_hash = ?'),
    keyById: db.prepare('SELECT * FROM api_keys WHERE id = ?'),
    keysByUser: db.prepare('SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, id'),
    deleteKey: db.prepare('DELETE FROM api_keys WHERE user_id = ? AND id = ?'),
    insertProject: db.prepare('INSERT INTO projects (id, owner_id, slug, name, created_at) VALUES (?, ?, ?, ?, ?)'),
    projectByName: db.prepare(`SELECT ${PROJECT_COLUMNS} FROM projects p JOIN users u ON u.id = p.owner_id WHERE u.username = ? AND p.slug = ?`),
    projectById: db.prepare(`SELECT ${PROJECT_COLUMNS} FROM projects p JOIN users u ON u.id = p.owner_id WHERE p.id = ?`),
    projectsForUser: db.prepare(`
      SELECT ${PROJECT_COLUMNS}, 'owner' AS role FROM projects p JOIN users u ON u.id = p.owner_id WHERE p.owner_id = ?
      UNION ALL
      SELECT ${PROJECT_COLUMNS}, m.role AS role FROM members m JOIN projects p ON p.id = m.project_id JOIN users u ON u.id = p.owner_id WHERE m.user_id = ?
      ORDER BY owner_name, slug`),
    deleteProject: db.prepare('DELETE FROM projects WHERE id = ?'),
    upsertMember: db.prepare(`INSERT INTO members (project_id, user_id, role) VALUES (?, ?, ?)
      ON CONFLICT (project_id, user_id) DO UPDATE SET role = excluded.role`),
    deleteMember: db.prepare('DELETE FROM members WHERE project_id = ? AND user_id = ?'),
    memberRole: db.prepare('SELECT role FROM members WHERE project_id = ? AND user_id = ?'),
    membersOf: db.prepare(`SELECT m.user_id, u.username, m.role FROM members m JOIN users u ON u.id = m.user_id
      WHERE m.project_id = ? ORDER BY u.username`)
  }
}

export class SqliteRecords {
  private readonly statements: ReturnType<typeof prepareStatements>

  constructor (db: Database.Database, private readonly lookups: LookupCache) {
    this.statements = prepareStatements(db)
  }

  // ---- users, sessions, keys -------------------------------------------------------

  createUser (user: UserRecord): void {
    this.lookups.forgetAfterOwnWrite()
    try {
      this.statements.insertUser.run(user.id, user.username, user.passwordHash, user.createdAt)
    } catch (e) {
      if (isUniqueViolation(e)) throw new ContentdError('USERNAME_TAKEN')
      throw e
    }
  }

  findUserByName (username: string): UserRecord | null {
    return toUser(this.statements.userByName.get(username) as Row | undefined)
  }

  findUserById (id: string): UserRecord | null {
    const users = this.lookups.refresh().users
    const known = users.get(id)
    if (known) return known
    const user = toUser(this.statements.userById.get(id) as Row | undefined)
    return user ? users.remember(id, user) : null
  }

  listUsers (): UserRecord[] {
    return (this.statements.allUsers.all() as Row[]).map(row => toUser(row) as UserRecord)
  }

  createSession (s: SessionRecord): void {
    this.lookups.forgetAfterOwnWrite()
    this.statements.insertSession.run(s.tokenHash, s.userId, s.createdAt, s.expiresAt)
  }

  findSession (tokenHash: string): SessionRecord | null {
    const sessions = this.lookups.refresh().sessions
    const known = sessions.get(tokenHash)
    if (known) return known
    const row = this.statements.sessionByHash.get(tokenHash) as Row | undefined
    if (!row) return null
    return sessions.remember(tokenHash, { tokenHash: String(row.token_hash), userId: String(row.user_id), createdAt: String(row.created_at), expiresAt: String(row.expires_at) })
  }

  deleteSession (tokenHash: string): void {
    this.lookups.forgetAfterOwnWrite()
    this.statements.deleteSession.run(tokenHash)
  }

  createApiKey (k: ApiKeyRecord): void {
    this.lookups.forgetAfterOwnWrite()
    this.statements.insertKey.run(k.id, k.userId, k.name, k.prefix, k.keyHash, k.permission,
      jsonOrNull(k.projectIds), jsonOrNull(k.paths), jsonOrNull(k.ops), k.expiresAt, k.createdAt)
  }

  findApiKeyByHash (keyHash: string): ApiKeyRecord | null {
    const keys = this.lookups.refresh().keys
    const known = keys.get(keyHash)
    if (known) return known
    const row = this.statements.keyByHash.get(keyHash) as Row | undefined
    return row ? keys.remember(keyHash, toKey(row)) : null
  }

  findApiKeyById (id: string): ApiKeyRecord | null {
    const row = this.statements.keyById.get(id) as Row | undefined
    return row ? toKey(row) : null
  }

  listApiKeys (userId: string): ApiKeyRecord[] {
    return (this.statements.keysByUser.all(userId) as Row[]).map(toKey)
  }

  deleteApiKey (userId: string, id: string): boolean {
    this.lookups.forgetAfterOwnWrite()
    return this.statements.deleteKey.run(userId, id).changes > 0
  }

  // ---- projects and members --------------------------------------------------------

  createProject (p: Omit<ProjectRecord, 'version'>): ProjectRecord {
    this.lookups.forgetAfterOwnWrite()
    try {
      this.statements.insertProject.run(p.id, p.ownerId, p.slug, p.name, p.createdAt)
    } catch (e) {
      if (isUniqueViolation(e)) throw new ContentdError('PROJECT_EXISTS')
      throw e
    }
    return { ...p, version: 0 }
  }

  findProject (ownerName: string, slug: string): ProjectRecord | null {
    const lookups = this.lookups.refresh()
    const name = `${ownerName}\0${slug}`
    const known = lookups.projects.get(name)
    if (known) return known
    const project = toProject(this.statements.projectByName.get(ownerName, slug) as Row | undefined)
    return project ? lookups.rememberProject(name, project) : null
  }

  findProjectsByIds (ids: string[]): ProjectRecord[] {
    const found: ProjectRecord[] = []
    for (const id of ids) {
      const project = toProject(this.statements.projectById.get(id) as Row | undefined)
      if (project) found.push(project)
    }
    return found
  }

  listProjectsForUser (userId: string): Array<ProjectRecord & { role: ProjectRole }> {
    return (this.statements.projectsForUser.all(userId, userId) as Row[])
      .map(row => ({ ...(toProject(row) as ProjectRecord), role: row.role as ProjectRole }))
  }

  /** Its members and content log go with it (foreign keys cascade). */
  deleteProject (id: string): void {
    this.lookups.forgetAfterOwnWrite()
    this.statements.deleteProject.run(id)
  }

  setMember (projectId: string, userId: string, role: MemberRole): void {
    this.lookups.forgetAfterOwnWrite()
    this.statements.upsertMember.run(projectId, userId, role)
  }

  removeMember (projectId: string, userId: string): boolean {
    this.lookups.forgetAfterOwnWrite()
    return this.statements.deleteMember.run(projectId, userId).changes > 0
  }

  findMemberRole (projectId: string, userId: string): MemberRole | null {
    const roles = this.lookups.refresh().memberRoles
    const name = `${projectId}\0${userId}`
    const known = roles.get(name)
    if (known !== undefined) return known
    const row = this.statements.memberRole.get(projectId, userId) as Row | undefined
    return roles.remember(name, row ? row.role as MemberRole : null)
  }

  listMembers (projectId: string): MemberRecord[] {
    return (this.statements.membersOf.all(projectId) as Row[])
      .map(row => ({ userId: String(row.user_id), username: String(row.username), role: row.role as MemberRole }))
  }
}

function isUniqueViolation (e: unknown): boolean {
  return typeof e === 'object' && e !== null && 'code' in e &&
    (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
}

function jsonOrNull (list: readonly string[] | null): string | null {
  return list === null ? null : JSON.stringify(list)
}

function toUser (row: Row | undefined): UserRecord | null {
  if (!row) return null
  return { id: String(row.id), username: String(row.username), passwordHash: String(row.password_hash), createdAt: String(row.created_at) }
}

function toKey (row: Row): ApiKeyRecord {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    name: String(row.name),
    prefix: String(row.prefix),
    keyHash: String(row.key_hash),
    permission: row.permission as ApiKeyRecord['permission'],
    projectIds: row.project_ids === null ? null : JSON.parse(String(row.project_ids)) as string[],
    paths: row.paths === null ? null : JSON.parse(String(row.paths)) as string[],
    ops: row.ops === null ? null : JSON.parse(String(row.ops)) as ApiKeyRecord['ops'],
    expiresAt: row.expires_at === null ? null : String(row.expires_at),
    createdAt: String(row.created_at)
  }
}

function toProject (row: Row | undefined): ProjectRecord | null {
  if (!row) return null
  return {
    id: String(row.id),
    ownerId: String(row.owner_id),
    ownerName: String(row.owner_name),
    slug: String(row.slug),
    name: String(row.name),
    createdAt: String(row.created_at),
    version: Number(row.version)
  }
}
