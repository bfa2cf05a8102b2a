// The embedded store (better-sqlite3, one file under DATA_DIR): the one Store implementation
// for SQLite, put together from parts with one job each:
// - database.ts opens the file (WAL, synchronous=FULL, migrations);
// - records.ts keeps users, sessions, keys, projects and members, through the
//   lookup-cache.ts memory every request's look-ups use;
// - content-writer.ts commits content writes (decided by server/engine/) with group commit,
//   each with its change log entry in the same transaction, made durable by wal-sync.ts off
//   the event loop;
// - idempotency.ts keeps Idempotency-Key records (docs/design.md §10);
// - content-log.ts lays content and history out as checkpoints + change log (docs/design.md
//   §9), with the document cache;
// - schemas.ts keeps content schemas, which the engine enforces (docs/design.md §12);
// - store-errors.ts turns a full disk or an I/O error into 503 STORE_UNAVAILABLE.
import type Database from 'better-sqlite3'
import { projectRefOf } from '../change-entry.js'
import { DEFAULT_CHANGES_PAGE_BYTES, projectMemberOf } from '../change-pages.js'
import type { ChangeEntry } from '../../../shared/events.js'
import type { ContentCommitter } from '../../engine/content-engine.js'
import { EngineStore } from '../../engine/engine-store.js'
import type {
  PathEntriesPage,
  ApiKeyRecord, ChangesJsonPage, ContentSnapshot, HistoryOptions, IdempotencyClaim, IdempotencyId, IdempotencyState, LoggedIdempotentChange,
  KeyPosition, ListedApiKey, MemberRecord, MemberRole, PageRequest, ProjectPosition, ProjectRecord, ProjectRole, SchemaRecord, SessionRecord, Store,
  StoredResponse, UserRecord
} from '../types.js'
import { ContentLog } from './content-log.js'
import { ContentWriter } from './content-writer.js'
import { EntryReader } from './entry-reader.js'
import { openDatabase } from './database.js'
import { DEFAULT_SQLITE_CACHE_BYTES } from './page-cache.js'
import { SqliteIdempotency } from './idempotency.js'
import { SqliteInstanceDump } from './instance-dump.js'
import type { ImportCounts, InstanceRecord } from '../instance-records.js'
import { LookupCache, type CommitCounter } from './lookup-cache.js'
import { SqliteRecords } from './records.js'
import { SqliteSchemas } from './schemas.js'
import { WalSync, type WalSyncer } from './wal-sync.js'
import { SqliteWebhooks } from './webhooks.js'
import { SqliteAppRules } from './app-rules.js'

import { toStoreError } from './store-errors.js'

/** Runs a synchronous store call; a full disk or an I/O error becomes STORE_UNAVAILABLE (store-errors.ts). */
/**
 * A page whose entries weigh more than this is read off the event loop (entry-reader.ts): SQLite
 * gathers about 100 KB a millisecond from overflow pages, more on a busy machine.
 */
const READ_ON_LOOP_BYTES = 256 * 1024

function guarded<T> (call: () => T): Promise<T> {
  try {
    return Promise.resolve(call())
  } catch (error) {
    return Promise.reject(toStoreError(error))
  }
}

export interface SqliteStoreOptions {
  dataDir: string
  contentLimitBytes: number
  cacheBytes: number
  /** SQLITE_CACHE_BYTES: SQLite's page cache per connection; default DEFAULT_SQLITE_CACHE_BYTES. */
  sqliteCacheBytes?: number
  /** HISTORY_LIMIT, and HISTORY=off for the benchmark's reference (see HistoryOptions). */
  history: HistoryOptions
  /** The process's one counter, shared by every store it opens (see lookup-cache.ts). */
  commits: CommitCounter
  busyTimeoutMs?: number
  /** CHANGES_PAGE_BYTES (docs/design.md §13b); default DEFAULT_CHANGES_PAGE_BYTES. */
  changesPageBytes?: number
  /** The WAL's fsync after each group commit (wal-sync.ts); given the WAL's path. */
  walSync?: (walPath: string) => WalSyncer
}

export class SqliteStore extends EngineStore implements Store {
  readonly kind = 'sqlite'
  private readonly db: Database.Database
  private readonly records: SqliteRecords
  private readonly content: ContentLog
  private readonly entryReader: EntryReader
  private readonly writer: ContentWriter
  private readonly walSync: WalSyncer
  private readonly schemas: SqliteSchemas
  private readonly pingStatement: Database.Statement
  /** Webhooks and their deliveries (webhooks.ts). */
  readonly webhooks: SqliteWebhooks
  /** Rules and app sign-in settings (app-rules.ts, docs/design.md §17). */
  readonly appRules: SqliteAppRules
  private readonly idempotency: SqliteIdempotency
  private readonly dump: SqliteInstanceDump

