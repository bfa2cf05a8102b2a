// The MongoDB store's whole-instance export and import (server/store/mongodb/instance-dump.ts)
// on in-memory collections whose filters, sorts and projections are run by mingo (an
// independent implementation of MongoDB's query language), every document through a BSON
// round trip as the driver would send it, with the unique indexes MongoStore.init() creates.
// Evidence that the code reads and writes the documents MongoStore keeps and undoes a failed
// import; NOT evidence against a real replica set: with MONGODB_URI set,
// test/store/instance-dump.test.ts runs the same round trips on MongoDB itself.
import { BSON, type Document } from 'mongodb'
import { Query } from 'mingo'
import { updateOne } from 'mingo/updater'
import { afterEach, describe, expect, it } from 'vitest'
import { dumpCollections, MongoInstanceDump } from '../../server/store/mongodb/instance-dump.js'
import { headerLine, InstanceLineError, recordsOfLines } from '../../server/store/instance-records.js'
import type { Store } from '../../server/store/types.js'
import { AS_TESTER, storeFactories, type StoreUnderTest } from '../support/stores.js'

const overTheWire = <T extends Document>(doc: T): T => BSON.deserialize(BSON.serialize(doc)) as T

/** The unique indexes of MongoStore.init(), by collection. */
const UNIQUE: Record<string, string[][]> = {
  users: [['username']],
  apiKeys: [['keyHash']],
  projects: [['ownerId', 'slug']],
  members: [['projectId', 'userId']],
  changes: [['projectId', 'version']],
  checkpoints: [['projectId', 'version']]
}

class MemoryCollection {
  readonly docs: Document[] = []
  private serial = 0
  constructor (readonly name: string) {}

  private ensureUnique (doc: Document): void {
    for (const fields of [['_id'], ...(UNIQUE[this.name] ?? [])]) {
      const key = (d: Document) => JSON.stringify(fields.map(f => d[f]))
      if (this.docs.some(d => key(d) === key(doc))) throw Object.assign(new Error(`E11000 duplicate key error collection: ${this.name} ${fields.join(',')}`), { code: 11000 })
    }
  }

  private insert (doc: Document): void {
    const stored = overTheWire({ _id: `oid-${++this.serial}`, ...doc })
    this.ensureUnique(stored)
    this.docs.push(stored)
  }

  find (filter: Document = {}, options: { sort?: Document, projection?: Document } = {}): AsyncIterable<Document> {
    let cursor = new Query(filter).find(this.docs, options.projection)
    if (options.sort) cursor = cursor.sort(options.sort)
    const found = cursor.all() as Document[]
    return (async function * () { for (const doc of found) yield overTheWire(doc) })()
  }

  async findOne (filter: Document, options: { projection?: Document } = {}): Promise<Document | null> {
    const found = new Query(filter).find(this.docs, options.projection).all() as Document[]
    return found[0] ? overTheWire(found[0]) : null
  }

  async insertOne (doc: Document): Promise<void> { this.insert(doc) }

  async insertMany (docs: Document[]): Promise<void> {
    docs.forEach((doc, index) => {
      try {
        this.insert(doc)
      } catch (error) {
        throw Object.assign(error as Error, { writeErrors: [{ index }] })
      }
    })
  }

  async updateOne (filter: Document, update: Document): Promise<void> {
    updateOne(this.docs, filter, update)
  }

  async deleteMany (filter: Document): Promise<void> {
    const query = new Query(filter)
    for (let i = this.docs.length - 1; i >= 0; i--) if (query.test(this.docs[i] as Document)) this.docs.splice(i, 1)
  }
}

function memoryDb () {
  const collections = new Map<string, MemoryCollection>()
  const db = {
    collection (name: string): MemoryCollection {
      const found = collections.get(name)
      if (found) return found
      const made = new MemoryCollection(name)
      collections.set(name, made)
      return made
    }
  }
  const total = () => [...collections.values()].reduce((sum, c) => sum + c.docs.length, 0)
  return { dump: new MongoInstanceDump(dumpCollections(db as never)), db, total }
}

