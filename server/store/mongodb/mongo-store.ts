// The MongoDB store (STORE=mongodb). Stateless nodes share one MongoDB replica set; a
// project's content is embedded in its project document with its version. Content writes
// follow docs/design.md §20 (write-path.ts): read the document at version V, run the engine's
// write step on it (server/engine/), then ONE transaction with the native update filtered on
// `version: V` and the change's log entry (docs/design.md §9): a change is in the content
// exactly when it is in the log. Majority write and read concern throughout, bounded by client-side and server-side
// time limits; every "not now" error is 503 STORE_UNAVAILABLE (driver-errors.ts).
//
// A project with a content schema (docs/design.md §12) keeps it in its document; every
// write's filter names the schema revision it was checked against (schema-condition.ts).
import { BSON, MongoClient, ObjectId, ReadConcern, type ClientSession, type Collection, type Db, type Document, type TransactionOptions } from 'mongodb'
import { ContentdError } from '../../../shared/errors.js'
import { applyContentOperation } from '../../../shared/compound.js'
import { operationOfChange } from '../../../shared/events.js'
import type { JsonObject } from '../../../shared/json.js'
import type { NarrowableOperation } from '../../../shared/key-scope.js'
import type { JsonSchema } from '../../schema/compile.js'
import { schemaViolation, type ContentSchema } from '../../schema/content-schema.js'
import { SchemaCache } from '../../schema/schema-cache.js'
import type {
  PathEntriesPage,
  ApiKeyRecord, ChangesJsonPage, ContentSnapshot, HistoryOptions, IdempotencyClaim, IdempotencyId,
  IdempotencyState, LoggedIdempotentChange, KeyPosition, ListedApiKey, MemberRecord, MemberRole, PageRequest, Permission, ProjectPosition, ProjectRecord, ProjectRole,
  SchemaRecord, SessionRecord, Store, StoredResponse, UserRecord
} from '../types.js'
import { projectRefOf } from '../change-entry.js'
import type { ContentCommitter } from '../../engine/content-engine.js'
import { EngineStore } from '../../engine/engine-store.js'
import { DEFAULT_CHANGES_PAGE_BYTES } from '../change-pages.js'
import { answerableFrom, PruneSchedule } from '../history-policy.js'
import { standaloneMessage, startupFailureMessage } from './connection.js'
import { databaseNameFrom } from './uri.js'
import { MongoWebhooks } from './webhooks.js'
import { MongoAppRules } from './app-rules.js'
import { MongoIdempotency } from './idempotency.js'
import { isDuplicateKey, mapDriverError } from './driver-errors.js'
import {
  CHANGES_BATCH, changeDocOf, loggedChangeOf, loggedIdempotencyQuery, readChangesPage, supportsTransactions, WRITE_RESULT_PROJECTION, type ChangeDoc, type CheckpointDoc
} from './history.js'
import { SCHEMA_FIELD } from './schema-condition.js'
import { PATH_INDEX, pathFilter, readPathPage, TOUCHED_PATHS_FIELD } from './path-index.js'
import { indexPathsOf } from '../../../shared/live-path.js'
import { runTransaction, settle } from './transaction.js'
import { MongoWritePath, type CommittedWrite, type ContentBackend, type ContentCommit, type StoredContent } from './write-path.js'
import { keysPagePipeline, membersPagePipeline, projectsPagePipeline } from './pages.js'
import { QuotaCounters } from './quota-counters.js'
import { dumpCollections, MongoInstanceDump } from './instance-dump.js'
import type { ImportCounts, InstanceRecord } from '../instance-records.js'

export interface MongoStoreOptions {
  uri: string
  /** CONTENT_LIMIT in JSON bytes, as on every store (MongoDB's 16 MiB BSON limit is separate: 413). */
  contentLimitBytes: number
  /** HISTORY_LIMIT: change log entries answerable per project; 0 keeps all. */
  historyLimit: number
  /** CHANGES_PAGE_BYTES (docs/design.md §13b); default DEFAULT_CHANGES_PAGE_BYTES. */
  changesPageBytes?: number
  /** Default: the database in the URI, else "contentd". */
  databaseName?: string
  serverSelectionTimeoutMS?: number
  /**
   * The client-side time limit of one MongoDB operation (maxTimeMS on the server, the write
   * concern's wtimeout, maxCommitTimeMS; the socket times out a little later). Default 10 s.
   */
  operationTimeoutMS?: number
}

const DEFAULT_OPERATION_TIMEOUT_MS = 10_000

