// One project over HTTP: its content (get, update and the six path operations), its details
// and, for the owner, its members. Each content write resolves with the server's message
// and the content version it produced (from the ETag).
import type { Json, JsonObject } from '../json.js'
import type { Member, MemberRole, ProjectSummary } from './account.js'
import type { Http } from './http.js'
import { versionOf } from './http.js'
import { readAllPages } from './pages.js'
import type { ProjectPresence } from './presence.js'
import type { ProjectRef } from './project-ref.js'
import type { LiveContent } from './realtime.js'
import type { Subscription, SubscribeOptions, ContentListener } from './subscription.js'

export interface WriteResult {
  message: string
  /** The project's version right after this change. */
  version: number | undefined
}

export interface WriteOptions {
  /** Only apply when the content is still at this version (HTTP If-Match); else 412 PRECONDITION_FAILED. */
  ifVersion?: number
}

export interface Snapshot<T = Json> {
  value: T
  version: number | undefined
}

export class ProjectClient {
  /** "@alice/demo" */
  readonly ref: string
  /** "/api/@alice/demo" */
  private readonly projectBase: string
  private readonly base: string

  constructor (private readonly http: Http, private readonly live: LiveContent, project: ProjectRef) {
    this.ref = project.ref
    this.projectBase = `/api/@${project.owner}/${encodeURIComponent(project.slug)}`
    this.base = `${this.projectBase}/content`
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
   * Keeps a live copy of the content: `onContent` gets the snapshot, then the content after
   * every change, applied locally in version order. Gaps and reconnects re-subscribe.
   */
  subscribe (onContent: ContentListener, options: SubscribeOptions = {}): Subscription {
    return this.live.subscribe(this.ref, onContent, options)
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
    return this.live.presence(this.ref)
  }

  private async write (suffix: string, body: unknown, options: WriteOptions = {}): Promise<WriteResult> {
    const headers: Record<string, string> = {}
    if (options.ifVersion !== undefined) headers['if-match'] = `"${options.ifVersion}"`
    const result = await this.http.request<{ message: string }>('POST', this.base + suffix, { body, headers })
    return { message: result.body.message, version: versionOf(result.headers) }
  }
}