const opened: StoreUnderTest[] = []
afterEach(async () => { for (const s of opened.splice(0)) await s.cleanup() })

async function * linesOf (lines: string[]): AsyncIterable<string> { yield * lines }

/** An export from a real embedded store with a varied history, a schema, a member, keys and a webhook. */
async function sqliteExport (): Promise<string[]> {
  const sqlite = storeFactories.find(f => f.kind === 'sqlite')
  if (!sqlite) throw new Error('no sqlite factory')
  const s = await sqlite.create({ historyLimit: 4 })
  opened.push(s)
  const store: Store = s.store
  const at = '2026-01-02T03:04:05.000Z'
  await store.createUser({ id: 'usr_a', username: 'ann', passwordHash: 'h-a', createdAt: at })
  await store.createUser({ id: 'usr_b', username: 'ben', passwordHash: 'h-b', createdAt: at })
  await store.createApiKey({ id: 'key_a', userId: 'usr_a', name: 'k', prefix: 'cd_x', keyHash: 'kh-a', permission: 'write', projectIds: null, paths: ['n'], ops: ['increment'], expiresAt: null, createdAt: at })
  const project = await store.createProject({ id: 'prj_a', ownerId: 'usr_a', ownerName: 'ann', slug: 'site', name: 'Site', createdAt: at })
  await store.setMember(project.id, 'usr_b', 'viewer')
  await store.putSchema(project.id, { revision: 'r1', schema: { type: 'object' }, setBy: '@ann', setAt: at })
  const ops = [
    { op: 'set', path: ['n'], value: 1 }, { op: 'increment', path: ['n'], value: 1.5 }, { op: 'set', path: ['v'], value: null },
    { op: 'update', value: { n: 0, deep: { list: [1, { x: 'ü' }] } } }, { op: 'push', path: ['deep', 'list'], value: 3 },
    { op: 'insert', path: ['deep', 'list'], index: 0, value: 'a' }, { op: 'delete', path: ['v'] }
  ]
  for (const op of ops) await store.applyOperation(project, op as never, AS_TESTER)
  await store.applyOperation(project, { op: 'revert', version: 6 }, AS_TESTER)
  await store.webhooks.create({
    id: 'whk_a', projectId: project.id, url: 'https://example.com/h', paths: null, ops: null, description: null, secretCiphertext: 'v1:x',
    createdAt: at, cursor: 2, failures: 0, failingSince: null, nextAttemptAt: null, disabledAt: null, disabledReason: null, leaseOwner: 'node-1', leaseUntil: at
  })
  await store.appRules.putRules(project.id, { revision: 'rules-1', document: { rules: { $uid: { '.read': 'auth.sub == $uid' } } }, setBy: '@ann', setAt: at })
  await store.appRules.putAppAuth(project.id, { revision: 'auth-1', issuer: 'https://i.example', audience: null, jwks: null, jwksUrl: null, secretCiphertext: 'v1:sealed', setBy: '@ann', setAt: at })
  await store.createProject({ id: 'prj_b', ownerId: 'usr_b', ownerName: 'ben', slug: 'blank', name: 'Blank', createdAt: at })
  const lines = [headerLine()]
  for await (const record of store.exportRecords()) lines.push(JSON.stringify(record))
  return lines
}

async function exportOf (dump: MongoInstanceDump): Promise<string[]> {
  const lines = [headerLine()]
  for await (const record of dump.exportRecords()) lines.push(JSON.stringify(record))
  return lines
}

