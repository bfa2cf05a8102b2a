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
import { AccountRequests, type ApiKeyInfo, type CreatedApiKey, type NewApiKey, type ProjectSummary, type SessionGrant } from './account.js'
import { Http, type FetchLike } from './http.js'
import { parseProjectRef } from './project-ref.js'
import { ProjectClient } from './project.js'
import { LiveContent, type ConnectionListener, type ConnectionState } from './realtime.js'
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
}

export interface ContentdClient {
  /** A project by reference: "@alice/demo" (or "alice/demo"). */
  project (ref: string): ProjectClient
  /** Who the token belongs to. */
  me (): Promise<{ username: string, createdAt: string }>
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
  /** Ends the realtime connection and every subscription. */
  close (): void
}

export function createClient (options: ClientOptions): ContentdClient {
  if (typeof options?.baseUrl !== 'string' || options.baseUrl === '') throw new TypeError('contentd client: baseUrl is required')
  const http = new Http(options)
  const live = new LiveContent({ baseUrl: http.baseUrl, token: typeof options.token === 'function' ? () => http.tokens.get() : options.token, socketOptions: options.socketOptions })
  const account = new AccountRequests(http)
  return {
    project: ref => new ProjectClient(http, live, parseProjectRef(ref)),
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
    close: () => live.close()
  }
}

export { ContentdClientError, ContentdClientError as ContentdError, type ClientErrorCode } from './errors.js'
export type { TokenOption } from './token-source.js'
export type { ProjectClient, WriteOptions, WriteResult, Snapshot, ChangesPage, ChangesOptions, JsonSchema, SchemaSet, NewWebhook, PingResult } from './project.js'
export type { WebhookView, DeliveryView, CreatedWebhook } from '../webhooks.js'
export type { ApiKeyInfo, CreatedApiKey, KeyPermission, Member, MemberRole, NewApiKey, ProjectRole, ProjectSummary, SessionGrant } from './account.js'
export type { NarrowableOperation } from '../key-scope.js'
export type { ConnectionState, ConnectionListener } from './realtime.js'
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
