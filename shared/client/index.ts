// contentd's client SDK (package subpath `contentd/client`), for Node 20 and browsers:
//
//   const client = createClient({ baseUrl: 'http://localhost:3000', token: process.env.CONTENTD_KEY })
//   const demo = client.project('@alice/demo')
//   await demo.increment('stats.visits')
//   const live = demo.subscribe(content => render(content))
//   demo.presence.on('change', members => showAvatars(members))
//   await demo.presence.set({ path: 'title' })
//   ...
//   client.close()
import type { Json } from '../json.js'
import { Http, type FetchLike } from './http.js'
import { parseProjectRef } from './project-ref.js'
import { ProjectClient } from './project.js'
import { LiveContent } from './realtime.js'

export interface ClientOptions {
  /** Where contentd runs, e.g. "https://content.example.com". */
  baseUrl: string
  /** A session token (cds_…) or an API key (cdk_…). */
  token?: string
  /** A fetch implementation; defaults to the global one. */
  fetch?: FetchLike
  /** Extra socket.io-client options for subscriptions (e.g. { transports: ['websocket'] }). */
  socketOptions?: Record<string, unknown>
}

export interface ProjectSummary {
  username: string
  slug: string
  name: string
  createdAt: string
  version: number
  role?: 'owner' | 'editor' | 'viewer'
}

export interface ContentdClient {
  /** A project by reference: "@alice/demo" (or "alice/demo"). */
  project (ref: string): ProjectClient
  /** Who the token belongs to. */
  me (): Promise<{ username: string, createdAt: string }>
  /** The projects the token can see, all of them (the server sends them a page at a time). */
  projects (): Promise<ProjectSummary[]>
  /** Ends the realtime connection and every subscription. */
  close (): void
}

export function createClient (options: ClientOptions): ContentdClient {
  if (typeof options?.baseUrl !== 'string' || options.baseUrl === '') throw new TypeError('contentd client: baseUrl is required')
  const http = new Http(options)
  const live = new LiveContent({ baseUrl: http.baseUrl, token: options.token, socketOptions: options.socketOptions })
  return {
    project: ref => new ProjectClient(http, live, parseProjectRef(ref)),
    me: async () => (await http.request<{ username: string, createdAt: string }>('GET', '/api/me')).body,
    projects: async () => {
      const all: ProjectSummary[] = []
      let cursor: string | null = null
      do {
        const page: { projects: ProjectSummary[], nextCursor: string | null } =
          (await http.request<{ projects: ProjectSummary[], nextCursor: string | null }>('GET', `/api/projects${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`)).body
        all.push(...page.projects)
        cursor = page.nextCursor ?? null
      } while (cursor !== null)
      return all
    },
    close: () => live.close()
  }
}

export { ContentdClientError, ContentdClientError as ContentdError, type ClientErrorCode } from './errors.js'
export type { ProjectClient, WriteOptions, WriteResult, Snapshot, ChangesPage, ChangesOptions, JsonSchema, SchemaSet } from './project.js'
export type { Subscription, SubscribeOptions, ContentListener } from './subscription.js'
export type { ProjectPresence, PresenceListener, PresenceErrorListener } from './presence.js'
export type { PresenceMember, PresenceEvent } from '../presence.js'
export type { Actor } from '../actor.js'
export type { BatchOperationBody } from '../batch.js'
export type { PatchOperation } from '../json-patch.js'
export type { ChangeEvent, ChangeEntry } from '../events.js'
export type { ErrorCode, SchemaError } from '../errors.js'
export type { Json, JsonObject } from '../json.js'
export type JsonValue = Json