/** keyCount and projectCount are the quota counters (quota-counters.ts). */
interface UserDoc { _id: string, username: string, passwordHash: string, createdAt: string, keyCount?: number, projectCount?: number }
/** _id is the token hash (unique by construction); expiresAt is a Date for the TTL index. */
interface SessionDoc { _id: string, userId: string, createdAt: string, expiresAt: Date }
interface ApiKeyDoc {
  _id: string, userId: string, name: string, prefix: string, keyHash: string, permission: Permission,
  projectIds: string[] | null, expiresAt: string | null, createdAt: string,
  /** Absent on keys stored before narrowing existed: not narrowed. */
  paths?: string[] | null, ops?: NarrowableOperation[] | null
}
/** The schema as JSON text: its keywords start with "$", which MongoDB field names should not. */
interface SchemaDoc { revision: string, json: string, setBy: string, setAt: string }
interface ProjectDoc {
  _id: string, ownerId: string, ownerName: string, slug: string, name: string, createdAt: string, version: number,
  content: JsonObject
  /** An upper bound of the content's JSON bytes (shared/content-limit.ts); absent on older documents. */
  contentBytes?: number
  schema?: SchemaDoc
  /**
   * The change log's bookkeeping (docs/design.md §9): the oldest version whose content and
   * later changes are known (absent on projects from before the change log until init()
   * sets it), and the entries after the latest checkpoint, with their size.
   */
  historyFloor?: number
  tailCount?: number
  tailBytes?: number
}
interface MemberDoc { _id: string, projectId: string, userId: string, role: MemberRole }

/** Concurrent schema changes can beat a compare-and-set; after this many rounds answer 503. */
const MAX_WRITE_ATTEMPTS = 8
const PROJECT_FIELDS = { content: 0, contentBytes: 0, [SCHEMA_FIELD]: 0, historyFloor: 0, tailCount: 0, tailBytes: 0 } as const
/** MongoDB's largest document; an update of the whole content is measured against it before sending. */
const MAX_BSON_DOCUMENT_BYTES = 16 * 1024 * 1024

export class MongoStore extends EngineStore implements Store {
  readonly kind = 'mongodb'
  private readonly client: MongoClient
  private readonly db: Db
  private readonly selectionTimeoutMs: number
  private readonly timeoutMs: number
  private readonly transactionOptions: TransactionOptions
  private readonly writes: MongoWritePath
  private readonly users: Collection<UserDoc>
  private readonly sessions: Collection<SessionDoc>
  private readonly apiKeys: Collection<ApiKeyDoc>
  private readonly projects: Collection<ProjectDoc>
  private readonly members: Collection<MemberDoc>
  private readonly schemas = new SchemaCache()
  private readonly changes: Collection<ChangeDoc>
  private readonly checkpoints: Collection<CheckpointDoc>
  private readonly history: HistoryOptions
  /** When retention deletes, in bulk, as the embedded store does (history-policy.ts). */
  private readonly prunes: PruneSchedule
  private readonly quotas: QuotaCounters
  /** Webhooks and their deliveries (webhooks.ts). */
  readonly webhooks: MongoWebhooks
  /** Rules and app sign-in settings (app-rules.ts, docs/design.md §17). */
  readonly appRules: MongoAppRules
  private readonly idempotency: MongoIdempotency
  private readonly dump: MongoInstanceDump

  constructor (private readonly options: MongoStoreOptions) {
    super({ contentLimitBytes: options.contentLimitBytes })
    this.selectionTimeoutMs = options.serverSelectionTimeoutMS ?? 5000
    this.timeoutMs = options.operationTimeoutMS ?? DEFAULT_OPERATION_TIMEOUT_MS
    // Pinned whatever the URI says (docs/design.md §20): a version acknowledged to a client
    // is on a majority, so a failover cannot roll it back and hand it out again.
    const writeConcern = { w: 'majority' as const, wtimeoutMS: this.timeoutMs }
    const readConcern = { level: 'majority' as const }
    this.transactionOptions = { writeConcern, readConcern, readPreference: 'primary', maxCommitTimeMS: this.timeoutMs }
    try {
      // Parses the URI; no I/O until init().
      this.client = new MongoClient(options.uri, {
        serverSelectionTimeoutMS: this.selectionTimeoutMs,
        appName: 'contentd',
        writeConcern,
        readConcern,
        readPreference: 'primary',
        retryWrites: true,
        retryReads: true,
        connectTimeoutMS: this.selectionTimeoutMs,
        // A socket that stays silent past every server-side limit is dead: the operation fails (503).
        socketTimeoutMS: this.timeoutMs * 2,
        waitQueueTimeoutMS: this.timeoutMs
      })
    } catch (e) {
      throw new Error(startupFailureMessage(e, options.uri, this.selectionTimeoutMs))
    }
    // Again on the database, whose settings win over the URI's (the client's do not, for
    // readConcernLevel): every collection below inherits them.
    this.db = this.client.db(options.databaseName ?? databaseNameFrom(options.uri), { writeConcern, readConcern: new ReadConcern('majority'), readPreference: 'primary' })
    this.users = this.db.collection('users')
    this.sessions = this.db.collection('sessions')
    this.apiKeys = this.db.collection('apiKeys')
    this.projects = this.db.collection('projects')
    this.members = this.db.collection('members')
    this.changes = this.db.collection('changes')
    this.checkpoints = this.db.collection('checkpoints')
    this.history = { limit: options.historyLimit, enabled: true }
    this.prunes = new PruneSchedule(this.history)
    this.quotas = new QuotaCounters(this.db.collection('users'))
    this.webhooks = new MongoWebhooks(this.db, call => this.run(call))
    this.appRules = new MongoAppRules(this.db, call => this.run(call))
    this.idempotency = new MongoIdempotency(this.db.collection('idempotencyKeys'))
    this.dump = new MongoInstanceDump(dumpCollections(this.db))
    this.writes = new MongoWritePath({
      backend: this.contentBackend(),
      contentLimitBytes: options.contentLimitBytes,
      schemaOf: stored => this.compiledSchema(stored)
    })
  }

