// The MongoDB store (STORE=mongodb). Stateless nodes share one MongoDB (a replica set in
// production); each content operation is ONE findOneAndUpdate on the project document
// (content embedded, with its version), translated in translate.ts.
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
// for the compare-and-set path, where the operation is applied to the read document with the
// shared core and the result checked against that schema before the write is sent.
import { MongoClient, type Collection, type Db } from 'mongodb'
import { ContentdError } from '../../../shared/errors.js'
import type { JsonObject } from '../../../shared/json.js'
import type { NarrowableOperation } from '../../../shared/key-scope.js'
import { applyOperation, type Operation } from '../../../shared/operations.js'
import { validateOperation } from '../../../shared/validate-operation.js'
import type { JsonSchema } from '../../schema/compile.js'
import { schemaViolation } from '../../schema/content-schema.js'
import { SchemaCache } from '../../schema/schema-cache.js'
import type {
  ApiKeyRecord, ApplyOptions, CommitListener, CommittedChange, ContentSnapshot, MemberRecord, MemberRole, Permission,
  ProjectRecord, ProjectRole, SchemaRecord, SessionRecord, Store, UserRecord, VersionCondition
} from '../types.js'
import { CommitEmitter } from '../commit-emitter.js'
import { CommitSequencer } from '../commit-sequencer.js'
import { versionMatches } from '../version-condition.js'
import { startupFailureMessage } from './connection.js'
import { databaseNameFrom } from './uri.js'
import { isDuplicateKey, mapDriverError } from './driver-errors.js'
import { SCHEMA_FIELD, withSchemaCondition } from './schema-condition.js'
import { contentBsonBytes, effectiveContentLimit, translateOperation, type MongoWrite } from './translate.js'

export interface MongoStoreOptions {
  uri: string
  /** CONTENT_LIMIT; on MongoDB measured in BSON bytes and capped below the 16 MiB document limit. */
  contentLimitBytes: number
  /** Default: the database in the URI, else "contentd". */
  databaseName?: string
  serverSelectionTimeoutMS?: number
}

interface UserDoc { _id: string, username: string, passwordHash: string, createdAt: string }
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
  content: JsonObject, schema?: SchemaDoc
}
interface MemberDoc { _id: string, projectId: string, userId: string, role: MemberRole }

