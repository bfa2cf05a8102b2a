// Idempotency-Key records on MongoDB (docs/design.md §10): one document per project, caller
// and key in `idempotencyKeys`, its _id made of the three, so every node shares them and a
// claim is a single insert that only one request can win (a duplicate key error tells the
// others). An expired record is taken over with a conditional replace; MongoDB's TTL monitor
// deletes expired records (index on expiresAt), deleteExpired does it on demand.
//
// Per-user bound (MAX_IDEMPOTENCY_KEYS_PER_USER, docs/design.md §13b): the same collection
// holds usage documents, one per user and usage bucket (../idempotency-usage.ts), _id
// `usage <user> <bucket end>`, with the bucket's end as expiresAt so the TTL monitor removes
// them once they stop counting. A new record is inserted, then counted ($inc, one update
// that answers the record's place in its bucket), then the user's other unfinished buckets
// are summed (one _id range of at most 25 documents); over the bound, the count and the
// record are taken back and the answer is `full`. Claims racing at the bound never both
// pass: each one's place already includes the others before it.
import type { Collection } from 'mongodb'
import { usageBucketEnd } from '../idempotency-usage.js'
import type { IdempotencyClaim, IdempotencyId, IdempotencyState, StoredResponse } from '../types.js'
import { isDuplicateKey } from './driver-errors.js'

export interface IdempotencyDoc {
  _id: string
  projectId: string
  fingerprint: string
  /** Absent while the first request runs. */
  response?: StoredResponse
  expiresAt: Date
  /** The user it counts against and its usage bucket's end (absent on records of before the bound). */
  userId?: string
  usageBucket?: number
}

interface UsageDoc {
  _id: string
  records: number
  expiresAt: Date
}

export function idempotencyDocId (id: IdempotencyId): string {
  // JSON keeps the three parts apart whatever characters the key holds.
  return JSON.stringify([id.projectId, id.caller, id.key])
}

// Record ids start with "[", usage ids with "usage ": the two never meet. Bucket ends are
// padded so that string order is time order within a user's range.
const usagePrefix = (userId: string) => `usage ${JSON.stringify(userId)} `
const usageId = (userId: string, bucketEnd: number) => usagePrefix(userId) + String(bucketEnd).padStart(16, '0')

export class MongoIdempotency {
  private readonly usage: Collection<UsageDoc>

  constructor (private readonly records: Collection<IdempotencyDoc>) {
    this.usage = records as unknown as Collection<UsageDoc>
  }

  indexes (): Promise<unknown> {
    return Promise.all([
      this.records.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
      this.records.createIndex({ projectId: 1 })
    ])
  }

  async claim (claim: IdempotencyClaim): Promise<IdempotencyState> {
    const bucket = usageBucketEnd(claim.now, claim.expiresAt)
    const doc: IdempotencyDoc = {
      _id: idempotencyDocId(claim), projectId: claim.projectId, fingerprint: claim.fingerprint, expiresAt: new Date(claim.expiresAt), userId: claim.userId, usageBucket: bucket
    }
    const now = new Date(claim.now)
    // A lost race to insert, then a record that expires or is released meanwhile: try again.
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.records.insertOne(doc)
        return await this.countIn(claim, bucket)
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
      if (replaced.modifiedCount === 1) {
        // The expired record it replaced stops counting now.
        if (existing.userId !== undefined && existing.usageBucket !== undefined && existing.usageBucket > now.getTime()) await this.uncount(existing.userId, existing.usageBucket)
        return await this.countIn(claim, bucket)
      }
    }
    throw new Error('idempotency: could not claim the key after 5 attempts')
  }

  /**
   * Counts the just-inserted record; over the bound, takes it back and answers `full`. The
   * $inc answers the record's place in its bucket, like a ticket: of claims racing into one
   * bucket exactly the first places that fit pass.
   */
  private async countIn (claim: IdempotencyClaim, bucket: number): Promise<IdempotencyState> {
    const place = await this.count(claim.userId, bucket)
    if (claim.maxPerUser === undefined) return { state: 'claimed' }
    const now = Date.parse(claim.now)
    const prefix = usagePrefix(claim.userId)
    const own = usageId(claim.userId, bucket)
    const others = await this.usage.find({ _id: { $gt: usageId(claim.userId, now), $lt: prefix + '~', $ne: own } }).toArray()
    if (others.reduce((sum, u) => sum + u.records, 0) + place <= claim.maxPerUser) return { state: 'claimed' }
    await this.records.deleteOne({ _id: idempotencyDocId(claim), response: { $exists: false } })
    await this.uncount(claim.userId, bucket)
    const ends = [...others.filter(u => u.records > 0).map(u => Number(u._id.slice(prefix.length))), bucket]
    return { state: 'full', retryAt: new Date(Math.min(...ends)).toISOString() }
  }

  /** Counts one record in the bucket; resolves with the bucket's count after it. */
  private async count (userId: string, bucket: number): Promise<number> {
    const update = () => this.usage.findOneAndUpdate(
      { _id: usageId(userId, bucket) }, { $inc: { records: 1 }, $setOnInsert: { expiresAt: new Date(bucket) } }, { upsert: true, returnDocument: 'after' }
    )
    let after: UsageDoc | null
    try {
      after = await update()
    } catch (e) {
      // Two first upserts of one bucket at once: the loser's retry finds the document.
      if (!isDuplicateKey(e)) throw e
      after = await update()
    }
    return after?.records ?? 1
  }

  private async uncount (userId: string, bucket: number): Promise<void> {
    await this.usage.updateOne({ _id: usageId(userId, bucket), records: { $gt: 0 } }, { $inc: { records: -1 } })
  }

  async finish (id: IdempotencyId, response: StoredResponse | null): Promise<void> {
    const filter = { _id: idempotencyDocId(id), response: { $exists: false } }
    if (response) {
      await this.records.updateOne(filter, { $set: { response } })
      return
    }
    const released = await this.records.findOneAndDelete(filter)
    if (released?.userId !== undefined && released.usageBucket !== undefined) await this.uncount(released.userId, released.usageBucket)
  }

  async deleteExpired (now: string): Promise<number> {
    const ended = new Date(now)
    // Usage documents whose bucket has ended go too (their expiresAt is the bucket's end).
    await this.usage.deleteMany({ _id: { $regex: /^usage / }, expiresAt: { $lte: ended } })
    return (await this.records.deleteMany({ _id: { $not: /^usage / }, expiresAt: { $lte: ended } })).deletedCount
  }

  deleteProject (projectId: string): Promise<unknown> {
    return this.records.deleteMany({ projectId })
  }
}