  async init (): Promise<void> {
    let hello
    try {
      await this.client.connect()
      hello = await this.db.admin().command({ hello: 1 })
    } catch (e) {
      await this.client.close().catch(() => undefined)
      throw new Error(startupFailureMessage(e, this.options.uri, this.selectionTimeoutMs))
    }
    // Every change is written with its log entry in one transaction: refuse a deployment
    // that cannot run them at start, not at the first write.
    if (!supportsTransactions(hello)) {
      await this.client.close().catch(() => undefined)
      throw new Error(standaloneMessage(this.options.uri))
    }
    try {
      await Promise.all([
        this.users.createIndex({ username: 1 }, { unique: true }),
        // The TTL monitor removes expired sessions (identity also refuses them on sight).
        this.sessions.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
        this.sessions.createIndex({ userId: 1 }),
        this.apiKeys.createIndex({ keyHash: 1 }, { unique: true }),
        this.apiKeys.createIndex({ userId: 1, createdAt: 1, _id: 1 }),
        this.projects.createIndex({ ownerId: 1, slug: 1 }, { unique: true }),
        this.projects.createIndex({ ownerName: 1, slug: 1 }),
        this.members.createIndex({ projectId: 1, userId: 1 }, { unique: true }),
        this.members.createIndex({ userId: 1 }),
        this.changes.createIndex({ projectId: 1, version: 1 }, { unique: true }),
        // Remembered Idempotency-Keys (docs/design.md §19): only keyed changes are in it.
        this.changes.createIndex({ projectId: 1, 'idempotency.caller': 1, 'idempotency.key': 1, version: -1 }, { partialFilterExpression: { idempotency: { $exists: true } } }),
        this.changes.createIndex(PATH_INDEX),
        this.checkpoints.createIndex({ projectId: 1, version: 1 }, { unique: true }),
        this.webhooks.createIndexes(),
        this.idempotency.indexes()
      ])
      await this.startHistoryOfOlderProjects()
    } catch (e) {
      await this.client.close().catch(() => undefined)
      throw new Error(startupFailureMessage(e, this.options.uri, this.selectionTimeoutMs))
    }
  }

  async ping (): Promise<void> {
    await this.run(() => this.db.command({ ping: 1 }))
  }

  async close (): Promise<void> {
    await this.client.close()
  }

  /** Runs a driver call, turning driver errors into catalogued ones where they have a name. */
  private async run<T> (call: () => Promise<T>): Promise<T> {
    try {
      return await call()
    } catch (e) {
      throw mapDriverError(e)
    }
  }

