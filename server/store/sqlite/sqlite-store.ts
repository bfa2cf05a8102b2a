// The embedded store: better-sqlite3 on one file, WAL, synchronous=FULL (an acknowledged
// change survives power loss), busy_timeout so several processes can share the file.
//
// Content writes use group commit: operations arriving in the same turn of the event loop
// are applied one after another inside ONE immediate transaction, and acknowledged only
// after it commits. Each keeps its own atomicity (a failing operation leaves the document as
// the previous one left it) and its own version; the batch pays for one fsync and one
// serialization per touched document instead of one per operation.
import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ContentdError, isContentdError } from '../../../shared/errors.js'
import type { JsonObject } from '../../../shared/json.js'
import { applyOperation, growthBound, type Operation } from '../../../shared/operations.js'
import { DocumentCache, jsonOf, type CachedDocument } from '../document-cache.js'
import { versionMatches } from '../version-condition.js'
import type {
  ApiKeyRecord, ApplyOptions, CommitListener, ContentSnapshot, MemberRecord, MemberRole, ProjectRecord,
  ProjectRole, SessionRecord, Store, UserRecord
} from '../types.js'
import { LookupCache, noteCommit } from './lookup-cache.js'
import { MIGRATIONS } from './migrations.js'

export interface SqliteStoreOptions {
  dataDir: string
  contentLimitBytes: number
  cacheBytes: number
  busyTimeoutMs?: number
}

interface PendingWrite {
  project: ProjectRecord
  operation: Operation
  options: ApplyOptions
  resolve: (result: { version: number }) => void
  reject: (error: unknown) => void
}

interface WorkingDocument {
  doc: JsonObject
  version: number
  /** Upper bound of the serialized size while operations pile up; exact after writing. */
  bytes: number
  dirty: boolean
  /** Operations already in content_log after the stored snapshot, and their size. */
  logCount: number
  logBytes: number
  /** Operations of this batch, serialized, with their versions, for content_log. */
  batchLog: Array<{ version: number, json: string }>
  /** An update in this batch replaced the whole document: write a snapshot. */
  replaced: boolean
}

// When a change is logged instead of rewriting the document: only documents this large gain
// from it, and the log stays short enough that replaying it (after another process wrote,
// or a cache eviction) costs less than parsing the document.
const LOG_MIN_DOCUMENT_BYTES = 64 * 1024
const LOG_MAX_ENTRIES = 1000

type Outcome = { ok: true, version: number, at: string, operation: Operation } | { ok: false, error: unknown }

type Row = Record<string, unknown>

const PROJECT_COLUMNS = `p.id, p.owner_id, u.username AS owner_name, p.slug, p.name, p.created_at, p.version`

