// The MongoDB store (STORE=mongodb). Stateless nodes share one MongoDB replica set; each
// content operation is ONE findOneAndUpdate on the project document (content embedded, with
// its version), translated in translate.ts, and the change's log entry is inserted into
// `changes` in the same transaction (docs/design.md §9; docs/mongodb.md says why that is
// atomic): a change is in the content exactly when it is in the log.
//
// When the guarded update matches nothing, the document is read once, only to name the
// error: the shared applyOperation runs on a copy, so the error is exactly the embedded
// store's. If the operation would succeed on what was read (a concurrent change got in
// between, or the content is close to its limit and needed an exact measure), the write is
// retried as a compare-and-set on the version read: still one atomic update, never a
// read-then-write race.
//
// A project with a content schema (docs/design.md §12) keeps it in its document. Every write's
// filter names the schema revision it was checked against (schema-condition.ts): none for the
// single-update path, which therefore matches nothing once a schema exists; the revision read
// for the compare-and-set path (and for batches, patches and reverts), where the operation is
// applied to the read document with the shared core and the result checked against that
// schema before the write and its log entry are sent in one transaction.
import { MongoClient, type ClientSession, type Collection, type Db } from 'mongodb'
import { ContentdError, isContentdError } from '../../../shared/errors.js'
import { applyContentOperation, isCompound, type CompoundOperation } from '../../../shared/compound.js'
import { operationOfChange } from '../../../shared/events.js'
import type { Json, JsonObject } from '../../../shared/json.js'
import type { NarrowableOperation } from '../../../shared/key-scope.js'
import { applyOperation, type Operation } from '../../../shared/operations.js'
import { validateOperation } from '../../../shared/validate-operation.js'
import type { JsonSchema } from '../../schema/compile.js'
import { schemaViolation } from '../../schema/content-schema.js'
import { SchemaCache } from '../../schema/schema-cache.js'
import type {
  ApiKeyRecord, ApplyOptions, ChangesPage, CommitListener, CommittedChange, ContentSnapshot, HistoryOptions, IdempotencyClaim, IdempotencyId,
  IdempotencyState, KeyPosition, ListedApiKey, MemberRecord, MemberRole, PageRequest, Permission, ProjectPosition, ProjectRecord, ProjectRole,
  SchemaRecord, SessionRecord, Store, StoreOperation, StoredResponse, UserRecord, VersionCondition
} from '../types.js'
import { changePartsOf, entryOf, projectRefOf, type ChangeParts } from '../change-entry.js'
import { CommitEmitter } from '../commit-emitter.js'
import { DEFAULT_CHANGES_PAGE_BYTES } from '../change-pages.js'
import { CommitSequencer } from '../commit-sequencer.js'
import { answerableFrom } from '../history-policy.js'
import { versionMatches } from '../version-condition.js'
import { standaloneMessage, startupFailureMessage } from './connection.js'
import { databaseNameFrom } from './uri.js'
import { MongoWebhooks } from './webhooks.js'
import { computedWrite, SerialPerProject } from './computed-write.js'
import { MongoIdempotency } from './idempotency.js'
import { isDuplicateKey, mapDriverError } from './driver-errors.js'
import {
  changeDocOf, supportsTransactions, withTailBookkeeping, WRITE_RESULT_PROJECTION, type ChangeDoc, type CheckpointDoc
} from './history.js'
import { CHANGES_BATCH, readChangesPage } from './history.js'
import { SCHEMA_FIELD, withSchemaCondition } from './schema-condition.js'
import { contentBsonBytes, effectiveContentLimit, translateOperation, valueBsonBytes, type MongoWrite } from './translate.js'
import { keysPagePipeline, membersPagePipeline, projectsPagePipeline } from './pages.js'
import { QuotaCounters } from './quota-counters.js'

export interface MongoStoreOptions {
  uri: string
  /** CONTENT_LIMIT; on MongoDB measured in BSON bytes and capped below the 16 MiB document limit. */
  contentLimitBytes: number
  /** HISTORY_LIMIT: change log entries answerable per project; 0 keeps all. */
  historyLimit: number
  /** CHANGES_PAGE_BYTES (docs/design.md §13b); default DEFAULT_CHANGES_PAGE_BYTES. */
  changesPageBytes?: number
  /** Default: the database in the URI, else "contentd". */
  databaseName?: string
  serverSelectionTimeoutMS?: number
}

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

