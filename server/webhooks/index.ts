// Webhooks for one process (docs/design.md §11): the management service the API and CLI
// use, and the dispatcher that delivers (started by the server, not by the CLI).
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../observability/metrics.js'
import type { Store } from '../store/types.js'
import { WebhookDispatcher } from './dispatcher.js'
import type { HookedProjects } from './hooked-projects.js'
import { WebhookMetrics } from './metrics.js'
import { SecretBox } from './secret-box.js'
import { WebhookService } from './service.js'
import type { RecentChanges } from './recent-changes.js'
import type { Resolver } from './target-policy.js'

export interface Webhooks {
  service: WebhookService
  dispatcher: WebhookDispatcher
}

export interface WebhookParts {
  config: Config
  store: Store
  logger: Logger
  /** The app's metrics: the webhook series join its registry. */
  metrics?: Metrics
  now?: Clock
  pollIntervalMs?: number
  resolve?: Resolver
  /** The change feed's recent changes (recent-changes.ts), for the dispatcher. */
  recent?: RecentChanges
  /** The projects with webhooks, which `recent` keeps changes of (hooked-projects.ts). */
  hooked?: HookedProjects
  /** Tells the other nodes that a project's webhooks changed (the change feed's relay). */
  announce?: (projectId: string) => void
}

export function createWebhooks ({ config, store, logger, metrics, now, pollIntervalMs, resolve, recent, hooked, announce }: WebhookParts): Webhooks {
  const secrets = SecretBox.fromConfig(config)
  const allowPrivate = config.webhooks.allowPrivate
  const webhookMetrics = metrics ? new WebhookMetrics(metrics.registry) : undefined
  const optional = { ...(now ? { now } : {}), ...(webhookMetrics ? { metrics: webhookMetrics } : {}), ...(resolve ? { resolve } : {}) }
  // This node's set changes at once (a delete asks the store: other webhooks may be left); the others are told.
  const onChanged = (projectId: string, created: boolean) => {
    if (created) hooked?.add(projectId)
    else hooked?.recheck(projectId).catch((e: unknown) => logger.warn({ err: e }, 'reading a project\'s webhooks failed'))
    announce?.(projectId)
  }
  return {
    service: new WebhookService({ store, secrets, allowPrivate, maxPerProject: config.quotas.webhooksPerProject, ...optional, onChanged }),
    dispatcher: new WebhookDispatcher({ store, secrets, allowPrivate, logger, ...optional, ...(pollIntervalMs ? { pollIntervalMs } : {}), ...(recent ? { recent } : {}), ...(hooked ? { hooked } : {}) })
  }
}
