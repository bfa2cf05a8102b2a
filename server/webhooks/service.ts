// Managing a project's webhooks (docs/design.md §11): create (the secret shown once), list
// (never a secret), delete, the last deliveries, and a test ping. Shared by the HTTP routes
// and the CLI; the caller has already checked that the caller owns the project.
import { randomBytes } from 'node:crypto'
import type { PingResultView } from '../../shared/api/webhooks.js'
import { ContentdError } from '../../shared/errors.js'
import type { CreatedWebhook, DeliveryView, PingPayload, WebhookRequest, WebhookView } from '../../shared/webhooks.js'
import { newId } from '../auth/tokens.js'
import { systemClock, type Clock } from '../clock.js'
import { projectRefOf } from '../store/change-entry.js'
import type { ProjectRecord, Store } from '../store/types.js'
import type { DeliveryRecord, WebhookRecord } from '../store/webhook-types.js'
import { createdAtIdPosition, readPage, type Page, type PageQuery } from '../services/pagination.js'
import type { WebhookMetrics } from './metrics.js'
import { SecretBox } from './secret-box.js'
import { sendWebhook, type SendResult } from './sender.js'
import { checkWebhookTarget, systemResolver, type Resolver } from './target-policy.js'

export interface WebhookServiceOptions {
  store: Store
  secrets: SecretBox
  allowPrivate: boolean
  /** MAX_WEBHOOKS_PER_PROJECT (docs/design.md §13b). */
  maxPerProject: number
  now?: Clock
  metrics?: WebhookMetrics
  resolve?: Resolver
  /** A webhook of the project was created (true) or deleted (false): hooked-projects.ts hears of it. */
  onChanged?: (projectId: string, created: boolean) => void
}

export function webhookView (w: WebhookRecord): WebhookView {
  return {
    id: w.id,
    url: w.url,
    paths: w.paths,
    ops: w.ops,
    description: w.description,
    createdAt: w.createdAt,
    cursor: w.cursor,
    enabled: w.disabledAt === null,
    disabledReason: w.disabledReason,
    failingSince: w.failingSince,
    nextAttemptAt: w.nextAttemptAt
  }
}

export function deliveryView (d: DeliveryRecord): DeliveryView {
  return { version: d.version, status: d.status, outcome: d.outcome, attempt: d.attempt, ...(d.error !== null ? { error: d.error } : {}), at: d.at, durationMs: d.durationMs }
}

export class WebhookService {
  private readonly now: Clock
  private readonly resolve: Resolver

  constructor (private readonly options: WebhookServiceOptions) {
    this.now = options.now ?? systemClock
    this.resolve = options.resolve ?? systemResolver
  }

  async create (project: ProjectRecord, request: WebhookRequest): Promise<CreatedWebhook> {
    await checkWebhookTarget(request.url, this.options.allowPrivate, this.resolve)
    const { store } = this.options
    // The webhook receives the changes after the version current now.
    const content = await store.readContent(project.id)
    if (!content) throw new ContentdError('PROJECT_NOT_FOUND')
    const id = newId('whk_')
    const secret = SecretBox.newSecret()
    const record: WebhookRecord = {
      id,
      projectId: project.id,
      url: request.url,
      paths: request.paths ?? null,
      ops: request.ops ?? null,
      description: request.description ?? null,
      secretCiphertext: this.options.secrets.seal(secret, id),
      createdAt: new Date(this.now()).toISOString(),
      cursor: content.version,
      failures: 0,
      failingSince: null,
      nextAttemptAt: null,
      disabledAt: null,
      disabledReason: null,
      leaseOwner: null,
      leaseUntil: null
    }
    await store.webhooks.create(record, this.options.maxPerProject)
    this.options.onChanged?.(project.id, true)
    return { id, url: record.url, paths: record.paths, ops: record.ops, secret, createdAt: record.createdAt }
  }

  /** One page of the project's webhooks, oldest first (paginated as GET /api/keys, docs/design.md §13b). */
  async list (project: ProjectRecord, query: PageQuery): Promise<Page<WebhookView>> {
    const page = await readPage(query, createdAtIdPosition, p => this.options.store.webhooks.list(project.id, p), w => ({ createdAt: w.createdAt, id: w.id }))
    return { items: page.items.map(webhookView), nextCursor: page.nextCursor }
  }

  async delete (project: ProjectRecord, id: string): Promise<void> {
    if (!(await this.options.store.webhooks.delete(project.id, id))) throw new ContentdError('WEBHOOK_NOT_FOUND')
    this.options.onChanged?.(project.id, false)
    this.options.metrics?.forget(id)
  }

  async deliveries (project: ProjectRecord, id: string): Promise<DeliveryView[]> {
    await this.find(project, id)
    return (await this.options.store.webhooks.deliveries(id)).map(deliveryView)
  }

  /** POSTs a signed `ping` now, outside the change order; the answer says how it went. */
  async ping (project: ProjectRecord, id: string): Promise<PingResultView> {
    const webhook = await this.find(project, id)
    const at = this.now()
    const payload: PingPayload = { type: 'ping', webhook: webhook.id, project: projectRefOf(project), at: new Date(at).toISOString() }
    const result: SendResult = await sendWebhook({
      url: webhook.url,
      secret: this.options.secrets.open(webhook.secretCiphertext, webhook.id),
      messageId: `msg_${webhook.id}_ping_${randomBytes(6).toString('base64url')}`,
      payload: JSON.stringify(payload),
      now: at,
      allowPrivate: this.options.allowPrivate,
      resolve: this.resolve
    })
    return { delivered: result.ok, status: result.status, ...(result.error !== null ? { error: result.error } : {}), durationMs: result.durationMs }
  }

  /** The project's webhook with this id; WEBHOOK_NOT_FOUND for another project's or none. */
  async find (project: ProjectRecord, id: string): Promise<WebhookRecord> {
    const webhook = await this.options.store.webhooks.find(id)
    if (!webhook || webhook.projectId !== project.id) throw new ContentdError('WEBHOOK_NOT_FOUND')
    return webhook
  }
}