/** Concurrent changes can beat a compare-and-set; after this many rounds answer 503. */
const MAX_WRITE_ATTEMPTS = 8
const PROJECT_FIELDS = { content: 0, [SCHEMA_FIELD]: 0, historyFloor: 0, tailCount: 0, tailBytes: 0 } as const

export class MongoStore implements Store {
  readonly kind = 'mongodb'
  private readonly client: MongoClient
  private readonly db: Db
  private readonly commitListeners = new CommitEmitter()
  private readonly sequencer = new CommitSequencer(change => this.commitListeners.emit(change))
  private readonly contentLimit: number
  private readonly selectionTimeoutMs: number
  private readonly users: Collection<UserDoc>
  private readonly sessions: Collection<SessionDoc>
  private readonly apiKeys: Collection<ApiKeyDoc>
  private readonly projects: Collection<ProjectDoc>
  private readonly members: Collection<MemberDoc>
  private readonly schemas = new SchemaCache()
  /** Projects last seen with a schema: their writes go straight to the checked compare-and-set. */
  private readonly projectsWithSchema = new Set<string>()
  private readonly changes: Collection<ChangeDoc>
  private readonly checkpoints: Collection<CheckpointDoc>
  private readonly history: HistoryOptions
  private readonly quotas: QuotaCounters
  /** Webhooks and their deliveries (webhooks.ts). */
  readonly webhooks: MongoWebhooks
  private readonly idempotency: MongoIdempotency
  private readonly computedWrites = new SerialPerProject()