  /** A transaction outside the content path: retried while it aborts transiently, then 503. */
  private async inTransaction (work: (session: ClientSession) => Promise<true>): Promise<void> {
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const outcome = await this.run(() => this.client.withSession(session => runTransaction(session, this.transactionOptions, () => work(session))))
      if (outcome.state !== 'lost') return
    }
    throw new ContentdError('STORE_UNAVAILABLE')
  }

  // ---- users, sessions, keys -------------------------------------------------------

  async createUser (user: UserRecord): Promise<void> {
    try {
      await this.run(() => this.users.insertOne({ _id: user.id, username: user.username, passwordHash: user.passwordHash, createdAt: user.createdAt, keyCount: 0, projectCount: 0 }))
    } catch (e) {
      if (isDuplicateKey(e)) throw new ContentdError('USERNAME_TAKEN')
      throw e
    }
  }

  async findUserByName (username: string): Promise<UserRecord | null> {
    return toUser(await this.run(() => this.users.findOne({ username })))
  }

  async findUserById (id: string): Promise<UserRecord | null> {
    return toUser(await this.run(() => this.users.findOne({ _id: id })))
  }

  async listUsers (page: PageRequest<string>): Promise<UserRecord[]> {
    const filter = page.after !== null ? { username: { $gt: page.after } } : {}
    const docs = await this.run(() => this.users.find(filter).sort({ username: 1 }).limit(page.limit).toArray())
    return docs.map(doc => toUser(doc) as UserRecord)
  }

  async createSession (s: SessionRecord): Promise<void> {
    await this.run(() => this.sessions.insertOne({ _id: s.tokenHash, userId: s.userId, createdAt: s.createdAt, expiresAt: new Date(s.expiresAt) }))
  }

  async findSession (tokenHash: string): Promise<SessionRecord | null> {
    const doc = await this.run(() => this.sessions.findOne({ _id: tokenHash }))
    if (!doc) return null
    return { tokenHash: doc._id, userId: doc.userId, createdAt: doc.createdAt, expiresAt: doc.expiresAt.toISOString() }
  }

  async deleteSession (tokenHash: string): Promise<void> {
    await this.run(() => this.sessions.deleteOne({ _id: tokenHash }))
  }

  async createApiKey (k: ApiKeyRecord, maxPerUser = Number.MAX_SAFE_INTEGER): Promise<void> {
    await this.run(() => this.quotas.take(k.userId, 'keyCount', maxPerUser, () => this.apiKeys.countDocuments({ userId: k.userId })))
    try {
      await this.run(() => this.apiKeys.insertOne({
        _id: k.id, userId: k.userId, name: k.name, prefix: k.prefix, keyHash: k.keyHash, permission: k.permission,
        projectIds: k.projectIds, paths: k.paths, ops: k.ops, expiresAt: k.expiresAt, createdAt: k.createdAt
      }))
    } catch (e) {
      await this.quotas.give(k.userId, 'keyCount').catch(() => undefined)
      throw e
    }
  }

  async findApiKeyById (id: string): Promise<ApiKeyRecord | null> {
    const doc = await this.run(() => this.apiKeys.findOne({ _id: id }))
    return doc ? toKey(doc) : null
  }

  async findApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | null> {
    const doc = await this.run(() => this.apiKeys.findOne({ keyHash }))
    return doc ? toKey(doc) : null
  }

  async listApiKeys (userId: string, page: PageRequest<KeyPosition>): Promise<ListedApiKey[]> {
    type Listed = ApiKeyDoc & { scopedProjects: Array<{ _id: string, ownerName: string, slug: string }> }
    const docs = await this.run(() => this.apiKeys.aggregate<Listed>(keysPagePipeline(userId, page)).toArray())
    return docs.map(doc => {
      const names = new Map(doc.scopedProjects.map(p => [p._id, { ownerName: p.ownerName, slug: p.slug }]))
      const projectNames = doc.projectIds === null ? null : doc.projectIds.flatMap(id => { const name = names.get(id); return name ? [name] : [] })
      return { ...toKey(doc), projectNames }
    })
  }

  async deleteApiKey (userId: string, id: string): Promise<boolean> {
    const result = await this.run(() => this.apiKeys.deleteOne({ _id: id, userId }))
    if (result.deletedCount === 0) return false
    await this.run(() => this.quotas.give(userId, 'keyCount'))
    return true
  }

  // ---- projects and members --------------------------------------------------------

  async createProject (p: Omit<ProjectRecord, 'version'>, maxPerOwner = Number.MAX_SAFE_INTEGER): Promise<ProjectRecord> {
    await this.run(() => this.quotas.take(p.ownerId, 'projectCount', maxPerOwner, () => this.projects.countDocuments({ ownerId: p.ownerId })))
    try {
      await this.run(() => this.projects.insertOne({
        _id: p.id, ownerId: p.ownerId, ownerName: p.ownerName, slug: p.slug, name: p.name, createdAt: p.createdAt, version: 0, content: {},
        historyFloor: 0, tailCount: 0, tailBytes: 0
      }))
    } catch (e) {
      await this.quotas.give(p.ownerId, 'projectCount').catch(() => undefined)
      if (isDuplicateKey(e)) throw new ContentdError('PROJECT_EXISTS')
      throw e
    }
    return { ...p, version: 0 }
  }

  async findProject (ownerName: string, slug: string): Promise<ProjectRecord | null> {
    return toProject(await this.run(() => this.projects.findOne({ ownerName, slug }, { projection: PROJECT_FIELDS })))
  }

  /** One query; $in does not keep the order asked for, so it is restored here. */
  async findProjectsByIds (ids: string[]): Promise<ProjectRecord[]> {
    if (ids.length === 0) return []
    const docs = await this.run(() => this.projects.find({ _id: { $in: ids } }, { projection: PROJECT_FIELDS }).toArray())
    const byId = new Map(docs.map(doc => [doc._id, doc]))
    // The order asked for, like the embedded store.
    return ids.flatMap(id => { const doc = byId.get(id); return doc ? [toProject(doc) as ProjectRecord] : [] })
  }

  async listProjectsForUser (userId: string, page: PageRequest<ProjectPosition>, scope: string[] | null): Promise<Array<ProjectRecord & { role: ProjectRole }>> {
    type Listed = Omit<ProjectDoc, 'content'> & { role: ProjectRole }
    const docs = await this.run(() => this.projects.aggregate<Listed>(projectsPagePipeline(userId, page, scope)).toArray())
    return docs.map(doc => ({ ...(toProject(doc) as ProjectRecord), role: doc.role }))
  }

  async deleteProject (id: string): Promise<void> {
    // The project and its owner's quota slot go in ONE transaction, so no failure between
    // them can leave the slot taken (the cascades below are only ever read by this project id).
    await this.inTransaction(async session => {
      const deleted = await this.projects.findOneAndDelete({ _id: id }, { projection: { ownerId: 1 }, session, maxTimeMS: this.timeoutMs })
      if (deleted) await this.users.updateOne({ _id: deleted.ownerId, projectCount: { $gt: 0 } }, { $inc: { projectCount: -1 } }, { session, maxTimeMS: this.timeoutMs })
      return true
    })
    // A commit whose outcome was unknown: cascade only once the project is surely gone.
    if (await this.run(() => this.projects.findOne({ _id: id }, { projection: { _id: 1 } }))) throw new ContentdError('STORE_UNAVAILABLE')
    // The embedded store cascades; here the memberships and the history go right after the
    // project. A project created again under the same name has a new id: whatever a crash
    // between these deletes left behind is never read.
    await this.run(() => this.members.deleteMany({ projectId: id }))
    await this.run(() => this.changes.deleteMany({ projectId: id }))
    await this.run(() => this.checkpoints.deleteMany({ projectId: id }))
    await this.webhooks.deleteOfProject(id)
    await this.appRules.deleteOfProject(id)
    await this.run(() => this.idempotency.deleteProject(id))
    this.prunes.forget(id)
  }

  async setMember (projectId: string, userId: string, role: MemberRole): Promise<void> {
    await this.run(() => this.members.updateOne(
      { _id: memberId(projectId, userId) },
      { $set: { role }, $setOnInsert: { projectId, userId } },
      { upsert: true }
    ))
  }

  async removeMember (projectId: string, userId: string): Promise<boolean> {
    const result = await this.run(() => this.members.deleteOne({ _id: memberId(projectId, userId) }))
    return result.deletedCount > 0
  }

  async findMemberRole (projectId: string, userId: string): Promise<MemberRole | null> {
    const doc = await this.run(() => this.members.findOne({ _id: memberId(projectId, userId) }))
    return doc ? doc.role : null
  }

  async listMembers (projectId: string, page: PageRequest<string>): Promise<MemberRecord[]> {
    const docs = await this.run(() => this.members.aggregate<MemberRecord>(membersPagePipeline(projectId, page)).toArray())
    return docs.map(d => ({ userId: d.userId, username: d.username, role: d.role }))
  }

  // ---- content ---------------------------------------------------------------------

  async readContent (projectId: string): Promise<ContentSnapshot | null> {
    const doc = await this.run(() => this.projects.findOne({ _id: projectId }, { projection: { version: 1, content: 1 }, maxTimeMS: this.timeoutMs }))
    return doc ? { version: doc.version, content: doc.content } : null
  }

  async readContentJson (projectId: string): Promise<{ version: number, json: string } | null> {
    const snapshot = await this.readContent(projectId)
    return snapshot ? { version: snapshot.version, json: JSON.stringify(snapshot.content) } : null
  }

  /** The write path (write-path.ts) as the engine's commit primitive. */
  protected contentCommitter (): ContentCommitter {
    return this.writes
  }

  /** The write path's reads and transactions on this database (write-path.ts). */
  private contentBackend (): ContentBackend {
    return {
      read: projectId => this.run(async (): Promise<StoredContent | null> => {
        const doc = await this.projects.findOne({ _id: projectId }, { projection: { version: 1, content: 1, contentBytes: 1, [SCHEMA_FIELD]: 1 }, maxTimeMS: this.timeoutMs })
        if (!doc) return null
        return { version: Number(doc.version), content: doc.content, contentBytes: doc.contentBytes, schema: doc.schema }
      }),
      commit: async write => {
        const committed = await this.run(() => this.commitContent(write))
        if (committed?.checkpointed === true && this.prunes.due(write.projectId, committed.version)) await this.prune(write.projectId, committed.version)
        return committed
      },
      // A revert's target: the content of a past version never changes, so it is read first.
      contentAt: async (projectId, version) => JSON.stringify((await this.readContentAt(projectId, version)).content)
    }
  }

  /**
   * ONE transaction: the filtered update of the project document (content, version, size,
   * tail bookkeeping), the change's entry in `changes`, and a checkpoint when one is due. null
   * when the filter matched nothing or the transaction aborted transiently (nothing written).
   */
  private async commitContent (write: ContentCommit): Promise<CommittedWrite | null> {
    if (write.update.$set?.content !== undefined && BSON.calculateObjectSize(write.update as Document) > MAX_BSON_DOCUMENT_BYTES) {
      throw new ContentdError('CONTENT_TOO_LARGE', 'the project document would pass MongoDB\'s 16 MiB limit')
    }
    const entry = changeDocOf(write.projectId, write.version, write.parts, write.value, write.at, write.actor) as ChangeDoc & { _id: ObjectId }
    entry._id = new ObjectId()
    if (write.idempotency) entry.idempotency = write.idempotency
    ;(entry as Document)[TOUCHED_PATHS_FIELD] = indexPathsOf(write.parts)
    const outcome = await this.client.withSession(session => runTransaction(session, this.transactionOptions, async () => {
      const updated = await this.projects.findOneAndUpdate(write.filter, write.update, {
        session, returnDocument: 'after', projection: WRITE_RESULT_PROJECTION, maxTimeMS: this.timeoutMs
      }) as { version: number, checkpointDue?: boolean } | null
      if (!updated) return null
      await this.changes.insertOne(entry, { session, maxTimeMS: this.timeoutMs })
      if (write.replaced) {
        // The entry holds the whole content: its version is a checkpoint without a copy.
        await this.checkpoints.insertOne({ projectId: write.projectId, version: write.version, content: null }, { session, maxTimeMS: this.timeoutMs })
        return { version: write.version, checkpointed: true }
      }
      if (updated.checkpointDue === true) {
        await this.writeCheckpoint(write.projectId, write.version, session)
        return { version: write.version, checkpointed: true }
      }
      return { version: write.version, checkpointed: false }
    }))
    // An unknown outcome: the entry, read from a majority, says whether the change happened.
    return settle(outcome, async () => (await this.changes.findOne({ _id: entry._id }, { projection: { _id: 1 }, maxTimeMS: this.timeoutMs })) !== null)
  }

  private async writeCheckpoint (projectId: string, version: number, session: ClientSession): Promise<void> {
    const current = await this.projects.findOne({ _id: projectId }, { session, projection: { content: 1 } })
    if (!current) throw new ContentdError('PROJECT_NOT_FOUND')
    await this.checkpoints.insertOne({ projectId, version, content: current.content }, { session })
    await this.projects.updateOne({ _id: projectId }, { $set: { tailCount: 0, tailBytes: 0 } }, { session })
  }

  /**
   * Retention, after a checkpoint was added once PruneSchedule says a bulk is due: deletes
   * what no answerable version needs (the same rule as the embedded store, content-log.ts).
   * The floor is raised first, so a reader that finds an entry gone re-reads it and answers
   * HISTORY_EXPIRED. Best effort: the
   * change is committed, and the next prune deletes what this one left.
   */
  private async prune (projectId: string, version: number): Promise<void> {
    if (this.history.limit === 0) return
    try {
      const base = await this.checkpoints.find({ projectId, version: { $lte: version - this.history.limit } }).sort({ version: -1 }).limit(1).next()
      if (!base) return
      await this.projects.updateOne({ _id: projectId, historyFloor: { $lt: base.version } }, { $set: { historyFloor: base.version } })
      await this.changes.deleteMany({ projectId, version: { $lt: base.version } })
      await this.checkpoints.deleteMany({ projectId, version: { $lt: base.version } })
    } catch { /* see above */ }
  }

  async readChangesJson (project: ProjectRecord, since: number, limit: number): Promise<ChangesJsonPage> {
    const { version, floor } = await this.historyState(project.id)
    if (since > version) throw new ContentdError('INVALID_VERSION', `since ${since} is above the current version ${version}`)
    if (since < floor) throw new ContentdError('HISTORY_EXPIRED', `changes after version ${since}; the oldest version kept is ${floor}`)
    // Up to the version read: later entries may be committing meanwhile. Small batches: the
    // read stops at CHANGES_PAGE_BYTES (docs/design.md §13b), so little is fetched past it.
    const cursor = this.changes.find({ projectId: project.id, version: { $gt: since, $lte: version } }).sort({ version: 1 }).limit(limit + 1).batchSize(CHANGES_BATCH)
    const page = await this.run(() => readChangesPage(cursor, projectRefOf(project), since, limit, this.options.changesPageBytes ?? DEFAULT_CHANGES_PAGE_BYTES))
    if (!page.complete || (!page.more && page.entries.length < Math.min(limit, version - since))) await this.historyGap(project.id, since)
    return { version, project: projectRefOf(project), entries: page.entries, more: page.more }
  }

  async readPathEntries (project: ProjectRecord, path: string, since: number, limit: number): Promise<PathEntriesPage> {
    const { version, floor } = await this.historyState(project.id)
    if (since > version) throw new ContentdError('INVALID_VERSION', `since ${since} is above the current version ${version}`)
    if (since < floor) throw new ContentdError('HISTORY_EXPIRED', `changes after version ${since}; the oldest version kept is ${floor}`)
    const cursor = this.changes.find(pathFilter(project.id, path, since, version)).sort({ version: 1 }).limit(limit + 1).batchSize(CHANGES_BATCH)
    const page = await this.run(() => readPathPage(cursor, projectRefOf(project), limit, this.options.changesPageBytes ?? DEFAULT_CHANGES_PAGE_BYTES))
    return { version, entries: page.entries, more: page.more }
  }

  async readContentAt (projectId: string, version: number): Promise<ContentSnapshot> {
    const state = await this.historyState(projectId)
    if (version > state.version) throw new ContentdError('VERSION_NOT_FOUND', `version ${version}; the current version is ${state.version}`)
    if (version < state.floor) throw new ContentdError('HISTORY_EXPIRED', `version ${version}; the oldest version kept is ${state.floor}`)
    if (version === state.version) {
      const doc = await this.run(() => this.projects.findOne({ _id: projectId, version }, { projection: { version: 1, content: 1 } }))
      if (doc) return { version, content: doc.content }
      // A change committed meanwhile: rebuild this version from the log like any other.
    }
    // The latest checkpoint at or below the version (none: `{}` at 0), then the entries after it.
    const checkpoint = await this.run(() => this.checkpoints.find({ projectId, version: { $lte: version } }).sort({ version: -1 }).limit(1).next())
    const from = checkpoint?.version ?? 0
    let content: JsonObject = {}
    if (checkpoint && checkpoint.content !== null) content = checkpoint.content
    else if (checkpoint) {
      const replacement = await this.run(() => this.changes.findOne({ projectId, version: from }))
      if (!replacement) return this.historyGap(projectId, version)
      content = replacement.value as JsonObject
    }
    const docs = from === version ? [] : await this.run(() => this.changes.find({ projectId, version: { $gt: from, $lte: version } }).sort({ version: 1 }).toArray())
    if (!contiguous(docs, from, version - from)) await this.historyGap(projectId, version)
    for (const doc of docs) content = applyContentOperation(content, operationOfChange(doc))
    return { version, content }
  }

  // ---- Idempotency-Key records (idempotency.ts) --------------------------------------

  claimIdempotencyKey (claim: IdempotencyClaim): Promise<IdempotencyState> { return this.run(() => this.idempotency.claim(claim)) }
  async finishIdempotencyKey (id: IdempotencyId, response: StoredResponse | null): Promise<void> { await this.run(() => this.idempotency.finish(id, response)) }
  deleteExpiredIdempotencyKeys (now: string): Promise<number> { return this.run(() => this.idempotency.deleteExpired(now)) }
  async findLoggedIdempotency (id: IdempotencyId): Promise<LoggedIdempotentChange | null> {
    const { filter, sort, projection } = loggedIdempotencyQuery(id)
    return loggedChangeOf(await this.run(() => this.changes.findOne(filter, { sort, projection, maxTimeMS: this.timeoutMs })))
  }

  // ---- the whole instance (instance-dump.ts; docs/design.md §18) ---------------------

  exportRecords (): AsyncIterable<InstanceRecord> { return this.dump.exportRecords() }
  importRecords (records: AsyncIterable<InstanceRecord>): Promise<ImportCounts> { return this.dump.importRecords(records) }

  /** The project's current version and oldest answerable one (history-policy.ts). */
  private async historyState (projectId: string): Promise<{ version: number, floor: number }> {
    const doc = await this.run(() => this.projects.findOne({ _id: projectId }, { projection: { version: 1, historyFloor: 1 } }))
    if (!doc) throw new ContentdError('PROJECT_NOT_FOUND')
    const version = Number(doc.version)
    // No floor yet: a project from before the change log that init() has not reached.
    return { version, floor: answerableFrom(version, doc.historyFloor ?? version, this.history) }
  }

  /**
   * Entries a read needed were missing. Retention raises the floor before it deletes, so
   * after a concurrent prune the floor says so (410); anything else is a store fault.
   */
  private async historyGap (projectId: string, needed: number): Promise<never> {
    const { floor } = await this.historyState(projectId)
    if (needed < floor) throw new ContentdError('HISTORY_EXPIRED', `version ${needed}; the oldest version kept is ${floor}`)
    throw new ContentdError('STORE_UNAVAILABLE', 'the change log is incomplete; retry')
  }

  /**
   * Projects written before the change log existed have no history: each one's starts at its
   * current version, whose content becomes a checkpoint.
   */
  private async startHistoryOfOlderProjects (): Promise<void> {
    const older = await this.projects.find({ historyFloor: { $exists: false } }, { projection: { _id: 1 } }).toArray()
    for (const { _id } of older) {
      await this.client.withSession(session => session.withTransaction(async () => {
        const doc = await this.projects.findOne({ _id, historyFloor: { $exists: false } }, { session, projection: { version: 1, content: 1 } })
        if (!doc) return
        await this.checkpoints.updateOne({ projectId: _id, version: doc.version }, { $setOnInsert: { content: doc.content } }, { upsert: true, session })
        await this.projects.updateOne({ _id }, { $set: { historyFloor: doc.version, tailCount: 0, tailBytes: 0 } }, { session })
      }))
    }
  }

  private compiledSchema (stored: Pick<SchemaDoc, 'revision' | 'json'>): ContentSchema {
    return this.schemas.get(stored.revision, () => JSON.parse(stored.json) as JsonSchema)
  }

  // ---- content schemas -------------------------------------------------------------

  async getSchema (projectId: string): Promise<SchemaRecord | null> {
    const doc = await this.run(() => this.projects.findOne({ _id: projectId }, { projection: { [SCHEMA_FIELD]: 1 } }))
    const stored = doc?.schema
    return stored ? { revision: stored.revision, schema: JSON.parse(stored.json) as JsonSchema, setBy: stored.setBy, setAt: stored.setAt } : null
  }

  async putSchema (projectId: string, record: SchemaRecord): Promise<void> {
    const compiled = this.schemas.get(record.revision, () => record.schema)
    const stored: SchemaDoc = { revision: record.revision, json: JSON.stringify(record.schema), setBy: record.setBy, setAt: record.setAt }
    // Checked against the content at one version, stored only while that version is current.
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const doc = await this.run(() => this.projects.findOne({ _id: projectId }, { projection: { version: 1, content: 1 } }))
      if (!doc) throw new ContentdError('PROJECT_NOT_FOUND')
      const violations = compiled.validate(doc.content)
      if (violations.length > 0) throw schemaViolation(violations, 409)
      const result = await this.run(() => this.projects.updateOne({ _id: projectId, version: doc.version }, { $set: { [SCHEMA_FIELD]: stored } }))
      if (result.matchedCount > 0) return
    }
    throw new ContentdError('STORE_UNAVAILABLE', 'the project is changing too fast to set its schema; retry')
  }

  async deleteSchema (projectId: string): Promise<boolean> {
    const result = await this.run(() => this.projects.updateOne({ _id: projectId, [SCHEMA_FIELD]: { $exists: true } }, { $unset: { [SCHEMA_FIELD]: '' } }))
    return result.modifiedCount > 0
  }
}


