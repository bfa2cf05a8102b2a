// FAULT INJECTION ONLY: a scripted MongoDB wire-protocol stub on loopback, so the real
// MongoStore and the real driver (connection, sessions, transactions, retries, error labels)
// can be driven without a MongoDB server, and made to fail the way a replica set fails. It
// speaks just enough of the protocol (OP_QUERY for the first hello, OP_MSG after) and keeps
// the `projects` and `changes` collections in memory, applying queries and updates with mingo
// at commit. It is not MongoDB, and passing against it is no evidence that MongoDB works.
import { createServer, type Server, type Socket } from 'node:net'
import { BSON, Long, ObjectId, type Document } from 'mongodb'
import { Query } from 'mingo'
import { updateOne } from 'mingo/updater'

const OP_REPLY = 1
const OP_QUERY = 2004
const OP_MSG = 2013

/** A scripted answer replacing the next reply to a command (an error document, usually). */
export type Scripted = Document

export class MongoWireStub {
  readonly projects: Document[] = []
  readonly changes: Document[] = []
  /** Every command received, by name, with its body. */
  readonly commands: Array<{ name: string, body: Document }> = []
  /** Transactions started and not yet committed or aborted; the most ever open at once. */
  private readonly open = new Set<string>()
  maxOpenTransactions = 0
  private readonly scripts = new Map<string, Scripted[]>()
  private readonly pending = new Map<string, Array<() => void>>()
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  port = 0

  /** The next `count` replies to `command` are `reply` instead. */
  script (command: string, reply: Scripted, count = 1): void {
    const queue = this.scripts.get(command) ?? []
    for (let i = 0; i < count; i++) queue.push(reply)
    this.scripts.set(command, queue)
  }

  async start (): Promise<string> {
    this.server = createServer(socket => this.serve(socket))
    await new Promise<void>(resolve => this.server?.listen(0, '127.0.0.1', resolve))
    const address = this.server.address()
    this.port = typeof address === 'object' && address ? address.port : 0
    return `mongodb://127.0.0.1:${this.port}/stubdb?directConnection=true&serverMonitoringMode=poll`
  }