  constructor (private readonly options: MongoStoreOptions) {
    this.selectionTimeoutMs = options.serverSelectionTimeoutMS ?? 5000
    try {
      // Parses the URI; no I/O until init().
      this.client = new MongoClient(options.uri, { serverSelectionTimeoutMS: this.selectionTimeoutMs, appName: 'contentd' })
    } catch (e) {
      throw new Error(startupFailureMessage(e, options.uri, this.selectionTimeoutMs))
    }
    this.db = this.client.db(options.databaseName ?? databaseNameFrom(options.uri))
    this.contentLimit = effectiveContentLimit(options.contentLimitBytes)
    this.users = this.db.collection('users')
    this.sessions = this.db.collection('sessions')
    this.apiKeys = this.db.collection('apiKeys')
    this.projects = this.db.collection('projects')
    this.members = this.db.collection('members')
    this.changes = this.db.collection('changes')
    this.checkpoints = this.db.collection('checkpoints')
    this.history = { limit: options.historyLimit, enabled: true }
    this.quotas = new QuotaCounters(this.db.collection('users'))
    this.webhooks = new MongoWebhooks(this.db, call => this.run(call))
    this.idempotency = new MongoIdempotency(this.db.collection('idempotencyKeys'))
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

  onCommit (listener: CommitListener): void {
    this.commitListeners.on(listener)
  }

  /** Runs a driver call, turning driver errors into catalogued ones where they have a name. */
  private async run<T> (call: () => Promise<T>, op?: Operation['op']): Promise<T> {
    try {
      return await call()
    } catch (e) {
      throw mapDriverError(e, op)
    }
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
    const deleted = await this.run(() => this.projects.findOneAndDelete({ _id: id }, { projection: { ownerId: 1 } }))
    this.projectsWithSchema.delete(id)
    // The embedded store cascades; here the memberships and the history go right after the
    // project. A project created again under the same name has a new id: whatever a crash
    // between these deletes left behind is never read.
    await this.run(() => this.members.deleteMany({ projectId: id }))
    await this.run(() => this.changes.deleteMany({ projectId: id }))
    await this.run(() => this.checkpoints.deleteMany({ projectId: id }))
    if (deleted) await this.run(() => this.quotas.give(deleted.ownerId, 'projectCount'))
    await this.webhooks.deleteOfProject(id)
    await this.run(() => this.idempotency.deleteProject(id))
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
    const doc = await this.run(() => this.projects.findOne({ _id: projectId }, { projection: { version: 1, content: 1 } }))
    return doc ? { version: doc.version, content: doc.content } : null
  }

  async applyOperation (project: ProjectRecord, operation: StoreOperation, options: ApplyOptions): Promise<{ version: number }> {
    if (operation.op === 'revert') return this.revert(project, operation.version, options)
    if (isCompound(operation)) return this.computedWrites.run(project.id, () => this.commitComputed(project, operation, options))
    validateOperation(operation)
    return this.commit(project, operation, changePartsOf(operation), 'value' in operation ? operation.value : undefined, options)
  }

  /**
   * A revert: the content at `version`, read first (the content of a past version never
   * changes), then written as a replacement whose entry says what it restored.
   */
  private async revert (project: ProjectRecord, version: number, options: ApplyOptions): Promise<{ version: number }> {
    let target: ContentSnapshot
    try {
      target = await this.readContentAt(project.id, version)
    } catch (e) {
      // If-Match is checked before the operation's own errors (docs/design.md §4 step 6).
      if (isContentdError(e) && options.ifMatch !== undefined && (e.code === 'VERSION_NOT_FOUND' || e.code === 'HISTORY_EXPIRED')) {
        const current = await this.run(() => this.projects.findOne({ _id: project.id }, { projection: { version: 1 } }))
        if (current && !versionMatches(options.ifMatch, current.version)) throw new ContentdError('PRECONDITION_FAILED')
      }
      throw e
    }
    return this.commit(project, { op: 'update', value: target.content }, changePartsOf({ op: 'revert', version }), target.content, options)
  }

  /**
   * Applies `operation` and logs it as `parts` + `value`, in one transaction per attempt.
   * When the guarded update matches nothing, diagnose() names the error or gives the version
   * to retry a compare-and-set on.
   */
  private async commit (project: ProjectRecord, operation: Operation, parts: ChangeParts, value: Json | undefined, options: ApplyOptions): Promise<{ version: number }> {
    const limit = this.contentLimit
    const replaced = operation.op === 'update'
    // Roughly what the entry weighs, for the checkpoint rule (history-policy.ts): it need not be exact.
    const entryBytes = (value === undefined ? 0 : valueBsonBytes(value)) + (parts.path?.length ?? 0) + ENTRY_OVERHEAD_BYTES
    // A replacement measured here exactly; one over the limit goes straight to diagnosis (412 before 413).
    // With a schema, the first attempt is the checked compare-and-set (below), not a blind update.
    let write: MongoWrite | null = (replaced && contentBsonBytes(operation.value) > limit) || this.projectsWithSchema.has(project.id)
      ? null
      : withSchemaCondition(translateOperation(project.id, operation, { contentLimitBytes: limit, ifMatch: options.ifMatch }), null)
    const ticket = this.sequencer.begin(project.id)
    let committed: CommittedChange | null = null
    let written: WriteResult | null = null
    try {
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS && !written; attempt++) {
        if (write) {
          const attemptWrite = write
          written = await this.run(() => this.writeWithEntry(project.id, attemptWrite, replaced, entryBytes, parts, value, options.actor), operation.op)
          if (written) break
        }
        const { version, schemaRevision } = await this.diagnose(project.id, operation, options.ifMatch)
        write = withSchemaCondition(translateOperation(project.id, operation, { contentLimitBytes: limit, expectVersion: version }), schemaRevision)
      }
      if (!written) throw new ContentdError('STORE_UNAVAILABLE', 'the project is changing too fast to apply this change; retry')
      committed = { project, entry: entryOf(projectRefOf(project), written.version, parts, value, written.at, options.actor) }
    } finally {
      // Replies race over the connection pool; the sequencer hands changes to listeners in
      // version order (see commit-sequencer.ts).
      this.sequencer.finish(ticket, committed)
    }
    if (written.checkpointed) await this.prune(project.id, written.version)
    return { version: written.version }
  }

