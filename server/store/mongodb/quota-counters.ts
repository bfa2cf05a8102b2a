// Quotas on MongoDB (docs/design.md §13): a counter on the user's document, taken with ONE
// conditional update ({count < max} → $inc 1) before the insert and given back after a
// delete or a failed insert. MongoDB applies each update atomically, so of two concurrent
// creates at the limit only one matches; nodes need no transaction and no replica set.
//
// Users created before quotas have no counter: the first create sets it from a count of the
// collection, conditionally ($exists: false), so two nodes doing it at once agree. A node
// that dies between taking a slot and inserting leaves the counter one too high (the user
// can create one fewer) — never one too low, which would let the quota be passed.
import type { Collection } from 'mongodb'
import { ContentdError } from '../../../shared/errors.js'
import { quotaExceeded } from '../quota-exceeded.js'

export type QuotaField = 'keyCount' | 'projectCount'

export interface CountedUserDoc {
  _id: string
  keyCount?: number
  projectCount?: number
}

const WHAT = { keyCount: 'API key', projectCount: 'project' } as const

export class QuotaCounters {
  constructor (private readonly users: Collection<CountedUserDoc>) {}

  /** Takes one slot of `field`, or throws QUOTA_EXCEEDED when `max` are taken. */
  async take (userId: string, field: QuotaField, max: number, countExisting: () => Promise<number>): Promise<void> {
    const user = await this.users.findOne({ _id: userId }, { projection: { [field]: 1 } })
    if (!user) throw new ContentdError('USER_NOT_FOUND')
    if (typeof user[field] !== 'number') {
      const existing = await countExisting()
      await this.users.updateOne({ _id: userId, [field]: { $exists: false } }, { $set: { [field]: existing } })
    }
    const taken = await this.users.updateOne({ _id: userId, [field]: { $lt: max } }, { $inc: { [field]: 1 } })
    if (taken.matchedCount === 0) throw quotaExceeded(max, WHAT[field])
  }

  /** Gives a slot back (after a delete, or an insert that failed). */
  async give (userId: string, field: QuotaField): Promise<void> {
    await this.users.updateOne({ _id: userId, [field]: { $gt: 0 } }, { $inc: { [field]: -1 } })
  }
}