/** `count` entries following version `after`, one per version, in order. */
function contiguous (docs: ChangeDoc[], after: number, count: number): boolean {
  return docs.length === count && docs.every((doc, i) => doc.version === after + 1 + i)
}

function memberId (projectId: string, userId: string): string {
  return `${projectId}/${userId}`
}

function toUser (doc: UserDoc | null): UserRecord | null {
  return doc ? { id: doc._id, username: doc.username, passwordHash: doc.passwordHash, createdAt: doc.createdAt } : null
}

function toKey (doc: ApiKeyDoc): ApiKeyRecord {
  return {
    id: doc._id,
    userId: doc.userId,
    name: doc.name,
    prefix: doc.prefix,
    keyHash: doc.keyHash,
    permission: doc.permission,
    projectIds: doc.projectIds,
    paths: doc.paths ?? null,
    ops: doc.ops ?? null,
    expiresAt: doc.expiresAt,
    createdAt: doc.createdAt
  }
}

function toProject (doc: Omit<ProjectDoc, 'content'> | null): ProjectRecord | null {
  if (!doc) return null
  return {
    id: doc._id,
    ownerId: doc.ownerId,
    ownerName: doc.ownerName,
    slug: doc.slug,
    name: doc.name,
    createdAt: doc.createdAt,
    version: Number(doc.version)
  }
}
