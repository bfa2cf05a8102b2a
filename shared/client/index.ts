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
//
// The same client manages accounts, projects and keys (account.ts): createClient without a
// token can sign up or log in; a client made with the session token does the rest.
import type { Json } from '../json.js'
import { AccountRequests, type ApiKeyInfo, type CreatedApiKey, type Me, type NewApiKey, type ProjectSummary, type SessionGrant } from './account.js'
import { Http, type FetchLike } from './http.js'
import { parseProjectRef } from './project-ref.js'
import { ProjectClient } from './project.js'
import { LiveContent, type ConnectionListener, type ConnectionState } from './realtime.js'
import { OfflineProject, type OfflineOptions } from './offline/offline-project.js'
import type { TokenOption } from './token-source.js'

export interface ClientOptions {
  /** Where contentd runs, e.g. "https://content.example.com". */
  baseUrl: string
  /**
   * A session token (cds_…) or an API key (cdk_…); or, for an app user (docs/rules.md), a
   * function returning the app's JWT, called again shortly before each token expires.
   */
  token?: TokenOption
  /** A fetch implementation; defaults to the global one. */
  fetch?: FetchLike
  /** Extra socket.io-client options for subscriptions (e.g. { transports: ['websocket'] }). */
  socketOptions?: Record<string, unknown>
  /**
   * Offline first (docs/sdk.md#offline): writes go to a durable outbox and the local copy at
   * once, and are sent exactly once when the server can be reached; the copy is kept in
   * `store` and shown on the next start before the network answers.
   */
  offline?: OfflineOptions
}

export interface ContentdClient {
  /** A project by reference: "@alice/demo" (or "alice/demo"). */
  project (ref: string): ProjectClient
  /** Who the token belongs to. */
  me (): Promise<Me>
  /** The projects the token can see, with the caller's role in each: all of them (the server sends them a page at a time). */
  projects (): Promise<ProjectSummary[]>
  /** Creates an account (403 SIGNUP_DISABLED when the server's sign-up is closed). */
  signup (username: string, password: string): Promise<SessionGrant>
  /** Signs in (401 WRONG_CREDENTIALS). Use the grant's token in a new client. */
  login (username: string, password: string): Promise<SessionGrant>
  /** Ends the client's session token. */
  logout (): Promise<{ message: string }>
  /** Creates a project owned by the session's user (409 PROJECT_EXISTS). */
  createProject (project: { slug: string, name?: string }): Promise<ProjectSummary>
  /** Deletes a project with its content and members (owner, with a session). */
  deleteProject (ref: string): Promise<{ message: string }>
  /** The session user's API keys (never their secrets). */
  keys (): Promise<ApiKeyInfo[]>
  /** Mints an API key; the result's `key` is the secret, shown this once. */
  createKey (key: NewApiKey): Promise<CreatedApiKey>
  revokeKey (id: string): Promise<{ message: string }>
  /** The realtime connection's state (see ConnectionState). */
  readonly connection: ConnectionState
  /** Calls `listener` with every new connection state; returns the function that stops it. */
  onConnection (listener: ConnectionListener): () => void
  /** Ends the realtime connection and every subscription (offline: keeps the copies first; await it to be sure they are kept). */
  close (): Promise<void>
}

export function createClient (options: ClientOptions): ContentdClient {
  if (typeof options?.baseUrl !== 'string' || options.baseUrl === '') throw new TypeError('contentd client: baseUrl is required')
  const http = new Http(options)
  const live = new LiveContent({ baseUrl: http.baseUrl, token: typeof options.token === 'function' ? () => http.tokens.get() : options.token, socketOptions: options.socketOptions })
  const account = new AccountRequests(http)
  // One outbox and local copy per project, whichever ProjectClient asks.
  const offlineProjects = new Map<string, OfflineProject>()
  const offline = options.offline
  const offlineFor = offline === undefined
    ? undefined
    : (ref: string) => (base: string) => {
        let project = offlineProjects.get(ref)
        if (!project) { project = new OfflineProject(ref, http, live, base, offline); offlineProjects.set(ref, project) }
        return project
      }
  return {
    project: ref => {
      const parsed = parseProjectRef(ref)
      return new ProjectClient(http, live, parsed, offlineFor?.(parsed.ref))
    },
    me: () => account.me(),
    projects: () => account.projects(),
    signup: (username, password) => account.signup(username, password),
    login: (username, password) => account.login(username, password),
    logout: () => account.logout(),
    createProject: project => account.createProject(project),
    deleteProject: ref => account.deleteProject(ref),
    keys: () => account.keys(),
    createKey: key => account.createKey(key),
    revokeKey: id => account.revokeKey(id),
    get connection () { return live.connection },
    onConnection: listener => live.onConnection(listener),
    close: () => {
      // Without offline projects the connection ends now, as it always did.
      if (offlineProjects.size === 0) { live.close(); return Promise.resolve() }
      return Promise.all([...offlineProjects.values()].map(project => project.close())).then(() => live.close())
    }
  }
}

export { ContentdClientError, ContentdClientError as ContentdError, type ClientErrorCode } from './errors.js'
export type { TokenOption } from './token-source.js'
export type { ProjectClient, WriteOptions, WriteResult, Snapshot, ChangesPage, ChangesOptions, JsonSchema, SchemaSet, NewWebhook, PingResult, RulesDocument, RulesCheck, RulesDecision, AppAuth, AppAuthSettings } from './project.js'
export type { WebhookView, DeliveryView, CreatedWebhook } from '../webhooks.js'
export type { ApiKeyInfo, CreatedApiKey, KeyPermission, Me, Member, MemberRole, NewApiKey, ProjectRole, ProjectSummary, SessionGrant } from './account.js'
export type { NarrowableOperation } from '../key-scope.js'
export type { ConnectionState, ConnectionListener } from './realtime.js'
export type { Subscription, SubscribeOptions, ContentListener } from './subscription.js'
export type { ProjectQuery, QueryInput } from './project.js'
export type { QueryListener, QueryResult, QuerySubscription, QuerySubscribeOptions } from './live-query.js'
export type { LiveQuery, QueryItem } from '../query.js'
export type { ProjectPresence, PresenceListener, PresenceErrorListener } from './presence.js'
export type { PresenceMember, PresenceEvent } from '../presence.js'
export type { Actor } from '../actor.js'
export type { BatchOperationBody } from '../batch.js'
export type { PatchOperation } from '../json-patch.js'
export type { ChangeEvent, ChangeEntry } from '../events.js'
export type { ErrorCode, SchemaError } from '../errors.js'
export type { Json, JsonObject } from '../json.js'
export type JsonValue = Json
export { memoryStore, type OfflineStore } from './offline/storage.js'
export { directoryStore } from './offline/directory-store.js'
export { indexedDbStore } from './offline/indexeddb-store.js'
export type { OfflineOptions, OfflineProject, RejectedWrite } from './offline/offline-project.js'
export type { QueuedWrite } from './offline/outbox.js'
// Live paths (docs/design.md §15): project.ref(path).
export type { PathRef, PathChangesPage } from './path-ref.js'
export type { PathSubscription, PathSubscribeOptions, PathListener } from './path-subscription.js'
export type { PathChange, PathChangeEvent, ProjectedChange } from '../live-path.js'
