// One project over HTTP: its content (get, update, the six path operations, batch and JSON
// Patch), its history (changes, past versions, revert), its details and, for the owner, its
// members, schema, rules, app sign-in and webhooks. Each write resolves with the server's
// message and the content version it produced (from the ETag). A write with an
// idempotencyKey is retried on network errors (and while the server says the first attempt is
// still running): the key makes a retry safe, because the server answers it with the first
// answer instead of applying it again (docs/design.md §10).
import type { ChangesPageView } from '../api/changes.js'
import type { AppAuthBody, AppAuthView, RulesCheckBody, RulesCheckResult } from '../api/rules.js'
import type { SchemaSetView } from '../api/schema.js'
import type { PingResultView } from '../api/webhooks.js'
import type { LiveQuery } from '../query.js'
import type { QueryListener, QueryResult, QuerySubscribeOptions, QuerySubscription } from './live-query.js'
import type { BatchOperationBody } from '../batch.js'
import type { Json, JsonObject } from '../json.js'
import type { PatchOperation } from '../json-patch.js'
import type { CreatedWebhook, DeliveryView, WebhookView } from '../webhooks.js'
import type { Member, MemberRole, ProjectSummary } from './account.js'
import { ContentdClientError } from './errors.js'
import type { Http } from './http.js'
import { versionOf } from './http.js'
import { readAllPages } from './pages.js'
import type { ProjectPresence } from './presence.js'
import type { ProjectRef } from './project-ref.js'
import { PathRef } from './path-ref.js'
import type { LiveContent } from './realtime.js'
import type { OfflineProject } from './offline/offline-project.js'
import type { Subscription, SubscribeOptions, ContentListener } from './subscription.js'

export interface WriteResult {
  message: string
  /** The project's version right after this change. */
  version: number | undefined
  /** The server answered a retry with the first answer to its idempotencyKey (`Idempotent-Replayed`). */
  replayed: boolean
}

export interface WriteOptions {
  /** Only apply when the content is still at this version (HTTP If-Match); else 412 PRECONDITION_FAILED. */
  ifVersion?: number
  /**
   * Idempotency-Key (1-255 visible ASCII characters, e.g. crypto.randomUUID()): the server
   * applies the write at most once; retries with the same key get the first answer.
   */
  idempotencyKey?: string
  /** With idempotencyKey: how many times to retry after a network error or 409 IDEMPOTENCY_IN_PROGRESS (default 3). */
  retries?: number
}

/** A JSON Schema, draft 2020-12: an object, or true or false. */
export type JsonSchema = boolean | JsonObject

/** Who set a schema and when: `setBy` is "@alice", or "operator" when set with the CLI. */
export type SchemaSet = SchemaSetView

const RETRY_BASE_MS = 200
/** Worth retrying with the same key: the request may not have run, or its answer was lost, or it is still running. */
const retryable = (error: unknown) => error instanceof ContentdClientError &&
  (error.code === 'NETWORK_ERROR' || error.code === 'IDEMPOTENCY_IN_PROGRESS' || error.status >= 500)
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

export interface Snapshot<T = Json> {
  value: T
  version: number | undefined
}

/** A rules document (docs/rules.md): `{ "rules": { … } }`, a tree of `.read`/`.write` CEL expressions. */
export type RulesDocument = JsonObject

/** The app sign-in a project trusts (docs/rules.md#trust-settings-auth), as the server shows it: never a secret. */
export type AppAuth = AppAuthView

/** What to set as the trusted app sign-in: issuer, optional audience, exactly one of jwks, jwksUrl, hs256Secret. */
export type AppAuthSettings = AppAuthBody

/** A question for the simulator: these claims (or null), a read or a write (with the value; none: a delete), at a dot path. */
export type RulesCheck = RulesCheckBody

/** The simulator's answer: allowed or not, and the rule that decided (`users.$uid/.write`), if any did. */
export type RulesDecision = RulesCheckResult

/** One page of the change log (GET …/content/changes, docs/design.md §9): `more` says whether entries follow. */
export type ChangesPage = ChangesPageView

/** A webhook to add (docs/design.md §11): without `paths` or `ops`, every change is sent. */
export interface NewWebhook {
  url: string
  paths?: string[]
  ops?: string[]
  description?: string
}

/** What a test ping got: whether the receiver answered 2xx in time, its status, or why not. */
export type PingResult = PingResultView

export interface ChangesOptions {
  /** Start after this version (default 0: from the oldest kept entry on). */
  since?: number
  /** Entries per page, 1..1000 (default: the server's, 100). */
  limit?: number
}