/** Concurrent changes can beat a compare-and-set; after this many rounds answer 503. */
const MAX_WRITE_ATTEMPTS = 8
const PROJECT_FIELDS = { content: 0, [SCHEMA_FIELD]: 0 } as const

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
  }

  async init (): Promise<void> {
    try {
      await this.client.connect()
      await Promise.all([
        this.users.createIndex({ username: 1 }, { unique: true }),
        // The TTL monitor removes expired sessions (identity also refuses them on sight).
        this.sessions.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
        this.sessions.createIndex({ userId: 1 }),
        this.apiKeys.createIndex({ keyHash: 1 }, { unique: true }),
        this.apiKeys.createIndex({ userId: 1, createdAt: 1 }),
        this.projects.createIndex({ ownerId: 1, slug: 1 }, { unique: true }),
        this.projects.createIndex({ ownerName: 1, slug: 1 }),
        this.members.createIndex({ projectId: 1, userId: 1 }, { unique: true }),
        this.members.createIndex({ userId: 1 })
      ])
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
      await this.run(() => this.users.insertOne({ _id: user.id, username: user.username, passwordHash: user.passwordHash, createdAt: user.createdAt }))
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

  async listUsers (): Promise<UserRecord[]> {
    const docs = await this.run(() => this.users.find({}).sort({ username: 1 }).toArray())
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

  async createApiKey (k: ApiKeyRecord): Promise<void> {
    await this.run(() => this.apiKeys.insertOne({
      _id: k.id, userId: k.userId, name: k.name, prefix: k.prefix, keyHash: k.keyHash, permission: k.permission,
      projectIds: k.projectIds, paths: k.paths, ops: k.ops, expiresAt: k.expiresAt, createdAt: k.createdAt
    }))
  }

  async findApiKeyById (id: string): Promise<ApiKeyRecord | null> {
    const doc = await this.run(() => this.apiKeys.findOne({ _id: id }))
    return doc ? toKey(doc) : null
  }

  async findApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | null> {
    const doc = await this.run(() => this.apiKeys.findOne({ keyHash }))
    return doc ? toKey(doc) : null
  }

  async listApiKeys (userId: string): Promise<ApiKeyRecord[]> {
    const docs = await this.run(() => this.apiKeys.find({ userId }).sort({ createdAt: 1, _id: 1 }).toArray())
    return docs.map(toKey)
  }

  async deleteApiKey (userId: string, id: string): Promise<boolean> {
    const result = await this.run(() => this.apiKeys.deleteOne({ _id: id, userId }))
    return result.deletedCount > 0
  }

  // ---- projects and members --------------------------------------------------------

  async createProject (p: Omit<ProjectRecord, 'version'>): Promise<ProjectRecord> {
    try {
      await this.run(() => this.projects.insertOne({
        _id: p.id, ownerId: p.ownerId, ownerName: p.ownerName, slug: p.slug, name: p.name, createdAt: p.createdAt, version: 0, content: {}
      }))
    } catch (e) {
      if (isDuplicateKey(e)) throw new ContentdError('PROJECT_EXISTS')
      throw e
    }
    return { ...p, version: 0 }
  }

  async findProject (ownerName: string, slug: string): Promise<ProjectRecord | null> {
    return toProject(await this.run(() => this.projects.findOne({ ownerName, slug }, { projection: PROJECT_FIELDS })))
  }

  async findProjectsByIds (ids: string[]): Promise<ProjectRecord[]> {
    if (ids.length === 0) return []
    const docs = await this.run(() => this.projects.find({ _id: { $in: ids } }, { projection: PROJECT_FIELDS }).toArray())
    const byId = new Map(docs.map(doc => [doc._id, doc]))
    // The order asked for, like the embedded store.
    return ids.flatMap(id => { const doc = byId.get(id); return doc ? [toProject(doc) as ProjectRecord] : [] })
  }

  async listProjectsForUser (userId: string): Promise<Array<ProjectRecord & { role: ProjectRole }>> {
    const [owned, memberships] = await Promise.all([
      this.run(() => this.projects.find({ ownerId: userId }, { projection: PROJECT_FIELDS }).toArray()),
      this.run(() => this.members.find({ userId }).toArray())
    ])
    const roles = new Map(memberships.map(m => [m.projectId, m.role]))
    const shared = roles.size === 0
      ? []
      : await this.run(() => this.projects.find({ _id: { $in: [...roles.keys()] } }, { projection: PROJECT_FIELDS }).toArray())
    const all: Array<ProjectRecord & { role: ProjectRole }> = [
      ...owned.map(doc => ({ ...(toProject(doc) as ProjectRecord), role: 'owner' as const })),
      ...shared.map(doc => ({ ...(toProject(doc) as ProjectRecord), role: roles.get(doc._id) as MemberRole }))
    ]
    return all.sort((a, b) => compare(a.ownerName, b.ownerName) || compare(a.slug, b.slug))
  }

  async deleteProject (id: string): Promise<void> {
    await this.run(() => this.projects.deleteOne({ _id: id }))
    this.projectsWithSchema.delete(id)
    // The embedded store cascades; here the memberships go right after the project.
    await this.run(() => this.members.deleteMany({ projectId: id }))
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

  async listMembers (projectId: string): Promise<MemberRecord[]> {
    const docs = await this.run(() => this.members.find({ projectId }).toArray())
    if (docs.length === 0) return []
    const users = await this.run(() => this.users.find({ _id: { $in: docs.map(d => d.userId) } }).toArray())
    const names = new Map(users.map(u => [u._id, u.username]))
    return docs
      .filter(d => names.has(d.userId))
      .map(d => ({ userId: d.userId, username: names.get(d.userId) as string, role: d.role }))
      .sort((a, b) => compare(a.username, b.username))
  }

  // ---- content ---------------------------------------------------------------------

  async readContent (projectId: string): Promise<ContentSnapshot | null> {
    const doc = await this.run(() => this.projects.findOne({ _id: projectId }, { projection: { version: 1, content: 1 } }))
    return doc ? { version: doc.version, content: doc.content } : null
  }

  async applyOperation (project: ProjectRecord, operation: Operation, options: ApplyOptions = {}): Promise<{ version: number }> {
    validateOperation(operation)
    const limit = this.contentLimit
    // A replacement measured here exactly; one over the limit goes straight to diagnosis (412 before 413).
    // With a schema, the first attempt is the checked compare-and-set (below), not a blind update.
    let write: MongoWrite | null = (operation.op === 'update' && contentBsonBytes(operation.value) > limit) || this.projectsWithSchema.has(project.id)
      ? null
      : withSchemaCondition(translateOperation(project.id, operation, { contentLimitBytes: limit, ifMatch: options.ifMatch }), null)
    const ticket = this.sequencer.begin(project.id)
    let committed: CommittedChange | null = null
    try {
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
        if (write) {
          const { filter, update, options: writeOptions } = write
          const updated = await this.run(() => this.projects.findOneAndUpdate(filter, update, writeOptions), operation.op)
          if (updated) {
            const version = Number(updated.version)
            committed = { project, version, operation, at: new Date().toISOString() }
            return { version }
          }
        }
        const { version, schemaRevision } = await this.diagnose(project.id, operation, options.ifMatch)
        write = withSchemaCondition(translateOperation(project.id, operation, { contentLimitBytes: limit, expectVersion: version }), schemaRevision)
      }
      throw new ContentdError('STORE_UNAVAILABLE', 'the project is changing too fast to apply this change; retry')
    } finally {
      // Replies race over the connection pool; the sequencer hands changes to listeners in
      // version order (see commit-sequencer.ts).
      this.sequencer.finish(ticket, committed)
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
    if (doc.schema) this.projectsWithSchema.add(projectId)
    else this.projectsWithSchema.delete(projectId)
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

function memberId (projectId: string, userId: string): string {
  return `${projectId}/${userId}`
}

/** Code-unit order, like SQLite's BINARY collation for the ASCII names used here. */
function compare (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
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
