// The webhook endpoints the console's Webhooks tab uses (docs/webhooks.md), called through
// the SDK's own request function (shared/client/http.ts: bearer credential, JSON, errors as
// ContentdError). The SDK has no webhook methods yet; when it grows them, this module goes.
// Everything else the console does (content, history, schema) uses the SDK's methods.
import { Http } from '../../shared/client/http.js'
import type { DeliveryView, WebhookView } from '../../shared/webhooks.js'

export type { DeliveryView, WebhookView }

export interface NewWebhook {
  url: string
  paths?: string[]
  ops?: string[]
  description?: string
}

export interface CreatedWebhook {
  id: string
  url: string
  paths: string[] | null
  ops: string[] | null
  secret: string
  createdAt: string
}

export interface PingResult {
  delivered: boolean
  status: number | null
  error?: string
  durationMs: number
}

export class WebhooksApi {
  private readonly http: Http
  private readonly base: string

  constructor (origin: string, token: string, project: string) {
    this.http = new Http({ baseUrl: origin, token })
    // "@alice/demo" → "/api/@alice/demo" (the slug is already URL-safe: route.ts accepts only [a-z0-9_-]).
    this.base = `/api/${project}`
  }

  async webhooks (): Promise<WebhookView[]> {
    return (await this.http.request<{ webhooks: WebhookView[] }>('GET', `${this.base}/webhooks`)).body.webhooks
  }

  async createWebhook (webhook: NewWebhook): Promise<CreatedWebhook> {
    return (await this.http.request<CreatedWebhook>('POST', `${this.base}/webhooks`, { body: webhook })).body
  }

  async deleteWebhook (id: string): Promise<void> {
    await this.http.request('DELETE', `${this.base}/webhooks/${encodeURIComponent(id)}`)
  }

  /** The last 100 attempts, newest first. */
  async deliveries (id: string): Promise<DeliveryView[]> {
    return (await this.http.request<{ deliveries: DeliveryView[] }>('GET', `${this.base}/webhooks/${encodeURIComponent(id)}/deliveries`)).body.deliveries
  }

  async ping (id: string): Promise<PingResult> {
    return (await this.http.request<PingResult>('POST', `${this.base}/webhooks/${encodeURIComponent(id)}/test`)).body
  }
}
