// The MongoDB store's whole-instance export and import (docs/design.md §18; the records:
// ../instance-records.ts, the same lines the embedded store reads and writes).
//
// Export reads each collection with a cursor in _id (or version) order, one project's
// content at a time. It is not one moment of the database (a transaction long enough for a
// whole instance is not to be had): stop the servers first, or export from a copy
// (docs/operations.md "Moving between stores").
//
// Import is not one transaction either: MongoDB bounds a transaction's time and size, an
// instance is unbounded. It inserts into an empty database (no user, no project) in batches,
// and on any failure deletes everything it inserted (by the user and project ids it
// imported) before throwing: all or nothing, as long as this process lives to clean up. A
// process killed mid-import leaves a partial import: the next import refuses the store, so
// drop the database and import again. Start the servers only after it has finished.
import type { Collection, Db, Document } from 'mongodb'
import type { JsonObject } from '../../../shared/json.js'
import { ImportOrder } from '../instance-import-order.js'
import { ImportRefusedError, InstanceLineError, orderedEntry, type ImportCounts, type InstanceRecord } from '../instance-records.js'
import type { ApiKeyRecord, Permission } from '../types.js'
import { indexPathsOf } from '../../../shared/live-path.js'
import { TOUCHED_PATHS_FIELD } from './path-index.js'
import { SCHEMA_FIELD } from './schema-condition.js'

/** Documents inserted per round trip. */
const BATCH_DOCS = 500
/** ... or fewer, once they weigh about this much as JSON (MongoDB's message limit is 48 MB). */
const BATCH_BYTES = 8 * 1024 * 1024
/** Ids per delete when cleaning up after a failed import. */
const DELETE_CHUNK = 1000

/** A collection's pending inserts, each with the line it came from (to name a refused one). */
class Batch {
  private docs: Document[] = []
  private lines: number[] = []
  private bytes = 0

  private readonly collection: Collection<Document>

  constructor (collection: Collection<IdDoc> | Collection<Document>) {
    this.collection = collection as unknown as Collection<Document>
  }

  async add (doc: Document, line: number, bytes: number): Promise<void> {
    this.docs.push(doc)
    this.lines.push(line)
    this.bytes += bytes
    if (this.docs.length >= BATCH_DOCS || this.bytes >= BATCH_BYTES) await this.flush()
  }

  async flush (): Promise<void> {
    if (this.docs.length === 0) return
    const docs = this.docs
    const lines = this.lines
    this.docs = []
    this.lines = []
    this.bytes = 0
    try {
      await this.collection.insertMany(docs, { ordered: true })
    } catch (error) {
      const index = (error as { writeErrors?: Array<{ index?: number }> | { index?: number } }).writeErrors
      const first = Array.isArray(index) ? index[0]?.index : index?.index
      const line = lines[first ?? 0] ?? lines[0] ?? 0
      throw new InstanceLineError(line, `refused by the store: ${(error as Error).message}`)
    }
  }
}

/** A document keyed by a string id (every collection here but the change log's). */
interface IdDoc extends Document { _id: string }

export interface DumpCollections {
  users: Collection<IdDoc>
  apiKeys: Collection<IdDoc>
  projects: Collection<IdDoc>
  members: Collection<IdDoc>
  changes: Collection<Document>
  checkpoints: Collection<Document>
  webhooks: Collection<IdDoc>
  /** By project id (app-rules.ts): the rules document and the trusted app sign-in. */
  projectRules: Collection<IdDoc>
  projectAppAuth: Collection<IdDoc>
}

export function dumpCollections (db: Db): DumpCollections {
  return {
    users: db.collection('users'),
    apiKeys: db.collection('apiKeys'),
    projects: db.collection('projects'),
    members: db.collection('members'),
    changes: db.collection('changes'),
    checkpoints: db.collection('checkpoints'),
    webhooks: db.collection('webhooks'),
    projectRules: db.collection('projectRules'),
    projectAppAuth: db.collection('projectAppAuth')
  }
}

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value))
const str = (value: unknown): string => String(value)
const strOrNull = (value: unknown): string | null => value === null || value === undefined ? null : String(value)
const listOrNull = (value: unknown): string[] | null => Array.isArray(value) ? value.map(String) : null

export class MongoInstanceDump {
  constructor (private readonly c: DumpCollections) {}

  async * exportRecords (): AsyncIterable<InstanceRecord> {
    const c = this.c
    for await (const u of c.users.find({}, { sort: { _id: 1 } })) {
      yield { type: 'user', id: str(u._id), username: str(u.username), passwordHash: str(u.passwordHash), createdAt: str(u.createdAt) }
    }
    for await (const k of c.apiKeys.find({}, { sort: { _id: 1 } })) {
      yield {
        type: 'apiKey',
        id: str(k._id),
        userId: str(k.userId),
        name: str(k.name),
        prefix: str(k.prefix),
        keyHash: str(k.keyHash),
        permission: k.permission as Permission,
        projectIds: listOrNull(k.projectIds),
        paths: listOrNull(k.paths),
        ops: listOrNull(k.ops) as ApiKeyRecord['ops'],
        expiresAt: strOrNull(k.expiresAt),
        createdAt: str(k.createdAt)
      }
    }
    const withoutContent = { content: 0, [SCHEMA_FIELD]: 0 }
    for await (const p of c.projects.find({}, { sort: { _id: 1 }, projection: withoutContent })) {
      yield * this.exportProject(p)
    }
  }