/** A query as written by hand: `direction` may be left out. */
export type QueryInput = Omit<LiveQuery, 'direction'> & { direction?: LiveQuery['direction'] }

export interface ProjectQuery {
  /** The result now (`GET …/content?path=&orderBy=…`). */
  get (): Promise<QueryResult>
  /** The result, live: `listener` gets the ordered items after each change that alters them. */
  subscribe (listener: QueryListener, options?: QuerySubscribeOptions): QuerySubscription
}

function queryString (path: string, query: LiveQuery): string {
  const params = new URLSearchParams({ path, orderBy: query.orderBy, direction: query.direction, limit: String(query.limit) })
  if (query.startAt !== undefined) params.set('startAt', JSON.stringify(query.startAt))
  if (query.endAt !== undefined) params.set('endAt', JSON.stringify(query.endAt))
  return params.toString()
}

export class ProjectClient {
  /** "@alice/demo" (named `reference`: `ref(path)` is one path of the project, docs/design.md §15) */
  readonly reference: string
  /** "/api/@alice/demo" */
  private readonly projectBase: string
  private readonly base: string
  private readonly schemaUrl: string
  private readonly rulesUrl: string
  private readonly authUrl: string

  /**
   * With `createClient({ offline })`: this project's outbox and local copy (docs/sdk.md#offline);
   * every write and subscription goes through it. Undefined otherwise.
   */
  readonly offline: OfflineProject | undefined

  constructor (private readonly http: Http, private readonly live: LiveContent, project: ProjectRef, offline?: (base: string) => OfflineProject) {
    this.reference = project.ref
    this.projectBase = `/api/@${project.owner}/${encodeURIComponent(project.slug)}`
    this.base = `${this.projectBase}/content`
    this.schemaUrl = `${this.projectBase}/schema`
    this.rulesUrl = `${this.projectBase}/rules`
    this.authUrl = `${this.projectBase}/auth`
    this.offline = offline?.(this.base)
  }

  /** The project's details, with the caller's role (read access). */
  async info (): Promise<ProjectSummary> {
    return (await this.http.request<ProjectSummary>('GET', this.projectBase)).body
  }

  /** The members besides the owner (owner only). */
  async members (): Promise<Member[]> {
    return readAllPages<Member, 'members'>(this.http, `${this.projectBase}/members`, 'members')
  }

  /** Adds a member by username ("bob" or "@bob"), or changes their role (owner only). */
  async setMember (username: string, role: MemberRole): Promise<Member> {
    return (await this.http.request<Member>('PUT', this.memberPath(username), { body: { role } })).body
  }

  /** Removes a member; their live subscriptions to the project end (owner only). */
  async removeMember (username: string): Promise<{ message: string }> {
    return (await this.http.request<{ message: string }>('DELETE', this.memberPath(username))).body
  }

  /** One path of the project: read it, watch it live, read its history (docs/design.md §15). */
  ref (path: string): PathRef {
    return new PathRef(this.http, this.live, this.reference, this.base, path, (at, query) => this.query(at, query))
  }

  /** The whole content, or the value at a dot path (404 PATH_NOT_FOUND when absent). */
  async get<T = Json> (path?: string): Promise<T> {
    return (await this.snapshot<T>(path)).value
  }

  /** Like get, with the version the value was read at. */
  async snapshot<T = Json> (path?: string): Promise<Snapshot<T>> {
    const query = path === undefined ? '' : `?path=${encodeURIComponent(path)}`
    const result = await this.http.request<T>('GET', this.base + query)
    return { value: result.body, version: versionOf(result.headers) }
  }

  /** The whole content as it was at `version` (410 HISTORY_EXPIRED beyond retention, 404 VERSION_NOT_FOUND above the current version). */
  async at<T = JsonObject> (version: number): Promise<Snapshot<T>> {
    const result = await this.http.request<T>('GET', `${this.base}?version=${encodeURIComponent(String(version))}`)
    return { value: result.body, version: versionOf(result.headers) }
  }

  /**
   * The change log after `since`, page by page, up to the version current when the last page
   * is read: `for await (const page of project.changes({ since: 812 })) …`.
   */
  async * changes (options: ChangesOptions = {}): AsyncGenerator<ChangesPage, void, undefined> {
    let since = options.since ?? 0
    for (;;) {
      const limit = options.limit === undefined ? '' : `&limit=${encodeURIComponent(String(options.limit))}`
      const page = (await this.http.request<ChangesPage>('GET', `${this.base}/changes?since=${encodeURIComponent(String(since))}${limit}`)).body
      yield page
      const last = page.changes.at(-1)
      if (!page.more || last === undefined) return
      since = last.version
    }
  }

