// One project's content over HTTP: get, update and the six path operations. Each write
// resolves with the server's message and the content version it produced (from the ETag).
import type { Json, JsonObject } from '../json.js'
import type { Http } from './http.js'
import { versionOf } from './http.js'
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

/** A JSON Schema, draft 2020-12: an object, or true or false. */
export type JsonSchema = boolean | JsonObject

/** Who set a schema and when. */
export interface SchemaSet {
  message: string
  /** "@alice", or "operator" when set with the CLI. */
  setBy: string
  setAt: string
}

export interface Snapshot<T = Json> {
  value: T
  version: number | undefined
}

export class ProjectClient {
  /** "@alice/demo" */
  readonly ref: string
  private readonly base: string
  private readonly schemaUrl: string

  constructor (private readonly http: Http, private readonly live: LiveContent, project: ProjectRef) {
    this.ref = project.ref
    this.base = `/api/@${project.owner}/${encodeURIComponent(project.slug)}/content`
    this.schemaUrl = `/api/@${project.owner}/${encodeURIComponent(project.slug)}/schema`
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
   * Keeps a live copy of the content: `onContent` gets the snapshot, then the content after
   * every change, applied locally in version order. Gaps and reconnects re-subscribe.
   */
  subscribe (onContent: ContentListener, options: SubscribeOptions = {}): Subscription {
    return this.live.subscribe(this.ref, onContent, options)
  }

  private async write (suffix: string, body: unknown, options: WriteOptions = {}): Promise<WriteResult> {
    const headers: Record<string, string> = {}
    if (options.ifVersion !== undefined) headers['if-match'] = `"${options.ifVersion}"`
    const result = await this.http.request<{ message: string }>('POST', this.base + suffix, { body, headers })
    return { message: result.body.message, version: versionOf(result.headers) }
  }
}