  private async * exportProject (p: Document): AsyncIterable<InstanceRecord> {
    const c = this.c
    const projectId = str(p._id)
    yield {
      type: 'project',
      id: projectId,
      ownerId: str(p.ownerId),
      ownerName: str(p.ownerName),
      slug: str(p.slug),
      name: str(p.name),
      createdAt: str(p.createdAt),
      version: Number(p.version),
      historyFloor: Number(p.historyFloor ?? 0)
    }
    const stored = await c.projects.findOne({ _id: projectId }, { projection: { version: 1, content: 1, [SCHEMA_FIELD]: 1 } })
    if (!stored) throw new Error(`project ${projectId} vanished during the export`)
    const schema = stored[SCHEMA_FIELD] as { revision: string, json: string, setBy: string, setAt: string } | undefined
    if (schema) yield { type: 'schema', projectId, revision: schema.revision, schema: JSON.parse(schema.json), setBy: schema.setBy, setAt: schema.setAt }
    yield { type: 'content', projectId, version: Number(stored.version), content: stored.content as JsonObject }
    for await (const m of c.members.find({ projectId }, { sort: { userId: 1 } })) {
      yield { type: 'member', projectId, userId: str(m.userId), role: m.role as 'viewer' | 'editor' }
    }
    for await (const cp of c.checkpoints.find({ projectId }, { sort: { version: 1 } })) {
      yield { type: 'checkpoint', projectId, version: Number(cp.version), content: (cp.content ?? null) as JsonObject | null }
    }
    // A small batch: entries can be large (an update carries the whole content).
    for await (const change of c.changes.find({ projectId }, { sort: { version: 1 }, batchSize: 64 })) {
      yield { type: 'change', projectId, entry: orderedEntry(change) }
    }
    for await (const w of c.webhooks.find({ projectId }, { sort: { _id: 1 }, projection: { deliveries: 0 } })) {
      yield {
        type: 'webhook',
        id: str(w._id),
        projectId,
        url: str(w.url),
        paths: listOrNull(w.paths),
        ops: listOrNull(w.ops),
        description: strOrNull(w.description),
        secretCiphertext: str(w.secretCiphertext),
        createdAt: str(w.createdAt),
        cursor: Number(w.cursor),
        failures: Number(w.failures ?? 0),
        failingSince: strOrNull(w.failingSince),
        nextAttemptAt: strOrNull(w.nextAttemptAt),
        disabledAt: strOrNull(w.disabledAt),
        disabledReason: strOrNull(w.disabledReason)
      }
    }
    const rules = await c.projectRules.findOne({ _id: projectId })
    if (rules) yield { type: 'rules', projectId, revision: str(rules.revision), document: JSON.parse(str(rules.json)) as JsonObject, setBy: str(rules.setBy), setAt: str(rules.setAt) }
    const auth = await c.projectAppAuth.findOne({ _id: projectId })
    if (auth) {
      yield {
        type: 'appAuth',
        projectId,
        revision: str(auth.revision),
        issuer: str(auth.issuer),
        audience: strOrNull(auth.audience),
        jwks: typeof auth.jwksJson === 'string' ? JSON.parse(auth.jwksJson) as JsonObject : null,
        jwksUrl: strOrNull(auth.jwksUrl),
        secretCiphertext: strOrNull(auth.secretCiphertext),
        setBy: str(auth.setBy),
        setAt: str(auth.setAt)
      }
    }
  }

  async importRecords (records: AsyncIterable<InstanceRecord>): Promise<ImportCounts> {
    const c = this.c
    if (await c.users.findOne({}, { projection: { _id: 1 } }) !== null || await c.projects.findOne({}, { projection: { _id: 1 } }) !== null) {
      throw new ImportRefusedError()
    }
    const userIds: string[] = []
    const projectIds: string[] = []
    try {
      return await this.insertAll(records, userIds, projectIds)
    } catch (error) {
      await this.deleteImported(userIds, projectIds)
      throw error
    }
  }