  constructor (options: SqliteStoreOptions) {
    super({ contentLimitBytes: options.contentLimitBytes })
    const pageCacheBytes = options.sqliteCacheBytes ?? DEFAULT_SQLITE_CACHE_BYTES
    this.db = openDatabase(options.dataDir, options.busyTimeoutMs ?? 5000, pageCacheBytes)
    const dataVersion = this.db.prepare('PRAGMA data_version').pluck()
    const lookups = new LookupCache(() => dataVersion.get() as number, options.commits)
    this.records = new SqliteRecords(this.db, lookups)
    this.content = new ContentLog(this.db, options.cacheBytes, options.history, options.changesPageBytes ?? DEFAULT_CHANGES_PAGE_BYTES)
    this.entryReader = new EntryReader(this.db.memory ? null : this.db.name, options.busyTimeoutMs ?? 5000, pageCacheBytes)
    this.schemas = new SqliteSchemas(this.db)
    this.walSync = (options.walSync ?? (path => new WalSync(path)))(`${this.db.name}-wal`)
    this.writer = new ContentWriter({
      db: this.db,
      log: this.content,
      lookups,
      schemaFor: projectId => this.schemas.schemaFor(projectId),
      sync: done => { this.walSync.sync(done) }
    })
    this.pingStatement = this.db.prepare('SELECT 1 AS ok')
    this.webhooks = new SqliteWebhooks(this.db)
    this.appRules = new SqliteAppRules(this.db)
    this.idempotency = new SqliteIdempotency(this.db)
    this.dump = new SqliteInstanceDump(this.db, projectId => {
      const snapshot = this.content.read(projectId)
      return snapshot ? { version: snapshot.version, json: snapshot.json ?? JSON.stringify(snapshot.content) } : null
    }, () => { lookups.forgetAfterOwnWrite() })
  }

  async init (): Promise<void> {}

  async ping (): Promise<void> {
    // After a failed fsync no write can be acknowledged until a restart (content-writer.ts).
    const failure = this.writer.failure
    if (failure) throw failure
    this.pingStatement.get()
  }

  async close (): Promise<void> {
    // Let writes already accepted finish (committed, synced, answered) before the file closes.
    await this.writer.drained()
    this.walSync.close()
    await this.entryReader.close()
    if (this.db.open) this.db.close()
  }

  // ---- records (records.ts) ----------------------------------------------------------

  createUser (user: UserRecord): Promise<void> { return guarded(() => this.records.createUser(user)) }
  findUserByName (username: string): Promise<UserRecord | null> { return guarded(() => this.records.findUserByName(username)) }
  findUserById (id: string): Promise<UserRecord | null> { return guarded(() => this.records.findUserById(id)) }
  listUsers (page: PageRequest<string>): Promise<UserRecord[]> { return guarded(() => this.records.listUsers(page)) }

  createSession (session: SessionRecord): Promise<void> { return guarded(() => this.records.createSession(session)) }
  findSession (tokenHash: string): Promise<SessionRecord | null> { return guarded(() => this.records.findSession(tokenHash)) }
  deleteSession (tokenHash: string): Promise<void> { return guarded(() => this.records.deleteSession(tokenHash)) }

  createApiKey (key: ApiKeyRecord, maxPerUser = Number.MAX_SAFE_INTEGER): Promise<void> { return guarded(() => this.records.createApiKey(key, maxPerUser)) }
  findApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | null> { return guarded(() => this.records.findApiKeyByHash(keyHash)) }
  findApiKeyById (id: string): Promise<ApiKeyRecord | null> { return guarded(() => this.records.findApiKeyById(id)) }
  listApiKeys (userId: string, page: PageRequest<KeyPosition>): Promise<ListedApiKey[]> { return guarded(() => this.records.listApiKeys(userId, page)) }
  deleteApiKey (userId: string, id: string): Promise<boolean> { return guarded(() => this.records.deleteApiKey(userId, id)) }

  createProject (project: Omit<ProjectRecord, 'version'>, maxPerOwner = Number.MAX_SAFE_INTEGER): Promise<ProjectRecord> { return guarded(() => this.records.createProject(project, maxPerOwner)) }
  findProject (ownerName: string, slug: string): Promise<ProjectRecord | null> { return guarded(() => this.records.findProject(ownerName, slug)) }
  findProjectsByIds (ids: string[]): Promise<ProjectRecord[]> { return guarded(() => this.records.findProjectsByIds(ids)) }
  listProjectsForUser (userId: string, page: PageRequest<ProjectPosition>, scope: string[] | null): Promise<Array<ProjectRecord & { role: ProjectRole }>> {
    return guarded(() => this.records.listProjectsForUser(userId, page, scope))
  }