  /**
   * A batch or patch (computed-write.ts): read the document, apply with the shared core, write
   * the result back as a compare-and-set on the version read, with its entry in the same
   * transaction. The guard misses only when another change got in between: read again.
   */
  private async commitComputed (project: ProjectRecord, operation: CompoundOperation, options: ApplyOptions): Promise<{ version: number }> {
    const parts = changePartsOf(operation)
    const entryBytes = JSON.stringify(parts.operations).length + ENTRY_OVERHEAD_BYTES
    const ticket = this.sequencer.begin(project.id)
    let committed: CommittedChange | null = null
    let written: WriteResult | null = null
    try {
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS && !written; attempt++) {
        const doc = await this.run(() => this.projects.findOne({ _id: project.id }, { projection: { version: 1, content: 1, [SCHEMA_FIELD]: 1 } }))
        if (!doc) throw new ContentdError('PROJECT_NOT_FOUND')
        this.noteSchema(project.id, doc.schema)
        if (options.ifMatch !== undefined && !versionMatches(options.ifMatch, doc.version)) throw new ContentdError('PRECONDITION_FAILED')
        // The engine never changes the document it is given (shared/working-copy.ts).
        const content = applyContentOperation(doc.content, operation)
        const bytes = contentBsonBytes(content)
        if (bytes > this.contentLimit) throw new ContentdError('CONTENT_TOO_LARGE', `the content would be ${bytes} BSON bytes; the limit is ${this.contentLimit}`)
        // The whole result against the schema read with it (docs/design.md §10: 422 for the
        // batch as a whole); the write's filter requires that very schema revision.
        if (doc.schema) this.compiledSchema(doc.schema).enforce(doc.content, operation)(content)
        const write = withSchemaCondition(computedWrite(project.id, content, Number(doc.version), this.contentLimit), doc.schema?.revision ?? null)
        written = await this.run(() => this.writeWithEntry(project.id, write, false, entryBytes, parts, undefined, options.actor))
      }
      if (!written) throw new ContentdError('STORE_UNAVAILABLE', 'the project is changing too fast to apply this change; retry')
      committed = { project, entry: entryOf(projectRefOf(project), written.version, parts, undefined, written.at, options.actor) }
    } finally {
      this.sequencer.finish(ticket, committed)
    }
    if (written.checkpointed) await this.prune(project.id, written.version)
    return { version: written.version }
  }

  /**
   * ONE transaction: the guarded update of the project document (content, version, tail
   * bookkeeping), the change's entry in `changes`, and a checkpoint when one is due. null
   * when the guard matched nothing (the transaction then wrote nothing).
   */
  private writeWithEntry (projectId: string, write: MongoWrite, replaced: boolean, entryBytes: number, parts: ChangeParts, value: Json | undefined, actor: ApplyOptions['actor']): Promise<WriteResult | null> {
    return this.client.withSession(session => session.withTransaction(async (): Promise<WriteResult | null> => {
      // Inside the callback: withTransaction may run it again after a transient conflict.
      const at = new Date().toISOString()
      const update = withTailBookkeeping(write.update, replaced, entryBytes)
      const updated = await this.projects.findOneAndUpdate(write.filter, update, { ...write.options, projection: WRITE_RESULT_PROJECTION, session }) as { version: number, checkpointDue?: boolean } | null
      if (!updated) return null
      const version = Number(updated.version)
      await this.changes.insertOne(changeDocOf(projectId, version, parts, value, at, actor), { session })
      if (replaced) {
        // The entry holds the whole content: its version is a checkpoint without a copy.
        await this.checkpoints.insertOne({ projectId, version, content: null }, { session })
        return { version, at, checkpointed: true }
      }
      if (updated.checkpointDue === true) {
        await this.writeCheckpoint(projectId, version, session)
        return { version, at, checkpointed: true }
      }
      return { version, at, checkpointed: false }
    }))
  }

  private async writeCheckpoint (projectId: string, version: number, session: ClientSession): Promise<void> {
    const current = await this.projects.findOne({ _id: projectId }, { session, projection: { content: 1 } })
    if (!current) throw new ContentdError('PROJECT_NOT_FOUND')
    await this.checkpoints.insertOne({ projectId, version, content: current.content }, { session })
    await this.projects.updateOne({ _id: projectId }, { $set: { tailCount: 0, tailBytes: 0 } }, { session })
  }

  /**
   * Retention, after a checkpoint was added: deletes what no answerable version needs (the
   * same rule as the embedded store, content-log.ts). The floor is raised first, so a reader
   * that finds an entry gone re-reads it and answers HISTORY_EXPIRED. Best effort: the
   * change is committed, and the next checkpoint prunes again.
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

  async readChanges (project: ProjectRecord, since: number, limit: number): Promise<ChangesPage> {
    const { version, floor } = await this.historyState(project.id)
    if (since > version) throw new ContentdError('INVALID_VERSION', `since ${since} is above the current version ${version}`)
    if (since < floor) throw new ContentdError('HISTORY_EXPIRED', `changes after version ${since}; the oldest version kept is ${floor}`)
    // Up to the version read: later entries may be committing meanwhile. Small batches: the
    // read stops at CHANGES_PAGE_BYTES (docs/design.md §13b), so little is fetched past it.
    const cursor = this.changes.find({ projectId: project.id, version: { $gt: since, $lte: version } }).sort({ version: 1 }).limit(limit + 1).batchSize(CHANGES_BATCH)
    const page = await this.run(() => readChangesPage(cursor, projectRefOf(project), since, limit, this.options.changesPageBytes ?? DEFAULT_CHANGES_PAGE_BYTES))
    if (!page.complete || (!page.more && page.changes.length < Math.min(limit, version - since))) await this.historyGap(project.id, since)
    return { version, changes: page.changes, more: page.more }
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

  /**
   * Why did the guarded update match nothing (or: may this operation commit, for a project
   * with a schema)? Throws the catalogued error the embedded store would give for the
   * document as it is now; returns its version and schema revision when the operation would
   * succeed on it (the caller then retries as a compare-and-set on both).
   */
  private async diagnose (projectId: string, operation: Operation, ifMatch: VersionCondition | undefined): Promise<{ version: number, schemaRevision: string | null }> {
    const doc = await this.run(() => this.projects.findOne({ _id: projectId }, { projection: { version: 1, content: 1, [SCHEMA_FIELD]: 1 } }))
    if (!doc) throw new ContentdError('PROJECT_NOT_FOUND')
    this.noteSchema(projectId, doc.schema)
    if (ifMatch !== undefined && !versionMatches(ifMatch, doc.version)) throw new ContentdError('PRECONDITION_FAILED')
    // On a copy: the write is the guarded update (or compare-and-set) sent afterwards.
    const copy = structuredClone(doc.content)
    const check = doc.schema ? this.compiledSchema(doc.schema).enforce(copy, operation) : null
    const candidate = applyOperation(copy, operation)
    const bytes = contentBsonBytes(candidate)
    if (bytes > this.contentLimit) {
      throw new ContentdError('CONTENT_TOO_LARGE', `the content would be ${bytes} BSON bytes; the limit is ${this.contentLimit}`)
    }
    check?.(candidate)
    return { version: doc.version, schemaRevision: doc.schema?.revision ?? null }
  }

  /** Remembers whether the project had a schema when last read (see projectsWithSchema). */
  private noteSchema (projectId: string, schema: SchemaDoc | undefined): void {
    if (schema) this.projectsWithSchema.add(projectId)
    else this.projectsWithSchema.delete(projectId)
  }

  private compiledSchema (stored: SchemaDoc) {
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
      if (result.matchedCount > 0) {
        this.projectsWithSchema.add(projectId)
        return
      }
    }
    throw new ContentdError('STORE_UNAVAILABLE', 'the project is changing too fast to set its schema; retry')
  }

  async deleteSchema (projectId: string): Promise<boolean> {
    const result = await this.run(() => this.projects.updateOne({ _id: projectId, [SCHEMA_FIELD]: { $exists: true } }, { $unset: { [SCHEMA_FIELD]: '' } }))
    this.projectsWithSchema.delete(projectId)
    return result.modifiedCount > 0
  }
}

interface WriteResult { version: number, at: string, checkpointed: boolean }

/** Roughly the bytes of an entry besides its value and path: version, op, time, actor. */
const ENTRY_OVERHEAD_BYTES = 128

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