export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  private readonly db: Database.Database
  private readonly cache: DocumentCache
  private readonly listeners: CommitListener[] = []
  private pending: PendingWrite[] = []
  private flushScheduled = false
  // Documents handed out by readContent. Callers keep snapshots across awaits, so a writer
  // copies such a document before changing it instead of mutating it under their feet.
  private readonly lent = new WeakSet<JsonObject>()
  private readonly statements: ReturnType<SqliteStore['prepareStatements']>
  /** Credentials, users, projects and roles, forgotten whenever anyone else commits. */
  private readonly lookups: LookupCache

  constructor (private readonly options: SqliteStoreOptions) {
    mkdirSync(options.dataDir, { recursive: true })
    this.db = new Database(join(options.dataDir, 'contentd.sqlite'))
    this.db.pragma('journal_mode = WAL')
    this.db.pragma('synchronous = FULL')
    this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`)
    this.db.pragma('foreign_keys = ON')
    this.migrate()
    this.statements = this.prepareStatements()
    this.cache = new DocumentCache(options.cacheBytes)
    const dataVersion = this.statements.dataVersion
    this.lookups = new LookupCache(() => dataVersion.get() as number)
  }

  private migrate (): void {
    // IMMEDIATE: two processes starting together must not both run a migration.
    this.db.transaction(() => {
      const done = this.db.pragma('user_version', { simple: true }) as number
      for (let i = done; i < MIGRATIONS.length; i++) this.db.exec(MIGRATIONS[i] as string)
      if (done < MIGRATIONS.length) this.db.pragma(`user_version = ${MIGRATIONS.length}`)
    }).immediate()
  }

  private prepareStatements () {
    const db = this.db
    return {
      insertUser: db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)'),
      userByName: db.prepare('SELECT * FROM users WHERE username = ?'),
      userById: db.prepare('SELECT * FROM users WHERE id = ?'),
      allUsers: db.prepare('SELECT * FROM users ORDER BY username'),
      insertSession: db.prepare('INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)'),
      sessionByHash: db.prepare('SELECT * FROM sessions WHERE token_hash = ?'),
      deleteSession: db.prepare('DELETE FROM sessions WHERE token_hash = ?'),
      insertKey: db.prepare(`INSERT INTO api_keys (id, user_id, name, prefix, key_hash, permission, project_ids, expires_at, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
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
        WHERE m.project_id = ? ORDER BY u.username`),
      projectVersion: db.prepare('SELECT version FROM projects WHERE id = ?'),
      projectContent: db.prepare('SELECT version, snapshot_version, content FROM projects WHERE id = ?'),
      logAfter: db.prepare('SELECT operation FROM content_log WHERE project_id = ? AND version > ? ORDER BY version'),
      writeContent: db.prepare('UPDATE projects SET content = ?, version = ?, snapshot_version = ? WHERE id = ?'),
      clearLog: db.prepare('DELETE FROM content_log WHERE project_id = ?'),
      appendLog: db.prepare('INSERT INTO content_log (project_id, version, operation) VALUES (?, ?, ?)'),
      writeVersion: db.prepare('UPDATE projects SET version = ? WHERE id = ?'),
      ping: db.prepare('SELECT 1 AS ok'),
      dataVersion: db.prepare('PRAGMA data_version').pluck()
    }
  }

  async init (): Promise<void> {}

  async ping (): Promise<void> {
    this.statements.ping.get()
  }

  async close (): Promise<void> {
    // Let writes already accepted finish before the file closes.
    if (this.pending.length > 0) this.flush()
    if (this.db.open) this.db.close()
  }

  onCommit (listener: CommitListener): void {
    this.listeners.push(listener)
  }

  // ---- users, sessions, keys -------------------------------------------------------

  async createUser (user: UserRecord): Promise<void> {
    this.lookups.forgetAfterOwnWrite()
    try {
      this.statements.insertUser.run(user.id, user.username, user.passwordHash, user.createdAt)
    } catch (e) {
      if (isUniqueViolation(e)) throw new ContentdError('USERNAME_TAKEN')
      throw e
    }
  }

  async findUserByName (username: string): Promise<UserRecord | null> {
    return toUser(this.statements.userByName.get(username) as Row | undefined)
  }

  async findUserById (id: string): Promise<UserRecord | null> {
    const users = this.lookups.refresh().users
    const known = users.get(id)
    if (known) return known
    const user = toUser(this.statements.userById.get(id) as Row | undefined)
    return user ? users.remember(id, user) : null
  }

  async listUsers (): Promise<UserRecord[]> {
    return (this.statements.allUsers.all() as Row[]).map(row => toUser(row) as UserRecord)
  }

  async createSession (s: SessionRecord): Promise<void> {
    this.lookups.forgetAfterOwnWrite()
    this.statements.insertSession.run(s.tokenHash, s.userId, s.createdAt, s.expiresAt)
  }

  async findSession (tokenHash: string): Promise<SessionRecord | null> {
    const sessions = this.lookups.refresh().sessions
    const known = sessions.get(tokenHash)
    if (known) return known
    const row = this.statements.sessionByHash.get(tokenHash) as Row | undefined
    if (!row) return null
    return sessions.remember(tokenHash, { tokenHash: String(row.token_hash), userId: String(row.user_id), createdAt: String(row.created_at), expiresAt: String(row.expires_at) })
  }

  async deleteSession (tokenHash: string): Promise<void> {
    this.lookups.forgetAfterOwnWrite()
    this.statements.deleteSession.run(tokenHash)
  }

  async createApiKey (k: ApiKeyRecord): Promise<void> {
    this.lookups.forgetAfterOwnWrite()
    this.statements.insertKey.run(k.id, k.userId, k.name, k.prefix, k.keyHash, k.permission,
      k.projectIds === null ? null : JSON.stringify(k.projectIds), k.expiresAt, k.createdAt)
  }

  async findApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | null> {
    const keys = this.lookups.refresh().keys
    const known = keys.get(keyHash)
    if (known) return known
    const row = this.statements.keyByHash.get(keyHash) as Row | undefined
    return row ? keys.remember(keyHash, toKey(row)) : null
  }

  async findApiKeyById (id: string): Promise<ApiKeyRecord | null> {
    const row = this.statements.keyById.get(id) as Row | undefined
    return row ? toKey(row) : null
  }

  async listApiKeys (userId: string): Promise<ApiKeyRecord[]> {
    return (this.statements.keysByUser.all(userId) as Row[]).map(toKey)
  }

  async deleteApiKey (userId: string, id: string): Promise<boolean> {
    this.lookups.forgetAfterOwnWrite()
    return this.statements.deleteKey.run(userId, id).changes > 0
  }

  // ---- projects and members --------------------------------------------------------

  async createProject (p: Omit<ProjectRecord, 'version'>): Promise<ProjectRecord> {
    this.lookups.forgetAfterOwnWrite()
    try {
      this.statements.insertProject.run(p.id, p.ownerId, p.slug, p.name, p.createdAt)
    } catch (e) {
      if (isUniqueViolation(e)) throw new ContentdError('PROJECT_EXISTS')
      throw e
    }
    return { ...p, version: 0 }
  }

  async findProject (ownerName: string, slug: string): Promise<ProjectRecord | null> {
    const lookups = this.lookups.refresh()
    const name = `${ownerName}\0${slug}`
    const known = lookups.projects.get(name)
    if (known) return known
    const project = toProject(this.statements.projectByName.get(ownerName, slug) as Row | undefined)
    return project ? lookups.rememberProject(name, project) : null
  }

  async findProjectsByIds (ids: string[]): Promise<ProjectRecord[]> {
    const found: ProjectRecord[] = []
    for (const id of ids) {
      const project = toProject(this.statements.projectById.get(id) as Row | undefined)
      if (project) found.push(project)
    }
    return found
  }

  async listProjectsForUser (userId: string): Promise<Array<ProjectRecord & { role: ProjectRole }>> {
    return (this.statements.projectsForUser.all(userId, userId) as Row[])
      .map(row => ({ ...(toProject(row) as ProjectRecord), role: row.role as ProjectRole }))
  }

  async deleteProject (id: string): Promise<void> {
    this.lookups.forgetAfterOwnWrite()
    this.statements.deleteProject.run(id)
    this.cache.delete(id)
  }

  async setMember (projectId: string, userId: string, role: MemberRole): Promise<void> {
    this.lookups.forgetAfterOwnWrite()
    this.statements.upsertMember.run(projectId, userId, role)
  }

  async removeMember (projectId: string, userId: string): Promise<boolean> {
    this.lookups.forgetAfterOwnWrite()
    return this.statements.deleteMember.run(projectId, userId).changes > 0
  }

  async findMemberRole (projectId: string, userId: string): Promise<MemberRole | null> {
    const roles = this.lookups.refresh().memberRoles
    const name = `${projectId}\0${userId}`
    const known = roles.get(name)
    if (known !== undefined) return known
    const row = this.statements.memberRole.get(projectId, userId) as Row | undefined
    return roles.remember(name, row ? row.role as MemberRole : null)
  }

  async listMembers (projectId: string): Promise<MemberRecord[]> {
    return (this.statements.membersOf.all(projectId) as Row[])
      .map(row => ({ userId: String(row.user_id), username: String(row.username), role: row.role as MemberRole }))
  }

  // ---- content ---------------------------------------------------------------------

  async readContent (projectId: string): Promise<ContentSnapshot | null> {
    const cached = this.currentDocument(projectId)
    if (!cached) return null
    this.lent.add(cached.doc)
    return { version: cached.version, content: cached.doc, json: jsonOf(cached) }
  }

  /** The current document, from the cache when its version is still the stored one. */
  private currentDocument (projectId: string): CachedDocument | null {
    const versionRow = this.statements.projectVersion.get(projectId) as Row | undefined
    if (!versionRow) return null
    const hit = this.cache.get(projectId, Number(versionRow.version))
    if (hit) return hit
    const entry = this.loadDocument(projectId)
    if (entry) this.cache.set(projectId, entry)
    return entry
  }

  /** Snapshot plus logged operations, read in one transaction: another process may write. */
  private loadDocument (projectId: string): CachedDocument | null {
    return this.db.transaction((): CachedDocument | null => {
      const row = this.statements.projectContent.get(projectId) as Row | undefined
      if (!row) return null
      const snapshot = String(row.content)
      const log = this.statements.logAfter.all(projectId, Number(row.snapshot_version)) as Row[]
      const doc = JSON.parse(snapshot) as JsonObject
      let logBytes = 0
      for (const entry of log) {
        const text = String(entry.operation)
        logBytes += text.length
        applyOperation(doc, JSON.parse(text) as Operation)
      }
      // After a replay the snapshot text is stale; serialize once for an exact size.
      const json = log.length === 0 ? snapshot : JSON.stringify(doc)
      return { version: Number(row.version), doc, json, bytes: Buffer.byteLength(json), logCount: log.length, logBytes }
    })()
  }

  applyOperation (project: ProjectRecord, operation: Operation, options: ApplyOptions = {}): Promise<{ version: number }> {
    return new Promise((resolve, reject) => {
      this.pending.push({ project, operation, options, resolve, reject })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  private flush (): void {
    const batch = this.pending
    this.pending = []
    this.flushScheduled = false
    if (batch.length === 0) return
    const working = new Map<string, WorkingDocument | null>()
    const outcomes: Outcome[] = []
    const written = new Map<string, CachedDocument>()
    try {
      this.db.transaction(() => {
        const at = new Date().toISOString()
        for (const write of batch) outcomes.push(this.applyInTransaction(write, working, at))
        for (const [projectId, state] of working) {
          if (!state || !state.dirty) continue
          written.set(projectId, this.writeDocument(projectId, state))
        }
      }).immediate()
    } catch (error) {
      // Nothing committed. Documents in `working` may have been mutated: forget them.
      for (const projectId of working.keys()) this.cache.delete(projectId)
      const failure = isContentdError(error) ? error : storeFailure(error)
      for (const write of batch) write.reject(failure)
      return
    }
    if (written.size > 0) noteCommit()
    for (const [projectId, entry] of written) {
      this.cache.set(projectId, entry)
      this.lookups.projectVersionChanged(projectId, entry.version)
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i] as Outcome
      if (!outcome.ok) { write.reject(outcome.error); return }
      this.emit({ project: write.project, version: outcome.version, operation: outcome.operation, at: outcome.at })
      write.resolve({ version: outcome.version })
    })
  }

  private applyInTransaction (write: PendingWrite, working: Map<string, WorkingDocument | null>, at: string): Outcome {
    const projectId = write.project.id
    let state = working.get(projectId)
    if (state === undefined) {
      const current = this.currentDocument(projectId)
      // Parsing the cached JSON copies about three times faster than structuredClone.
      const doc = current && this.lent.has(current.doc) ? JSON.parse(jsonOf(current)) as JsonObject : current?.doc
      state = current && doc
        ? { doc, version: current.version, bytes: current.bytes, dirty: false, logCount: current.logCount, logBytes: current.logBytes, batchLog: [], replaced: false }
        : null
      working.set(projectId, state)
    }
    if (!state) return { ok: false, error: new ContentdError('PROJECT_NOT_FOUND') }
    const { operation, options } = write
    try {
      if (options.ifMatch !== undefined && !versionMatches(options.ifMatch, state.version)) {
        throw new ContentdError('PRECONDITION_FAILED')
      }
      const serializedValue = 'value' in operation ? JSON.stringify(operation.value) ?? '' : ''
      this.applyWithinLimit(state, operation, Buffer.byteLength(serializedValue))
      state.version += 1
      state.dirty = true
      if (operation.op === 'update') state.replaced = true
      // Serialized now, not at write time: a later operation of this batch may mutate a value
      // this one inserted (set a {b:[1]}, then push a.b), and the log must replay what ran.
      else state.batchLog.push({ version: state.version, json: JSON.stringify(operation) })
      return { ok: true, version: state.version, at, operation: withOwnValue(operation, serializedValue) }
    } catch (error) {
      // Only expected failures stay per-operation; anything else aborts the whole batch.
      if (isContentdError(error)) return { ok: false, error }
      throw error
    }
  }

  /**
   * Writes a changed document inside the batch's transaction: the batch's operations appended
   * to content_log when the document is large and the log still short, otherwise a new
   * snapshot (which empties the log). Returns the cache entry for the new version.
   */
  private writeDocument (projectId: string, state: WorkingDocument): CachedDocument {
    const batchBytes = state.batchLog.reduce((sum, entry) => sum + entry.json.length, 0)
    const logCount = state.logCount + state.batchLog.length
    const logBytes = state.logBytes + batchBytes
    if (!state.replaced && state.bytes >= LOG_MIN_DOCUMENT_BYTES && logCount <= LOG_MAX_ENTRIES && logBytes <= state.bytes / 2) {
      for (const entry of state.batchLog) this.statements.appendLog.run(projectId, entry.version, entry.json)
      this.statements.writeVersion.run(state.version, projectId)
      return { version: state.version, doc: state.doc, bytes: state.bytes, logCount, logBytes }
    }
    const json = JSON.stringify(state.doc)
    this.statements.writeContent.run(json, state.version, state.version, projectId)
    if (state.logCount > 0) this.statements.clearLog.run(projectId)
    return { version: state.version, doc: state.doc, json, bytes: Buffer.byteLength(json), logCount: 0, logBytes: 0 }
  }

  /** Applies the operation unless the document would outgrow the content limit. */
  private applyWithinLimit (state: WorkingDocument, operation: Operation, valueBytes: number): void {
    const limit = this.options.contentLimitBytes
    if (operation.op === 'update') {
      if (valueBytes > limit) throw new ContentdError('CONTENT_TOO_LARGE')
      state.doc = applyOperation(state.doc, operation)
      state.bytes = valueBytes
      return
    }
    const bound = growthBound(operation, valueBytes)
    if (state.bytes + bound <= limit) {
      applyOperation(state.doc, operation)
      state.bytes += bound
      return
    }
    // Close to the limit: measure exactly, on a copy, so a refusal changes nothing.
    const candidate = applyOperation(structuredClone(state.doc), operation)
    const exact = Buffer.byteLength(JSON.stringify(candidate))
    if (exact > limit) throw new ContentdError('CONTENT_TOO_LARGE', `the content would be ${exact} bytes; the limit is ${limit}`)
    state.doc = candidate
    state.bytes = exact
  }

  private emit (change: Parameters<CommitListener>[0]): void {
    for (const listener of this.listeners) {
      try { listener(change) } catch { /* a listener's failure must not undo an acknowledged commit */ }
    }
  }
}

/**
 * The operation as commit listeners get it: with a value of its own. The written value now
 * lives inside the document, and later operations may change it in place; a listener that
 * keeps the change must still see what was applied. `serializedValue` is the value as JSON,
 * exact because the operation validated it.
 */
function withOwnValue (operation: Operation, serializedValue: string): Operation {
  if (!('value' in operation) || typeof operation.value !== 'object' || operation.value === null) return operation
  return { ...operation, value: JSON.parse(serializedValue) as JsonObject } as Operation
}

function isUniqueViolation (e: unknown): boolean {
  return typeof e === 'object' && e !== null && 'code' in e &&
    (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
}

function storeFailure (error: unknown): ContentdError | unknown {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : ''
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') ? new ContentdError('STORE_UNAVAILABLE') : error
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