  deleteProject (id: string): Promise<void> {
    return guarded(() => {
      this.records.deleteProject(id)
      this.content.forgetProject(id)
    })
  }

  setMember (projectId: string, userId: string, role: MemberRole): Promise<void> { return guarded(() => this.records.setMember(projectId, userId, role)) }
  removeMember (projectId: string, userId: string): Promise<boolean> { return guarded(() => this.records.removeMember(projectId, userId)) }
  findMemberRole (projectId: string, userId: string): Promise<MemberRole | null> { return guarded(() => this.records.findMemberRole(projectId, userId)) }
  listMembers (projectId: string, page: PageRequest<string>): Promise<MemberRecord[]> { return guarded(() => this.records.listMembers(projectId, page)) }

  // ---- content (content-log.ts, content-writer.ts) -----------------------------------

  readContent (projectId: string): Promise<ContentSnapshot | null> {
    return guarded(() => this.content.read(projectId))
  }

  readContentJson (projectId: string): Promise<{ version: number, json: string } | null> {
    return guarded(() => this.content.readJson(projectId))
  }

  /** The group commit (content-writer.ts) as the engine's commit primitive. */
  protected contentCommitter (): ContentCommitter {
    return {
      // The writer commits a batch in one transaction; when it fails (a full disk), nothing of
      // the batch is stored and every write in it gets STORE_UNAVAILABLE.
      commit: write => this.writer.commit(write).catch((error: unknown) => { throw toStoreError(error) })
    }
  }

  async readChangesJson (project: ProjectRecord, since: number, limit: number): Promise<ChangesJsonPage> {
    const ref = projectRefOf(project)
    const inline = this.entryReader.available ? READ_ON_LOOP_BYTES : Infinity
    const extent = await guarded(() => this.content.changes(project.id, ref, since, limit, inline))
    // Large entries are read on the entry reader's thread (docs/design.md §13b).
    const stored = extent.stored ?? await this.entryReader.read(project.id, since, extent.versions.at(-1) ?? since, extent.versions.length)
    const entries = extent.versions.map((version, i) => ({ version, bytes: extent.bytes[i] ?? 0, stored: stored[i] ?? Buffer.alloc(0) }))
    return { version: extent.version, project: ref, entries, more: extent.more }
  }

  async readPathEntries (project: ProjectRecord, path: string, since: number, limit: number): Promise<PathEntriesPage> {
    const ref = projectRefOf(project)
    const page = await guarded(() => this.content.pathEntries(project.id, path, since, limit))
    const opening = '{' + projectMemberOf(ref)
    return { version: page.version, entries: page.entries.map(entry => JSON.parse(opening + entry.slice(1)) as ChangeEntry), more: page.more }
  }

  readContentAt (projectId: string, version: number): Promise<ContentSnapshot> {
    return guarded(() => this.content.readAt(projectId, version))
  }

  // ---- content schemas (schemas.ts) ---------------------------------------------------

  getSchema (projectId: string): Promise<SchemaRecord | null> { return guarded(() => this.schemas.get(projectId)) }
  putSchema (projectId: string, record: SchemaRecord): Promise<void> { return guarded(() => this.schemas.put(projectId, record, () => this.content.read(projectId))) }
  deleteSchema (projectId: string): Promise<boolean> { return guarded(() => this.schemas.delete(projectId)) }

  // ---- Idempotency-Key records (idempotency.ts) --------------------------------------

  async claimIdempotencyKey (claim: IdempotencyClaim): Promise<IdempotencyState> { return this.idempotency.claim(claim) }
  async finishIdempotencyKey (id: IdempotencyId, response: StoredResponse | null): Promise<void> { this.idempotency.finish(id, response) }
  async deleteExpiredIdempotencyKeys (now: string): Promise<number> { return this.idempotency.deleteExpired(now) }
  async findLoggedIdempotency (id: IdempotencyId): Promise<LoggedIdempotentChange | null> { return this.content.loggedIdempotency(id.projectId, id.caller, id.key) }

  // ---- the whole instance (instance-dump.ts; docs/design.md §18) ---------------------

  exportRecords (): AsyncIterable<InstanceRecord> { return this.dump.exportRecords() }
  importRecords (records: AsyncIterable<InstanceRecord>): Promise<ImportCounts> { return this.dump.importRecords(records) }
}