describe('MongoDB whole-instance dump (on mingo collections)', () => {
  it('imports an embedded store\'s export into the documents MongoStore keeps, and exports the same lines back', async () => {
    const lines = await sqliteExport()
    const { dump, db } = memoryDb()
    await dump.importRecords(recordsOfLines(linesOf(lines)))
    expect(await exportOf(dump)).toEqual(lines)

    const project = await db.collection('projects').findOne({ _id: 'prj_a' })
    // The content in the project document, the schema as JSON text, the log's bookkeeping.
    expect(project).toMatchObject({ ownerName: 'ann', version: 8, content: { n: 0, deep: { list: ['a', 1, { x: 'ü' }, 3] } }, schema: { revision: 'r1', json: '{"type":"object"}' } })
    const checkpoints = db.collection('checkpoints').docs.filter(d => d.projectId === 'prj_a').map(d => d.version as number)
    const changes = db.collection('changes').docs.filter(d => d.projectId === 'prj_a').map(d => d.version as number)
    expect(project?.tailCount).toBe(changes.filter(v => v > Math.max(...checkpoints)).length)
    expect(project?.historyFloor).toBe(JSON.parse(lines.find(l => l.includes('"id":"prj_a"')) as string).historyFloor)
    expect(await db.collection('members').findOne({ _id: 'prj_a/usr_b' })).toMatchObject({ projectId: 'prj_a', userId: 'usr_b', role: 'viewer' })
    // No lease travels; the deliveries start empty.
    expect(await db.collection('webhooks').findOne({ _id: 'whk_a' })).toMatchObject({ cursor: 2, leaseOwner: null, leaseUntil: null, deliveries: [] })
    // Rules as app-rules.ts keeps them: the document as JSON text (its keys start with "." and "$"), by project id.
    expect(await db.collection('projectRules').findOne({ _id: 'prj_a' })).toEqual({ _id: 'prj_a', revision: 'rules-1', json: '{"rules":{"$uid":{".read":"auth.sub == $uid"}}}', setBy: '@ann', setAt: '2026-01-02T03:04:05.000Z' })
    expect(await db.collection('projectAppAuth').findOne({ _id: 'prj_a' })).toMatchObject({ issuer: 'https://i.example', jwksJson: null, secretCiphertext: 'v1:sealed' })
    // No quota counters: the first create counts (quota-counters.ts).
    expect(await db.collection('users').findOne({ _id: 'usr_a' })).toEqual({ _id: 'usr_a', username: 'ann', passwordHash: 'h-a', createdAt: '2026-01-02T03:04:05.000Z' })
    // Entries as MongoStore writes them (history.ts's changeDocOf keeps `at` before `path`); exported in §9's order all the same.
    db.collection('changes').docs.reverse().forEach(doc => { const { at, actor, ...rest } = doc; for (const k of Object.keys(doc)) delete doc[k]; Object.assign(doc, { at, actor }, rest) })
    expect(await exportOf(dump)).toEqual(lines)
  })

  it('refuses a database holding a user, and undoes everything of a failed import', async () => {
    const lines = await sqliteExport()
    const held = memoryDb()
    await held.db.collection('users').insertOne({ _id: 'usr_z', username: 'zed' })
    await expect(held.dump.importRecords(recordsOfLines(linesOf(lines)))).rejects.toThrow(/not empty/)
    expect(held.total()).toBe(1)

    const lastChange = lines.map(l => l.includes('"type":"change"')).lastIndexOf(true) + 1
    const cases: Array<[string[], RegExp]> = [
      [lines.map((l, i) => i + 1 === lastChange ? '{"type":"change"' : l), new RegExp(`^line ${lastChange}: not JSON`)],
      // ben's key takes ann's key hash: refused by the unique index, in a batch, named by its line.
      [[...lines.slice(0, 4), lines[3]?.replace('"id":"key_a"', '"id":"key_b"') as string, ...lines.slice(4)], /^line 5: refused by the store: E11000/],
      [[...lines, lines[lines.length - 1] as string], new RegExp(`^line ${lines.length + 1}: a second content of the project`)]
    ]
    for (const [input, message] of cases) {
      const { dump, total } = memoryDb()
      const failure = await dump.importRecords(recordsOfLines(linesOf(input))).then(() => null, (e: unknown) => e)
      expect(failure).toBeInstanceOf(InstanceLineError)
      expect((failure as Error).message).toMatch(message)
      expect(total(), String(message)).toBe(0)
    }
  })
})