  /** Makes the content what it was at `version`, as one new change (op "revert"). */
  revert (version: number, options?: WriteOptions): Promise<WriteResult> {
    return this.write('/revert', { version }, options)
  }

  /** Replaces the whole content (it must be a JSON object). */
  update (content: JsonObject, options?: WriteOptions): Promise<WriteResult> {
    return this.write('', content, options)
  }

  increment (path: string, by?: number, options?: WriteOptions): Promise<WriteResult> {
    return this.write('/increment', by === undefined ? { path } : { path, value: by }, options)
  }

  decrement (path: string, by?: number, options?: WriteOptions): Promise<WriteResult> {
    return this.write('/decrement', by === undefined ? { path } : { path, value: by }, options)
  }

  set (path: string, value: Json, options?: WriteOptions): Promise<WriteResult> {
    return this.write('/set', { path, value }, options)
  }

  delete (path: string, options?: WriteOptions): Promise<WriteResult> {
    return this.write('/delete', { path }, options)
  }

  push (path: string, value: Json, options?: WriteOptions): Promise<WriteResult> {
    return this.write('/push', { path, value }, options)
  }

  insert (path: string, index: number, value: Json, options?: WriteOptions): Promise<WriteResult> {
    return this.write('/insert', { path, index, value }, options)
  }

  /**
   * Sets the project's JSON Schema (draft 2020-12); the owner's session token only. Every later
   * write whose result breaks it throws SCHEMA_VIOLATION (422) with `errors`. Throws
   * INVALID_SCHEMA (400), or SCHEMA_VIOLATION (409, with `errors`) when the content breaks it.
   */
  async setSchema (schema: JsonSchema): Promise<SchemaSet> {
    return (await this.http.request<SchemaSet>('PUT', this.schemaUrl, { body: schema })).body
  }

  /** The project's JSON Schema (owner's session); SCHEMA_NOT_FOUND (404) without one. */
  async getSchema (): Promise<JsonSchema> {
    return (await this.http.request<JsonSchema>('GET', this.schemaUrl)).body
  }

  /** Removes the project's JSON Schema (owner's session); SCHEMA_NOT_FOUND (404) without one. */
  async deleteSchema (): Promise<void> {
    await this.http.request('DELETE', this.schemaUrl)
  }

  /**
   * Sets the project's rules for app users (docs/rules.md); the owner's session only. Answers
   * the document as stored. Throws INVALID_RULES (400) naming the rule (`users.$uid/.write`) and its CEL error.
   */
  async setRules (document: RulesDocument): Promise<RulesDocument> {
    return (await this.http.request<RulesDocument>('PUT', this.rulesUrl, { body: document })).body
  }

  /** The project's rules (owner's session); RULES_NOT_FOUND (404) without any. */
  async getRules (): Promise<RulesDocument> {
    return (await this.http.request<RulesDocument>('GET', this.rulesUrl)).body
  }

  /** Removes the project's rules (owner's session): app users may then do nothing. RULES_NOT_FOUND (404) without any. */
  async deleteRules (): Promise<void> {
    await this.http.request('DELETE', this.rulesUrl)
  }

  /**
   * The simulator (owner's session): would the stored rules allow this read or write by a caller
   * with these claims, against the current content, and which rule decided. Nothing is written.
   */
  async checkRules (check: RulesCheck): Promise<RulesDecision> {
    return (await this.http.request<RulesDecision>('POST', `${this.rulesUrl}/check`, { body: check })).body
  }

  /** The app sign-in the project trusts (owner's session); AUTH_CONFIG_NOT_FOUND (404) without one. */
  async getAppAuth (): Promise<AppAuth> {
    return (await this.http.request<AppAuth>('GET', this.authUrl)).body
  }

  /** Sets the app sign-in the project trusts (owner's session); INVALID_AUTH_CONFIG (400) for a bad one. */
  async setAppAuth (settings: AppAuthSettings): Promise<AppAuth> {
    return (await this.http.request<AppAuth>('PUT', this.authUrl, { body: settings })).body
  }

  /** Stops trusting the app sign-in (owner's session): app tokens then answer 401. AUTH_CONFIG_NOT_FOUND (404) without one. */
  async deleteAppAuth (): Promise<void> {
    await this.http.request('DELETE', this.authUrl)
  }

  /** The project's webhooks, without their secrets (owner): every page, oldest first. */
  async webhooks (): Promise<WebhookView[]> {
    return readAllPages<WebhookView, 'webhooks'>(this.http, `${this.projectBase}/webhooks`, 'webhooks')
  }

