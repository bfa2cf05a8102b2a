// The project endpoints the console's History and Webhooks tabs use (docs/change-log.md,
// docs/webhooks.md), called through the SDK's own request function (shared/client/http.ts:
// bearer credential, JSON, errors as ContentdError). Kept on the console's side until the
// SDK grows these methods itself (project.changes()/at()/revert() are being added there);
// then this module shrinks to the webhook calls, or goes.
import { Http, versionOf } from '../../shared/client/http.js'
import type { ChangeEntry } from '../../shared/events.js'
import type { Json } from '../../shared/json.js'
import type { DeliveryView, WebhookView } from '../../shared/webhooks.js'

export type { ChangeEntry, DeliveryView, WebhookView }

export interface ChangesPage {
  /** The project's current version. */
  version: number
  /** Ascending by version. */
  changes: ChangeEntry[]
  more: boolean
}

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

/** "@alice/demo" → "/api/@alice/demo" (the slug is already URL-safe: route.ts accepts only [a-z0-9_-]). */
export function projectBase (project: string): string {
  return `/api/${project}`
}

export class ProjectApi {
  private readonly http: Http
  private readonly base: string

  constructor (origin: string, token: string, project: string) {
    this.http = new Http({ baseUrl: origin, token })
    this.base = projectBase(project)
  }

  /** The changes after `since`, ascending, at most `limit` (GET …/content/changes). */
  async changes (since: number, limit: number): Promise<ChangesPage> {
    return (await this.http.request<ChangesPage>('GET', `${this.base}/content/changes?since=${since}&limit=${limit}`)).body
  }

  /** The content as it was at `version` (GET …/content?version=N). */
  async contentAt (version: number): Promise<{ value: Json, version: number | undefined }> {
    const result = await this.http.request<Json>('GET', `${this.base}/content?version=${version}`)
    return { value: result.body, version: versionOf(result.headers) }
  }

  /** Makes the content what it was at `version`, as one new change; resolves with the new version. */
  async revert (version: number): Promise<number | undefined> {
    return versionOf((await this.http.request<{ message: string }>('POST', `${this.base}/content/revert`, { body: { version } })).headers)
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
