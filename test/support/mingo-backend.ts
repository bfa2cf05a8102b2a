// The MongoDB store's write path (server/store/mongodb/write-path.ts) on an in-memory project
// collection whose queries and updates are executed by `mingo`, an independent implementation
// of MongoDB's query and update operators that nobody here wrote. Every filter and update goes
// through a BSON round trip first, as the driver would send it (Double → number, strings as
// UTF-8: a lone surrogate comes back as U+FFFD). Evidence that the translation means what the
// shared core does, as far as mingo implements MongoDB; NOT evidence that MongoDB itself runs it
// (docs/mongodb.md says what only a real replica set can show).
import { BSON, type Document } from 'mongodb'
import { updateOne } from 'mingo/updater'
import type { JsonObject } from '../../shared/json.js'
import type { CommittedWrite, ContentBackend, ContentCommit, StoredContent } from '../../server/store/mongodb/write-path.js'

/** As the driver sends a document and reads it back. */
export function overTheWire<T extends Document> (doc: T): T {
  return BSON.deserialize(BSON.serialize(doc)) as T
}

export class MingoBackend implements ContentBackend {
  private readonly docs = new Map<string, Document>()
  readonly entries: ContentCommit[] = []
  reads = 0
  /** Commits whose filter matched nothing (another writer won). */
  lost = 0
  /** Transactions running at once, per project, and the most ever seen. */
  private readonly running = new Map<string, number>()
  maxConcurrentPerProject = 0

  addProject (id: string, content: JsonObject = {}): void {
    this.docs.set(id, overTheWire({ _id: id, version: 0, content }))
  }

  /** The stored document, as a reader would get it. */
  document (id: string): Document | undefined {
    const doc = this.docs.get(id)
    return doc ? overTheWire(doc) : undefined
  }

  async read (projectId: string): Promise<StoredContent | null> {
    this.reads++
    await new Promise(resolve => setImmediate(resolve))
    const doc = this.docs.get(projectId)
    if (!doc) return null
    const { version, content, contentBytes, schema } = overTheWire(doc)
    return { version, content, contentBytes, schema }
  }

  async commit (write: ContentCommit): Promise<CommittedWrite | null> {
    const running = (this.running.get(write.projectId) ?? 0) + 1
    this.running.set(write.projectId, running)
    this.maxConcurrentPerProject = Math.max(this.maxConcurrentPerProject, running)
    try {
      // A transaction takes a while: other writers get their turn meanwhile.
      await new Promise(resolve => setImmediate(resolve))
      const { filter, update } = overTheWire({ filter: write.filter, update: write.update })
      const doc = this.docs.get(write.projectId)
      const collection = doc ? [doc] : []
      const result = updateOne(collection, filter, update)
      if (result.matchedCount === 0) { this.lost++; return null }
      this.docs.set(write.projectId, collection[0] as Document)
      this.entries.push(write)
      return { version: write.version, checkpointed: false }
    } finally {
      this.running.set(write.projectId, (this.running.get(write.projectId) ?? 1) - 1)
    }
  }
}
