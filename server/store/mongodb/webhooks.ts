// The MongoDB store's webhooks (docs/design.md §11): one document per webhook, holding its
// cursor, retry state, lease and last deliveries (an array capped with $slice), so each
// recorded attempt is ONE atomic update fenced by the lease (see ../webhook-types.ts).
//
// MAX_WEBHOOKS_PER_PROJECT (docs/design.md §13b) is kept as quota-counters.ts keeps the
// users' quotas: a counter per project in `webhookQuotas`, taken with ONE conditional update
// ({count < max} → $inc 1) before the insert and given back after a delete or a failed
// insert, so concurrent creates at the limit on any number of nodes cannot both pass. A
// project without a counter (webhooks made before the quota) gets one set from a count of
// its webhooks, by an upsert that only the first of two racing nodes wins. A node dying
// between taking and inserting leaves the counter one too high, never too low.
import type { Collection, Db } from 'mongodb'
import { DELIVERIES_KEPT } from '../../../shared/webhooks.js'
import { quotaExceeded } from '../quota-exceeded.js'
import type { PageRequest } from '../types.js'
import type { DeliveryRecord, WebhookPosition, WebhookProgress, WebhookRecord, WebhookStore } from '../webhook-types.js'
import { isDuplicateKey } from './driver-errors.js'

interface WebhookDoc extends Omit<WebhookRecord, 'id'> {
  _id: string
  /** Oldest first; the newest DELIVERIES_KEPT. */
  deliveries: DeliveryRecord[]
}

/** A project's count of webhooks, for the quota. */
interface WebhookQuotaDoc {
  _id: string
  count: number
}

/** Everything but the deliveries: what list, find and claim read. */
const WITHOUT_DELIVERIES = { deliveries: 0 } as const

export class MongoWebhooks implements WebhookStore {
  private readonly webhooks: Collection<WebhookDoc>
  private readonly quotas: Collection<WebhookQuotaDoc>

  constructor (db: Db, private readonly run: <T>(call: () => Promise<T>) => Promise<T>) {
    this.webhooks = db.collection('webhooks')
    this.quotas = db.collection('webhookQuotas')
  }

  /** Called by the store's init(). */
  async createIndexes (): Promise<void> {
    await this.webhooks.createIndex({ projectId: 1, createdAt: 1, _id: 1 })
    await this.webhooks.createIndex({ disabledAt: 1, nextAttemptAt: 1 })
  }

  async create (w: WebhookRecord, maxPerProject?: number): Promise<void> {
    const { id, ...rest } = w
    if (maxPerProject === undefined) {
      await this.run(() => this.webhooks.insertOne({ _id: id, ...rest, deliveries: [] }))
      return
    }
    await this.run(() => this.takeSlot(w.projectId, maxPerProject))
    try {
      await this.run(() => this.webhooks.insertOne({ _id: id, ...rest, deliveries: [] }))
    } catch (e) {
      await this.giveSlot(w.projectId).catch(() => undefined)
      throw e
    }
  }

  /** Takes one of the project's MAX_WEBHOOKS_PER_PROJECT slots, or throws QUOTA_EXCEEDED. */
  private async takeSlot (projectId: string, max: number): Promise<void> {
    const counter = await this.quotas.findOne({ _id: projectId })
    if (!counter) {
      const existing = await this.webhooks.countDocuments({ projectId })
      try {
        await this.quotas.updateOne({ _id: projectId }, { $setOnInsert: { count: existing } }, { upsert: true })
      } catch (e) {
        // Another node created the counter first: it counted the same webhooks.
        if (!isDuplicateKey(e)) throw e
      }
    }
    const taken = await this.quotas.updateOne({ _id: projectId, count: { $lt: max } }, { $inc: { count: 1 } })
    if (taken.matchedCount === 0) throw quotaExceeded(max, 'webhook')
  }

  private async giveSlot (projectId: string): Promise<void> {
    await this.run(() => this.quotas.updateOne({ _id: projectId, count: { $gt: 0 } }, { $inc: { count: -1 } }))
  }

  async find (id: string): Promise<WebhookRecord | null> {
    return toWebhook(await this.run(() => this.webhooks.findOne({ _id: id }, { projection: WITHOUT_DELIVERIES })))
  }

  async list (projectId: string, page: PageRequest<WebhookPosition>): Promise<WebhookRecord[]> {
    const after = page.after
    const filter = {
      projectId,
      ...(after ? { $or: [{ createdAt: { $gt: after.createdAt } }, { createdAt: after.createdAt, _id: { $gt: after.id } }] } : {})
    }
    const docs = await this.run(() => this.webhooks.find(filter, { projection: WITHOUT_DELIVERIES }).sort({ createdAt: 1, _id: 1 }).limit(page.limit).toArray())
    return docs.map(doc => toWebhook(doc) as WebhookRecord)
  }