  private async insertAll (records: AsyncIterable<InstanceRecord>, userIds: string[], projectIds: string[]): Promise<ImportCounts> {
    const c = this.c
    const order = new ImportOrder()
    const batches = {
      users: new Batch(c.users),
      apiKeys: new Batch(c.apiKeys),
      members: new Batch(c.members),
      checkpoints: new Batch(c.checkpoints),
      changes: new Batch(c.changes),
      webhooks: new Batch(c.webhooks),
      projectRules: new Batch(c.projectRules),
      projectAppAuth: new Batch(c.projectAppAuth)
    }
    const flushAll = async (): Promise<void> => { for (const batch of Object.values(batches)) await batch.flush() }
    // The project being imported: its document waits for its schema and content; its tail
    // (the entries after its latest checkpoint, history.ts) is counted as they come.
    let pending: IdDoc | null = null
    let tail = { count: 0, bytes: 0, after: 0 }
    const finishProject = async (): Promise<void> => {
      if (pending === null) return
      await flushAll()
      await c.projects.updateOne({ _id: pending._id }, { $set: { tailCount: tail.count, tailBytes: tail.bytes } })
      pending = null
    }
    const insertProject = async (doc: IdDoc, line: number): Promise<void> => {
      projectIds.push(String(doc._id))
      try {
        await c.projects.insertOne(doc)
      } catch (error) {
        throw new InstanceLineError(line, `refused by the store: ${(error as Error).message}`)
      }
    }

    for await (const record of records) {
      order.admit(record)
      const line = order.line
      switch (record.type) {
        case 'user':
          userIds.push(record.id)
          // No quota counters: the first create after the import counts (quota-counters.ts).
          await batches.users.add({ _id: record.id, username: record.username, passwordHash: record.passwordHash, createdAt: record.createdAt }, line, 256)
          break
        case 'apiKey': {
          const { type: _type, id, ...key } = record
          await batches.apiKeys.add({ _id: id, ...key }, line, 512)
          break
        }
        case 'project': {
          await finishProject()
          await flushAll()
          pending = {
            _id: record.id, ownerId: record.ownerId, ownerName: record.ownerName, slug: record.slug, name: record.name,
            createdAt: record.createdAt, version: record.version, historyFloor: record.historyFloor
          }
          tail = { count: 0, bytes: 0, after: 0 }
          break
        }
        case 'schema':
          if (pending) pending[SCHEMA_FIELD] = { revision: record.revision, json: JSON.stringify(record.schema), setBy: record.setBy, setAt: record.setAt }
          break
        case 'content':
          if (pending) await insertProject({ ...pending, content: record.content, contentBytes: jsonBytes(record.content), tailCount: 0, tailBytes: 0 }, line)
          break
        case 'member':
          await batches.members.add({ _id: `${record.projectId}/${record.userId}`, projectId: record.projectId, userId: record.userId, role: record.role }, line, 128)
          break
        case 'checkpoint': {
          const bytes = record.content === null ? 64 : jsonBytes(record.content)
          await batches.checkpoints.add({ projectId: record.projectId, version: record.version, content: record.content }, line, bytes)
          // Checkpoints come before the entries: the tail is the entries after the latest.
          tail = { count: 0, bytes: 0, after: record.version }
          break
        }
        case 'change': {
          const bytes = jsonBytes(record.entry)
          await batches.changes.add({ projectId: record.projectId, ...record.entry, [TOUCHED_PATHS_FIELD]: indexPathsOf(record.entry) }, line, bytes)
          if (record.entry.version > tail.after) tail = { ...tail, count: tail.count + 1, bytes: tail.bytes + bytes }
          break
        }
        case 'webhook': {
          const { type: _type, id, ...webhook } = record
          await batches.webhooks.add({ _id: id, ...webhook, leaseOwner: null, leaseUntil: null, deliveries: [] }, line, 1024)
          break
        }
        case 'rules': {
          // As app-rules.ts stores it: the document as JSON text (its keys start with "." and "$").
          const json = JSON.stringify(record.document)
          await batches.projectRules.add({ _id: record.projectId, revision: record.revision, json, setBy: record.setBy, setAt: record.setAt }, line, json.length)
          break
        }
        case 'appAuth': {
          const { type: _type, projectId, jwks, ...auth } = record
          await batches.projectAppAuth.add({ _id: projectId, ...auth, jwksJson: jwks === null ? null : JSON.stringify(jwks) }, line, 1024)
        }
      }
    }
    order.finish()
    await finishProject()
    await flushAll()
    return order.counts
  }

  /** Undoes a failed import: everything of the users and projects it inserted. */
  private async deleteImported (userIds: string[], projectIds: string[]): Promise<void> {
    const c = this.c
    for (let i = 0; i < projectIds.length; i += DELETE_CHUNK) {
      const ids = projectIds.slice(i, i + DELETE_CHUNK)
      for (const collection of [c.members, c.checkpoints, c.changes, c.webhooks]) await collection.deleteMany({ projectId: { $in: ids } })
      for (const collection of [c.projectRules, c.projectAppAuth]) await collection.deleteMany({ _id: { $in: ids } })
      await c.projects.deleteMany({ _id: { $in: ids } })
    }
    for (let i = 0; i < userIds.length; i += DELETE_CHUNK) {
      const ids = userIds.slice(i, i + DELETE_CHUNK)
      await c.apiKeys.deleteMany({ userId: { $in: ids } })
      await c.users.deleteMany({ _id: { $in: ids } })
    }
  }
}
