// The embedded store's records: users, sessions, API keys, projects and members. Every
// request looks some of them up, so the look-ups go through the LookupCache, and every
// write here empties it (see lookup-cache.ts for why that keeps revocation immediate).
// Project content is not here: content-writer.ts and content-log.ts own it.
import type Database from 'better-sqlite3'
import { ContentdError } from '../../../shared/errors.js'
import type {
  ApiKeyRecord, KeyPosition, ListedApiKey, MemberRecord, MemberRole, PageRequest, ProjectName, ProjectPosition, ProjectRecord,
  ProjectRole, SessionRecord, UserRecord
} from '../types.js'
import { quotaExceeded } from '../quota-exceeded.js'
import type { LookupCache } from './lookup-cache.js'

type Row = Record<string, unknown>

const PROJECT_COLUMNS = `p.id, p.owner_id, u.username AS owner_name, p.slug, p.name, p.created_at, p.version`

// Every list below is one statement that reads one page through an index (migration 3), so a
// request costs at most a page, however much data the user or anyone else has.

function prepareStatements (db: Database.Database) {
  return {
    insertUser: db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)'),
    userByName: db.prepare('SELECT * FROM users WHERE username = ?'),
    userById: db.prepare('SELECT * FROM users WHERE id = ?'),
    usersPage: db.prepare('SELECT * FROM users WHERE username > ? ORDER BY username LIMIT ?'),
    insertSession: db.prepare('INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)'),
    sessionByHash: db.prepare('SELECT * FROM sessions WHERE token_hash = ?'),
    deleteSession: db.prepare('DELETE FROM sessions WHERE token_hash = ?'),
    insertKey: db.prepare(`INSERT INTO api_keys (id, user_id, name, prefix, key_hash, permission, project_ids, paths, ops, expires_at, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    keyByHash: db.prepare('SELECT * FROM api_keys WHERE key_hash = ?'),
    keyById: db.prepare('SELECT * FROM api_keys WHERE id = ?'),
    countKeys: db.prepare('SELECT count(*) FROM api_keys WHERE user_id = ?').pluck(),
    // A page of keys, read row by row (listApiKeys stops as soon as the page's cost budget is
    // spent): one index range, and only the rows the page shows are read, each with its
    // ~4 KiB list of scoped project ids. Reading and weighing all `limit + 1` rows in SQL
    // (json_array_length in a window function) took ~5 ms per page of 1,000 scoped projects.
    keysFrom: db.prepare('SELECT * FROM api_keys WHERE user_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?'),
    // The same range, from the index alone (api_keys_by_user_age holds every column asked
    // for): a walk over remembered keys reads none of their ~4 KiB rows (see listApiKeys).
    keyPositionsFrom: db.prepare('SELECT created_at, id FROM api_keys WHERE user_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?'),
    deleteKey: db.prepare('DELETE FROM api_keys WHERE user_id = ? AND id = ?'),
    insertProject: db.prepare('INSERT INTO projects (id, owner_id, slug, name, created_at) VALUES (?, ?, ?, ?, ?)'),
    projectByName: db.prepare(`SELECT ${PROJECT_COLUMNS} FROM projects p JOIN users u ON u.id = p.owner_id WHERE u.username = ? AND p.slug = ?`),
    projectsByIds: db.prepare(`SELECT ${PROJECT_COLUMNS} FROM json_each(?) j JOIN projects p ON p.id = j.value JOIN users u ON u.id = p.owner_id ORDER BY j.key`),
    countOwnedProjects: db.prepare('SELECT count(*) FROM projects WHERE owner_id = ?').pluck(),
    // Owned projects (one owner name, so a slug range of the (owner_id, slug) index: the CASE
    // turns the position into the first slug to list; "~" sorts after every slug) merged
    // with memberships (a range of members_by_user_project), each side at most a page.
    projectsPage: db.prepare(`
      SELECT * FROM (
        SELECT ${PROJECT_COLUMNS}, 'owner' AS role FROM projects p JOIN users u ON u.id = p.owner_id
        WHERE p.owner_id = :user AND p.slug > (
          SELECT CASE WHEN username > :owner THEN '' WHEN username = :owner THEN :slug ELSE '~' END FROM users WHERE id = :user)
        ORDER BY p.slug LIMIT :limit)
      UNION ALL
      SELECT * FROM (
        SELECT ${PROJECT_COLUMNS}, m.role AS role FROM members m JOIN projects p ON p.id = m.project_id JOIN users u ON u.id = p.owner_id
        WHERE m.user_id = :user AND (m.project_owner, m.project_slug) > (:owner, :slug)
        ORDER BY m.project_owner, m.project_slug LIMIT :limit)
      ORDER BY owner_name, slug LIMIT :limit`),
    // An API key's scope is at most 100 projects: those the user can still reach.
    scopedProjectsPage: db.prepare(`
      SELECT ${PROJECT_COLUMNS}, CASE WHEN p.owner_id = :user THEN 'owner' ELSE m.role END AS role
      FROM json_each(:scope) j JOIN projects p ON p.id = j.value JOIN users u ON u.id = p.owner_id
      LEFT JOIN members m ON m.project_id = p.id AND m.user_id = :user
      WHERE (p.owner_id = :user OR m.role IS NOT NULL) AND (u.username, p.slug) > (:owner, :slug)
      ORDER BY u.username, p.slug LIMIT :limit`),
    deleteProject: db.prepare('DELETE FROM projects WHERE id = ?'),
    upsertMember: db.prepare(`INSERT INTO members (project_id, user_id, role, member_name, project_owner, project_slug)
      SELECT p.id, mu.id, :role, mu.username, ou.username, p.slug
      FROM projects p JOIN users ou ON ou.id = p.owner_id JOIN users mu ON mu.id = :user WHERE p.id = :project
      ON CONFLICT (project_id, user_id) DO UPDATE SET role = excluded.role`),
    deleteMember: db.prepare('DELETE FROM members WHERE project_id = ? AND user_id = ?'),
    memberRole: db.prepare('SELECT role FROM members WHERE project_id = ? AND user_id = ?'),
    membersPage: db.prepare(`SELECT user_id, member_name, role FROM members
      WHERE project_id = ? AND member_name > ? ORDER BY member_name LIMIT ?`)
  }
}

export class SqliteRecords {
  private readonly statements: ReturnType<typeof prepareStatements>
  /**
   * Count and insert in one IMMEDIATE transaction: it takes the file's write lock before
   * counting, so no other process can add a key or project in between (docs/design.md §13).
   */
  private readonly insertKeyWithinQuota: Database.Transaction<(k: ApiKeyRecord, max: number) => void>
  private readonly insertProjectWithinQuota: Database.Transaction<(p: Omit<ProjectRecord, 'version'>, max: number) => void>

  constructor (db: Database.Database, private readonly lookups: LookupCache) {
    const statements = this.statements = prepareStatements(db)
    this.insertKeyWithinQuota = db.transaction((k: ApiKeyRecord, max: number) => {
      if ((statements.countKeys.get(k.userId) as number) >= max) throw quotaExceeded(max, 'API key')
      statements.insertKey.run(k.id, k.userId, k.name, k.prefix, k.keyHash, k.permission,
        jsonOrNull(k.projectIds), jsonOrNull(k.paths), jsonOrNull(k.ops), k.expiresAt, k.createdAt)
    })
    this.insertProjectWithinQuota = db.transaction((p: Omit<ProjectRecord, 'version'>, max: number) => {
      if ((statements.countOwnedProjects.get(p.ownerId) as number) >= max) throw quotaExceeded(max, 'project')
      statements.insertProject.run(p.id, p.ownerId, p.slug, p.name, p.createdAt)
    })
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

  listUsers (page: PageRequest<string>): UserRecord[] {
    return (this.statements.usersPage.all(page.after ?? '', page.limit) as Row[]).map(row => toUser(row) as UserRecord)
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

  createApiKey (k: ApiKeyRecord, maxPerUser: number): void {
    this.lookups.forgetAfterOwnWrite()
    this.insertKeyWithinQuota.immediate(k, maxPerUser)
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

  /**
   * The keys that fit the page's cost budget and one past them (it tells that more follow),
   * never fewer than two. A listed key is remembered (lookup-cache.ts; forgotten on any change
   * to keys, projects or users): its record, its scope's names, and so the view the service
   * serializes once per remembered object (services/keys.ts). So the page's positions are
   * read from the index alone, and rows only from the first key not remembered on: a walk
   * through the same keys again costs a page of index entries, not ~300 µs of rows parsed
   * and names looked up (issue 12's fairness scenario).
   */
  listApiKeys (userId: string, page: PageRequest<KeyPosition>): ListedApiKey[] {
    const remembered = this.lookups.refresh().listedKeys
    const budget = page.costBudget ?? Number.MAX_SAFE_INTEGER
    const listed: ListedApiKey[] = []
    let after = page.after ?? { createdAt: '', id: '' }
    let costBefore = 0
    let complete = true
    for (const position of this.statements.keyPositionsFrom.iterate(userId, after.createdAt, after.id, page.limit) as IterableIterator<Row>) {
      if (listed.length >= 2 && costBefore > budget) break
      const key = remembered.get(String(position.id))
      if (!key) { complete = false; break }
      listed.push(key)
      costBefore += key.projectIds?.length ?? 0
      after = key
    }
    if (complete) return listed
    // From the first key not remembered: rows, read one by one until the budget is spent.
    const keys: ApiKeyRecord[] = []
    for (const row of this.statements.keysFrom.iterate(userId, after.createdAt, after.id, page.limit - listed.length) as IterableIterator<Row>) {
      if (listed.length + keys.length >= 2 && costBefore > budget) break
      const key = toKey(row)
      keys.push(key)
      costBefore += key.projectIds?.length ?? 0
    }
    // Each scoped project named once, however many keys share it; a deleted project is
    // absent, so the key lists what remains.
    const names = this.projectNamesByIds([...new Set(keys.flatMap(k => k.projectIds ?? []))])
    for (const key of keys) {
      const projectNames = key.projectIds === null ? null : key.projectIds.flatMap(id => { const name = names.get(id); return name ? [name] : [] })
      listed.push(remembered.remember(key.id, { ...key, projectNames }))
    }
    return listed
  }

  /**
   * Owner and slug of each of `ids` that still exists. Remembered (lookup-cache.ts), the
   * misses read in one statement: a walk through keys scoped to the same projects names
   * them on every page, and reading 200 names took ~0.3 ms of a page's ~1.1 ms (issue 12).
   */
  private projectNamesByIds (ids: string[]): Map<string, ProjectName> {
    const known = this.lookups.refresh().projectNamesById
    const names = new Map<string, ProjectName>()
    const missing: string[] = []
    for (const id of ids) {
      const name = known.get(id)
      if (name) names.set(id, name)
      else missing.push(id)
    }
    for (const p of this.findProjectsByIds(missing)) names.set(p.id, known.remember(p.id, { ownerName: p.ownerName, slug: p.slug }))
    return names
  }

  deleteApiKey (userId: string, id: string): boolean {
    this.lookups.forgetAfterOwnWrite()
    return this.statements.deleteKey.run(userId, id).changes > 0
  }

  // ---- projects and members --------------------------------------------------------

  createProject (p: Omit<ProjectRecord, 'version'>, maxPerOwner: number): ProjectRecord {
    this.lookups.forgetAfterOwnWrite()
    try {
      this.insertProjectWithinQuota.immediate(p, maxPerOwner)
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
    if (ids.length === 0) return []
    return (this.statements.projectsByIds.all(JSON.stringify(ids)) as Row[]).map(row => toProject(row) as ProjectRecord)
  }

  listProjectsForUser (userId: string, page: PageRequest<ProjectPosition>, scope: string[] | null): Array<ProjectRecord & { role: ProjectRole }> {
    const after = page.after ?? { ownerName: '', slug: '' }
    const params = { user: userId, owner: after.ownerName, slug: after.slug, limit: page.limit }
    const rows = scope === null
      ? this.statements.projectsPage.all(params)
      : this.statements.scopedProjectsPage.all({ ...params, scope: JSON.stringify(scope) })
    return (rows as Row[]).map(row => ({ ...(toProject(row) as ProjectRecord), role: row.role as ProjectRole }))
  }

  /** Its members, change log and checkpoints go with it (foreign keys cascade). */
  deleteProject (id: string): void {
    this.lookups.forgetAfterOwnWrite()
    this.statements.deleteProject.run(id)
  }

  setMember (projectId: string, userId: string, role: MemberRole): void {
    this.lookups.forgetAfterOwnWrite()
    this.statements.upsertMember.run({ project: projectId, user: userId, role })
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

  listMembers (projectId: string, page: PageRequest<string>): MemberRecord[] {
    return (this.statements.membersPage.all(projectId, page.after ?? '', page.limit) as Row[])
      .map(row => ({ userId: String(row.user_id), username: String(row.member_name), role: row.role as MemberRole }))
  }
}

function isUniqueViolation (e: unknown): boolean {
  return typeof e === 'object' && e !== null && 'code' in e &&
    (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
}

export function jsonOrNull (list: readonly string[] | null): string | null {
  return list === null ? null : JSON.stringify(list)
}

export function toUser (row: Row | undefined): UserRecord | null {
  if (!row) return null
  return { id: String(row.id), username: String(row.username), passwordHash: String(row.password_hash), createdAt: String(row.created_at) }
}

export function toKey (row: Row): ApiKeyRecord {
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