  async delete (projectId: string, id: string): Promise<boolean> {
    const deleted = (await this.run(() => this.webhooks.deleteOne({ _id: id, projectId }))).deletedCount > 0
    if (deleted) await this.giveSlot(projectId)
    return deleted
  }

  /** Removes a deleted project's webhooks and their quota counter (the embedded store cascades). */
  async deleteOfProject (projectId: string): Promise<void> {
    await this.run(() => this.webhooks.deleteMany({ projectId }))
    await this.run(() => this.quotas.deleteOne({ _id: projectId }))
  }

  // distinct answers from the {projectId, createdAt, _id} index (a DISTINCT_SCAN).
  async projectIds (): Promise<string[]> {
    return await this.run(() => this.webhooks.distinct('projectId'))
  }

  // Only webhooks whose project has moved past the cursor (its version looked up alone, not
  // its content): an idle webhook costs nothing and cannot crowd out one with work.
  async listDue (now: string, limit: number): Promise<WebhookRecord[]> {
    const docs = await this.run(() => this.webhooks.aggregate<WebhookDoc>([
      {
        $match: {
          disabledAt: null,
          $and: [
            { $or: [{ nextAttemptAt: null }, { nextAttemptAt: { $lte: now } }] },
            { $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] }
          ]
        }
      },
      { $lookup: { from: 'projects', let: { projectId: '$projectId' }, pipeline: [{ $match: { $expr: { $eq: ['$_id', '$$projectId'] } } }, { $project: { _id: 0, version: 1 } }], as: 'project' } },
      { $match: { $expr: { $gt: [{ $arrayElemAt: ['$project.version', 0] }, '$cursor'] } } },
      { $sort: { nextAttemptAt: 1, _id: 1 } },
      { $limit: limit },
      { $project: { deliveries: 0, project: 0 } }
    ]).toArray())
    return docs.map(doc => toWebhook(doc) as WebhookRecord)
  }

  async claim (id: string, owner: string, now: string, until: string): Promise<WebhookRecord | null> {
    const doc = await this.run(() => this.webhooks.findOneAndUpdate(
      { _id: id, disabledAt: null, $or: [{ leaseOwner: null }, { leaseUntil: { $lte: now } }, { leaseOwner: owner }] },
      { $set: { leaseOwner: owner, leaseUntil: until } },
      { returnDocument: 'after', projection: WITHOUT_DELIVERIES }
    ))
    return toWebhook(doc)
  }

  async release (id: string, owner: string): Promise<void> {
    await this.run(() => this.webhooks.updateOne({ _id: id, leaseOwner: owner }, { $set: { leaseOwner: null, leaseUntil: null } }))
  }

  async record (id: string, owner: string, progress: WebhookProgress, deliveries: DeliveryRecord[], until: string): Promise<boolean> {
    const lease = progress.disabledAt === null ? { leaseOwner: owner, leaseUntil: until } : { leaseOwner: null, leaseUntil: null }
    const result = await this.run(() => this.webhooks.updateOne(
      { _id: id, leaseOwner: owner },
      { $set: { ...progress, ...lease }, $push: { deliveries: { $each: deliveries, $slice: -DELIVERIES_KEPT } } }
    ))
    return result.matchedCount > 0
  }

  async deliveries (id: string): Promise<DeliveryRecord[]> {
    const doc = await this.run(() => this.webhooks.findOne({ _id: id }, { projection: { deliveries: 1 } }))
    return (doc?.deliveries ?? []).slice().reverse()
  }
}

function toWebhook (doc: Partial<WebhookDoc> & { _id: string } | null): WebhookRecord | null {
  if (!doc) return null
  return {
    id: doc._id,
    projectId: doc.projectId as string,
    url: doc.url as string,
    paths: doc.paths ?? null,
    ops: doc.ops ?? null,
    description: doc.description ?? null,
    secretCiphertext: doc.secretCiphertext as string,
    createdAt: doc.createdAt as string,
    cursor: doc.cursor ?? 0,
    failures: doc.failures ?? 0,
    failingSince: doc.failingSince ?? null,
    nextAttemptAt: doc.nextAttemptAt ?? null,
    disabledAt: doc.disabledAt ?? null,
    disabledReason: doc.disabledReason ?? null,
    leaseOwner: doc.leaseOwner ?? null,
    leaseUntil: doc.leaseUntil ?? null
  }
}
