// Webhook metrics (docs/webhooks.md), on the app's registry: deliveries by outcome, and how
// far each webhook is behind its project's newest version, as this node last saw it.
import { Counter, Gauge, type Registry } from 'prom-client'

export const DELIVERY_OUTCOMES = ['delivered', 'failed', 'lost'] as const

export class WebhookMetrics {
  readonly deliveries: Counter<'outcome'>
  readonly lag: Gauge<'webhook'>

  constructor (registry: Registry) {
    this.deliveries = new Counter({
      name: 'contentd_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (delivered: 2xx in time; failed: retried later; lost: changes that left the history before delivery)',
      labelNames: ['outcome'] as const,
      registers: [registry]
    })
    this.lag = new Gauge({
      name: 'contentd_webhook_lag_versions',
      help: 'Versions a webhook is behind its project\'s newest, as this node last saw it',
      labelNames: ['webhook'] as const,
      registers: [registry]
    })
    for (const outcome of DELIVERY_OUTCOMES) this.deliveries.inc({ outcome }, 0)
  }

  forget (webhookId: string): void {
    this.lag.remove({ webhook: webhookId })
  }
}
