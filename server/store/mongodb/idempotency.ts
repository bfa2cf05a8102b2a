// Idempotency-Key records on MongoDB (docs/design.md §10): one document per project, caller
// and key in `idempotencyKeys`, its _id made of the three, so every node shares them and a
// claim is a single insert that only one request can win (a duplicate key error tells the
// others). An expired record is taken over with a conditional replace; MongoDB's TTL monitor
// deletes expired records (index on expiresAt), deleteExpired does it on demand.
import type { Collection } from 'mongodb'
import type { IdempotencyClaim, IdempotencyId, IdempotencyState, StoredResponse } from '../types.js'
import { isDuplicateKey } from './driver-errors.js'

export interface IdempotencyDoc {
  _id: string
  projectId: string
  fingerprint: string
  /** Absent while the first request runs. */
  response?: StoredResponse
  expiresAt: Date
}

export function idempotencyDocId (id: IdempotencyId): string {
  // JSON keeps the three parts apart whatever characters the key holds.
  return JSON.stringify([id.projectId, id.caller, id.key])
}

export class MongoIdempotency {
  constructor (private readonly records: Collection<IdempotencyDoc>) {}

  indexes (): Promise<unknown> {
    return Promise.all([
      this.records.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
      this.records.createIndex({ projectId: 1 })
    ])
  }

  async claim (claim: IdempotencyClaim): Promise<IdempotencyState> {
    const doc: IdempotencyDoc = { _id: idempotencyDocId(claim), projectId: claim.projectId, fingerprint: claim.fingerprint, expiresAt: new Date(claim.expiresAt) }
    const now = new Date(claim.now)
    // A lost race to insert, then a record that expires or is released meanwhile: try again.
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.records.insertOne(doc)
        return { state: 'claimed' }
      } catch (e) {
        if (!isDuplicateKey(e)) throw e
      }
      const existing = await this.records.findOne({ _id: doc._id })
      if (!existing) continue
      if (existing.expiresAt > now) {
        return existing.response
          ? { state: 'done', fingerprint: existing.fingerprint, response: existing.response }
          : { state: 'running', fingerprint: existing.fingerprint }
      }
      const replaced = await this.records.replaceOne({ _id: doc._id, expiresAt: existing.expiresAt }, doc)
      if (replaced.modifiedCount === 1) return { state: 'claimed' }
    }
    throw new Error('idempotency: could not claim the key after 5 attempts')
  }

  async finish (id: IdempotencyId, response: StoredResponse | null): Promise<void> {
    const filter = { _id: idempotencyDocId(id), response: { $exists: false } }
    if (response) await this.records.updateOne(filter, { $set: { response } })
    else await this.records.deleteOne(filter)
  }

  async deleteExpired (now: string): Promise<number> {
    return (await this.records.deleteMany({ expiresAt: { $lte: new Date(now) } })).deletedCount
  }

  deleteProject (projectId: string): Promise<unknown> {
    return this.records.deleteMany({ projectId })
  }
}