  async stop (): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>(resolve => this.server?.close(() => resolve()))
  }

  private serve (socket: Socket): void {
    this.sockets.add(socket)
    socket.on('close', () => this.sockets.delete(socket))
    socket.on('error', () => undefined)
    let buffered = Buffer.alloc(0)
    socket.on('data', chunk => {
      buffered = Buffer.concat([buffered, chunk])
      while (buffered.length >= 4 && buffered.length >= buffered.readInt32LE(0)) {
        const length = buffered.readInt32LE(0)
        const message = buffered.subarray(0, length)
        buffered = buffered.subarray(length)
        let reply: Buffer | null
        try {
          reply = this.reply(message)
        } catch (error) {
          // A stub bug must show in the test, not hang it.
          console.error('mongo wire stub:', error)
          socket.destroy()
          return
        }
        if (reply) socket.write(reply)
      }
    })
  }

  private reply (message: Buffer): Buffer | null {
    const requestId = message.readInt32LE(4)
    const opCode = message.readInt32LE(12)
    if (opCode === OP_QUERY) {
      let at = 20
      while (message[at] !== 0) at++
      at += 1 + 8 // the collection name's NUL, numberToSkip, numberToReturn
      const body = BSON.deserialize(message.subarray(at, at + message.readInt32LE(at)))
      const doc = BSON.serialize(this.answer(body))
      const header = Buffer.alloc(36)
      header.writeInt32LE(36 + doc.length, 0)
      header.writeInt32LE(0, 4)
      header.writeInt32LE(requestId, 8)
      header.writeInt32LE(OP_REPLY, 12)
      header.writeInt32LE(0, 16)
      header.writeBigInt64LE(0n, 20)
      header.writeInt32LE(0, 28)
      header.writeInt32LE(1, 32)
      return Buffer.concat([header, doc])
    }
    if (opCode !== OP_MSG) return null
    const flags = message.readUInt32LE(16)
    const end = message.length - ((flags & 1) === 1 ? 4 : 0)
    let at = 20
    let body: Document = {}
    const sequences: Record<string, Document[]> = {}
    while (at < end) {
      const kind = message[at]
      at += 1
      if (kind === 0) {
        const size = message.readInt32LE(at)
        body = BSON.deserialize(message.subarray(at, at + size))
        at += size
      } else {
        const size = message.readInt32LE(at)
        let nameEnd = at + 4
        while (message[nameEnd] !== 0) nameEnd++
        const name = message.subarray(at + 4, nameEnd).toString('utf8')
        const docs: Document[] = []
        let docAt = nameEnd + 1
        while (docAt < at + size) {
          const docSize = message.readInt32LE(docAt)
          docs.push(BSON.deserialize(message.subarray(docAt, docAt + docSize)))
          docAt += docSize
        }
        sequences[name] = docs
        at += size
      }
    }
    const moreToCome = (flags & 2) === 2
    const answer = this.answer({ ...body, ...sequences })
    if (moreToCome) return null
    const doc = BSON.serialize(answer)
    const header = Buffer.alloc(21)
    header.writeInt32LE(21 + doc.length, 0)
    header.writeInt32LE(0, 4)
    header.writeInt32LE(requestId, 8)
    header.writeInt32LE(OP_MSG, 12)
    header.writeUInt32LE(0, 16)
    header.writeUInt8(0, 20)
    return Buffer.concat([header, doc])
  }

  private answer (body: Document): Document {
    const name = Object.keys(body)[0] as string
    this.commands.push({ name, body })
    const txn = body.lsid !== undefined && body.txnNumber !== undefined ? `${(body.lsid as { id: { toString (f: string): string } }).id.toString('hex')}/${String(body.txnNumber)}` : null
    if (txn && body.startTransaction === true) {
      this.open.add(txn)
      this.maxOpenTransactions = Math.max(this.maxOpenTransactions, this.open.size)
    }
    const scripted = this.scripts.get(name)?.shift()
    if (scripted) {
      if (txn && (name === 'commitTransaction' || name === 'abortTransaction' || scripted.errorLabels?.includes?.('TransientTransactionError'))) this.finish(txn, false)
      return scripted
    }
    switch (name) {
      case 'hello':
      case 'ismaster':
      case 'isMaster':
        return this.hello()
      case 'find':
        return this.find(body)
      case 'findAndModify':
        return this.findAndModify(body, txn)
      case 'insert':
        return this.insert(body, txn)
      case 'commitTransaction':
        if (txn) this.finish(txn, true)
        return { ok: 1 }
      case 'abortTransaction':
        if (txn) this.finish(txn, false)
        return { ok: 1 }
      default:
        // createIndexes, ping, endSessions, update, delete: accepted, nothing kept.
        return { ok: 1, n: 0, nModified: 0 }
    }
  }

  private finish (txn: string, commit: boolean): void {
    this.open.delete(txn)
    const work = this.pending.get(txn) ?? []
    this.pending.delete(txn)
    if (commit) for (const apply of work) apply()
  }

  private later (txn: string | null, apply: () => void): void {
    if (!txn) { apply(); return }
    const work = this.pending.get(txn) ?? []
    work.push(apply)
    this.pending.set(txn, work)
  }

  private collection (name: unknown): Document[] {
    return name === 'projects' ? this.projects : name === 'changes' ? this.changes : []
  }

  private hello (): Document {
    const host = `127.0.0.1:${this.port}`
    return {
      helloOk: true, isWritablePrimary: true, ismaster: true, setName: 'rs0', setVersion: 1, hosts: [host], primary: host, me: host,
      electionId: new ObjectId('7fffffff0000000000000001'), maxBsonObjectSize: 16 * 1024 * 1024, maxMessageSizeBytes: 48_000_000,
      maxWriteBatchSize: 100_000, localTime: new Date(), logicalSessionTimeoutMinutes: 30, connectionId: 1, minWireVersion: 0,
      maxWireVersion: 21, readOnly: false, ok: 1
    }
  }

  private find (body: Document): Document {
    const docs = new Query(body.filter as Document ?? {}).find(this.collection(body.find)).all() as Document[]
    const batch = typeof body.limit === 'number' && body.limit > 0 ? docs.slice(0, body.limit) : docs
    return { cursor: { firstBatch: structuredClone(batch), id: Long.ZERO, ns: `stubdb.${String(body.find)}` }, ok: 1 }
  }

  private findAndModify (body: Document, txn: string | null): Document {
    const docs = this.collection(body.findAndModify)
    const target = docs.find(doc => new Query(body.query as Document).test(doc))
    if (!target) return { value: null, lastErrorObject: { n: 0, updatedExisting: false }, ok: 1 }
    const copy = [structuredClone(target)]
    updateOne(copy, {}, body.update as Document)
    const updated = copy[0] as Document
    this.later(txn, () => { docs[docs.indexOf(target)] = updated })
    return { value: { version: updated.version, checkpointDue: false }, lastErrorObject: { n: 1, updatedExisting: true }, ok: 1 }
  }

  private insert (body: Document, txn: string | null): Document {
    const documents = body.documents as Document[]
    this.later(txn, () => { this.collection(body.insert).push(...documents) })
    return { n: documents.length, ok: 1 }
  }
}
