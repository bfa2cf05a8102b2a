// The operator's webhook commands (`contentd webhook add|list|rm|deliveries`), done with the
// same service as the HTTP API: the same validation, the same refused targets, the secret
// sealed with the same key. Acts on any project (the operator is not a project's owner).
import { webhookBody } from '../../shared/webhooks.js'
import { ContentdError } from '../../shared/errors.js'
import { splitProjectRef } from '../../shared/project-ref.js'
import type { Config } from '../config.js'
import { createLogger } from '../logger.js'
import { readAll } from '../services/pagination.js'
import type { Projects } from '../services/projects.js'
import type { Store } from '../store/types.js'
import { createWebhooks } from '../webhooks/index.js'
import type { WebhookService } from '../webhooks/service.js'
import { parseInput } from './input.js'
import { UsageError } from './usage.js'

export interface WebhookAddOptions {
  paths: string[]
  ops: string[]
  description: string | undefined
}

export class WebhookAdmin {
  private readonly service: WebhookService

  constructor (private readonly store: Store, private readonly projects: Projects, config: Config) {
    this.service = createWebhooks({ config, store, logger: createLogger('silent') }).service
  }

  async add (ref: string, url: string, options: WebhookAddOptions): Promise<string> {
    const project = await this.project(ref)
    const request = parseInput(webhookBody, {
      url,
      ...(options.paths.length > 0 ? { paths: options.paths } : {}),
      ...(options.ops.length > 0 ? { ops: options.ops } : {}),
      ...(options.description !== undefined ? { description: options.description } : {})
    }, 'webhook add')
    const created = await this.service.create(project, request)
    return `Created webhook ${created.id} for ${ref} → ${created.url} (changes after version ${(await this.service.find(project, created.id)).cursor}); signing secret, shown once: ${created.secret}`
  }

  async list (ref: string): Promise<string> {
    const project = await this.project(ref)
    const hooks = await readAll(query => this.service.list(project, query))
    if (hooks.length === 0) return `${ref} has no webhooks.`
    return hooks.map(h => [
      h.id, h.enabled ? 'enabled' : 'DISABLED', `cursor ${h.cursor}`, h.url, `paths ${h.paths?.join(',') ?? 'all'}`, `ops ${h.ops?.join(',') ?? 'all'}`,
      h.description ?? '', ...(h.disabledReason ? [h.disabledReason] : h.failingSince ? [`failing since ${h.failingSince}, next attempt ${h.nextAttemptAt}`] : [])
    ].join('\t')).join('\n')
  }

  async remove (id: string): Promise<string> {
    const webhook = await this.store.webhooks.find(id)
    if (!webhook || !(await this.store.webhooks.delete(webhook.projectId, id))) throw new ContentdError('WEBHOOK_NOT_FOUND')
    return `Deleted webhook ${id}`
  }

  async deliveries (id: string): Promise<string> {
    const webhook = await this.store.webhooks.find(id)
    if (!webhook) throw new ContentdError('WEBHOOK_NOT_FOUND')
    const list = await this.store.webhooks.deliveries(id)
    if (list.length === 0) return `No deliveries for ${id} yet.`
    return list.map(d => [d.at, `v${d.version}`, d.outcome, d.status ?? '-', `attempt ${d.attempt}`, `${d.durationMs} ms`, d.error ?? ''].join('\t')).join('\n')
  }

  private async project (ref: string) {
    const parts = splitProjectRef(ref)
    if (!parts) throw new UsageError(`"${ref}" is not a project reference like @alice/demo`)
    return this.projects.find(`@${parts.owner}`, parts.slug)
  }
}
