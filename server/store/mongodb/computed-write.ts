// Batches and patches on MongoDB (docs/design.md §10, docs/mongodb.md): the store reads the
// project document, applies the batch or patch with the shared pure core (shared/compound.ts),
// and writes the result back as ONE update whose filter is a compare-and-set on the version it
// read. No translation of JSON Patch into update operators or aggregation expressions: the
// embedded store's semantics hold by construction, and a concurrent change makes the filter
// miss, after which the store reads and applies again. Pure, so it is unit-tested without a
// server (test/mongodb/translate.test.ts).
import type { JsonObject } from '../../../shared/json.js'
import { translateOperation, type MongoWrite } from './translate.js'

/** The write of `content`, computed from the document at `readVersion`, as a compare-and-set. */
export function computedWrite (projectId: string, content: JsonObject, readVersion: number, contentLimitBytes: number): MongoWrite {
  return translateOperation(projectId, { op: 'update', value: content }, { contentLimitBytes, expectVersion: readVersion })
}

/**
 * Runs the computed writes of one project one after another on this node. A compare-and-set
 * loses to every change that commits between its read and its write; without this, a burst
 * of batches on one node would mostly lose to each other. Across nodes they still race, and
 * the store retries (its MAX_WRITE_ATTEMPTS).
 */
export class SerialPerProject {
  private readonly tails = new Map<string, Promise<unknown>>()

  run<T> (projectId: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(projectId) ?? Promise.resolve()
    const result = previous.then(task, task)
    const tail = result.catch(() => undefined)
    this.tails.set(projectId, tail)
    void tail.then(() => { if (this.tails.get(projectId) === tail) this.tails.delete(projectId) })
    return result
  }
}