  /** Adds a webhook (owner); it receives the changes after the current version. */
  async createWebhook (webhook: NewWebhook): Promise<CreatedWebhook> {
    return (await this.http.request<CreatedWebhook>('POST', `${this.projectBase}/webhooks`, { body: webhook })).body
  }

  /** Removes a webhook (owner); WEBHOOK_NOT_FOUND (404) when there is none with that id. */
  async deleteWebhook (id: string): Promise<void> {
    await this.http.request('DELETE', this.webhookPath(id))
  }

  /** A webhook's last 100 delivery attempts, newest first (owner). */
  async webhookDeliveries (id: string): Promise<DeliveryView[]> {
    return (await this.http.request<{ deliveries: DeliveryView[] }>('GET', `${this.webhookPath(id)}/deliveries`)).body.deliveries
  }

  /** Sends the webhook a signed `ping` now (owner), and says how it went. */
  async pingWebhook (id: string): Promise<PingResult> {
    return (await this.http.request<PingResult>('POST', `${this.webhookPath(id)}/test`)).body
  }

  /**
   * Keeps a live copy of the content: `onContent` gets the snapshot, then the content after
   * every change, applied locally in version order. Gaps and reconnects re-subscribe.
   */
  subscribe (onContent: ContentListener, options: SubscribeOptions = {}): Subscription {
    // Offline first: the local copy, the server's state plus the pending writes (docs/design.md §19).
    if (this.offline) return this.offline.subscribe(onContent, options)
    return this.live.subscribe(this.reference, onContent, options)
  }

  /**
   * A query over the children of the object or array at `path` (docs/design.md §16): `get()`
   * reads the result once, `subscribe(items => …)` keeps it live, in order.
   */
  query (path: string, query: QueryInput): ProjectQuery {
    // Checked by the server (INVALID_QUERY): the SDK's module graph carries no validator.
    const plan: LiveQuery = { ...query, direction: query.direction ?? 'asc' }
    const url = `${this.base}?${queryString(path, plan)}`
    return {
      get: async () => (await this.http.request<QueryResult>('GET', url)).body,
      subscribe: (listener, options = {}) => this.live.query(this.reference, path, plan, listener, options)
    }
  }

  private webhookPath (id: string): string {
    return `${this.projectBase}/webhooks/${encodeURIComponent(id)}`
  }

  private memberPath (username: string): string {
    return `${this.projectBase}/members/${encodeURIComponent(username.replace(/^@/, ''))}`
  }

  /**
   * Who is looking at the project right now (docs/sdk.md#presence): `members`, a live list,
   * `set(state)` to show this client with a state, `on('change', …)`. One per client and
   * project, whichever ProjectClient asks.
   */
  get presence (): ProjectPresence {
    return this.live.presence(this.reference)
  }

  /**
   * Several operations as one atomic change (POST …/content/batch): the path operations with
   * `op` added, and `{op: "test", path, value}` preconditions. All or nothing; a failure's
   * ContentdError names the failing operation's index in `operation`.
   */
  batch (operations: BatchOperationBody[], options?: WriteOptions): Promise<WriteResult> {
    return this.write('/batch', { operations }, options)
  }

  /** An RFC 6902 JSON Patch, applied atomically (PATCH …/content). */
  patch (operations: PatchOperation[], options?: WriteOptions): Promise<WriteResult> {
    return this.write('', operations, options, 'PATCH')
  }

  private async write (suffix: string, body: unknown, options: WriteOptions = {}, method: 'POST' | 'PATCH' = 'POST'): Promise<WriteResult> {
    // Offline first: into the durable outbox with a key of its own, sent in order (docs/design.md §19).
    if (this.offline) return this.offline.enqueue(method, suffix, body as Json, options)
    const headers: Record<string, string> = {}
    if (options.ifVersion !== undefined) headers['if-match'] = `"${options.ifVersion}"`
    if (method === 'PATCH') headers['content-type'] = 'application/json-patch+json'
    const key = options.idempotencyKey
    if (key !== undefined) headers['idempotency-key'] = key
    const retries = key === undefined ? 0 : options.retries ?? 3
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.http.request<{ message: string }>(method, this.base + suffix, { body, headers })
        return { message: result.body.message, version: versionOf(result.headers), replayed: result.headers.get('idempotent-replayed') === 'true' }
      } catch (error) {
        if (attempt >= retries || !retryable(error)) throw error
        await sleep(RETRY_BASE_MS * 2 ** attempt)
      }
    }
  }
}
