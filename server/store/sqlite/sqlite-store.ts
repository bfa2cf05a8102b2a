// The embedded store (better-sqlite3, one file under DATA_DIR): the one Store implementation
// for SQLite, put together from parts with one job each:
// - database.ts opens the file (WAL, synchronous=FULL, migrations);
// - records.ts keeps users, sessions, keys, projects and members, through the
//   lookup-cache.ts memory every request's look-ups use;
// - content-writer.ts applies content operations with group commit;
// - content-log.ts lays the content out as snapshot + log, with the document cache;
// - schemas.ts keeps content schemas, which content-writer.ts enforces.
import type Database from 'better-sqlite3'
import type { Operation } from '../../../shared/operations.js'
import { CommitEmitter } from '../commit-emitter.js'
import type {
  ApiKeyRecord, ApplyOptions, CommitListener, ContentSnapshot, MemberRecord, MemberRole, ProjectRecord,
  ProjectRole, SchemaRecord, SessionRecord, Store, UserRecord
} from '../types.js'
import { ContentLog } from './content-log.js'
import { ContentWriter } from './content-writer.js'
import { openDatabase } from './database.js'
import { LookupCache, type CommitCounter } from './lookup-cache.js'
import { SqliteRecords } from './records.js'
import { SqliteSchemas } from './schemas.js'

export interface SqliteStoreOptions {
  dataDir: string
  contentLimitBytes: number
  cacheBytes: number
  /** The process's one counter, shared by every store it opens (see lookup-cache.ts). */
  commits: CommitCounter
  busyTimeoutMs?: number
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  private readonly db: Database.Database
  private readonly commitListeners = new CommitEmitter()
  private readonly records: SqliteRecords
  private readonly content: ContentLog
  private readonly writer: ContentWriter
  private readonly schemas: SqliteSchemas
  private readonly pingStatement: Database.Statement

  constructor (options: SqliteStoreOptions) {
    this.db = openDatabase(options.dataDir, options.busyTimeoutMs ?? 5000)
    const dataVersion = this.db.prepare('PRAGMA data_version').pluck()
    const lookups = new LookupCache(() => dataVersion.get() as number, options.commits)
    this.records = new SqliteRecords(this.db, lookups)
    this.content = new ContentLog(this.db, options.cacheBytes)
    this.schemas = new SqliteSchemas(this.db)
    this.writer = new ContentWriter({
      db: this.db,
      log: this.content,
      lookups,
      commitListeners: this.commitListeners,
      contentLimitBytes: options.contentLimitBytes,
      schemaFor: projectId => this.schemas.schemaFor(projectId)
    })
    this.pingStatement = this.db.prepare('SELECT 1 AS ok')
  }

  async init (): Promise<void> {}

  async ping (): Promise<void> {
    this.pingStatement.get()
  }

  async close (): Promise<void> {
    // Let writes already accepted finish before the file closes.
    this.writer.flush()
    if (this.db.open) this.db.close()
  }

  onCommit (listener: CommitListener): void {
    this.commitListeners.on(listener)
  }

  // ---- records (records.ts) ----------------------------------------------------------

  async createUser (user: UserRecord): Promise<void> { this.records.createUser(user) }
  async findUserByName (username: string): Promise<UserRecord | null> { return this.records.findUserByName(username) }
  async findUserById (id: string): Promise<UserRecord | null> { return this.records.findUserById(id) }
  async listUsers (): Promise<UserRecord[]> { return this.records.listUsers() }

  async createSession (session: SessionRecord): Promise<void> { this.records.createSession(session) }
  async findSession (tokenHash: string): Promise<SessionRecord | null> { return this.records.findSession(tokenHash) }
  async deleteSession (tokenHash: string): Promise<void> { this.records.deleteSession(tokenHash) }

  async createApiKey (key: ApiKeyRecord): Promise<void> { this.records.createApiKey(key) }
  async findApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | null> { return this.records.findApiKeyByHash(keyHash) }
  async findApiKeyById (id: string): Promise<ApiKeyRecord | null> { return this.records.findApiKeyById(id) }
  async listApiKeys (userId: string): Promise<ApiKeyRecord[]> { return this.records.listApiKeys(userId) }
  async deleteApiKey (userId: string, id: string): Promise<boolean> { return this.records.deleteApiKey(userId, id) }

  async createProject (project: Omit<ProjectRecord, 'version'>): Promise<ProjectRecord> { return this.records.createProject(project) }
  async findProject (ownerName: string, slug: string): Promise<ProjectRecord | null> { return this.records.findProject(ownerName, slug) }
  async findProjectsByIds (ids: string[]): Promise<ProjectRecord[]> { return this.records.findProjectsByIds(ids) }
  async listProjectsForUser (userId: string): Promise<Array<ProjectRecord & { role: ProjectRole }>> { return this.records.listProjectsForUser(userId) }

  async deleteProject (id: string): Promise<void> {
    this.records.deleteProject(id)
    this.content.forget(id)
  }

  async setMember (projectId: string, userId: string, role: MemberRole): Promise<void> { this.records.setMember(projectId, userId, role) }
  async removeMember (projectId: string, userId: string): Promise<boolean> { return this.records.removeMember(projectId, userId) }
  async findMemberRole (projectId: string, userId: string): Promise<MemberRole | null> { return this.records.findMemberRole(projectId, userId) }
  async listMembers (projectId: string): Promise<MemberRecord[]> { return this.records.listMembers(projectId) }

  // ---- content (content-log.ts, content-writer.ts) -----------------------------------

  async readContent (projectId: string): Promise<ContentSnapshot | null> {
    return this.content.read(projectId)
  }

  applyOperation (project: ProjectRecord, operation: Operation, options: ApplyOptions = {}): Promise<{ version: number }> {
    return this.writer.apply(project, operation, options)
  }

  // ---- content schemas (schemas.ts) ---------------------------------------------------

  async getSchema (projectId: string): Promise<SchemaRecord | null> { return this.schemas.get(projectId) }
  async putSchema (projectId: string, record: SchemaRecord): Promise<void> { this.schemas.put(projectId, record, () => this.content.read(projectId)) }
  async deleteSchema (projectId: string): Promise<boolean> { return this.schemas.delete(projectId) }
}
