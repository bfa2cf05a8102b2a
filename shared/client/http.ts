// The HTTP half of the SDK: one request function that adds the bearer credential, sends
// JSON, and turns every non-2xx answer into a ContentdClientError. Uses the global fetch,
// so it runs unchanged in Node 20 and browsers.
import { ContentdClientError, errorFromBody } from './errors.js'
import { TokenSource, type TokenOption } from './token-source.js'

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>

export interface HttpOptions {
  baseUrl: string
  /** A token or key, or a function giving an app user's token (token-source.ts). */
  token?: TokenOption | undefined
  fetch?: FetchLike | undefined
}

export interface HttpResult<T> {
  status: number
  body: T
  headers: Headers
}

export interface RequestOptions {
  body?: unknown
  headers?: Record<string, string>
}

export class Http {
  readonly baseUrl: string
  readonly tokens: TokenSource
  private readonly fetchImpl: FetchLike

  constructor (options: HttpOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.tokens = new TokenSource(options.token)
    const globalFetch: FetchLike | undefined = typeof fetch === 'function' ? (input, init) => fetch(input, init) : undefined
    const chosen = options.fetch ?? globalFetch
    if (!chosen) throw new TypeError('contentd client: no fetch available; pass { fetch } to createClient')
    this.fetchImpl = chosen
  }

  async request<T> (method: string, path: string, options: RequestOptions = {}): Promise<HttpResult<T>> {
    try {
      return await this.requestWith<T>(await this.tokens.get(), method, path, options)
    } catch (error) {
      // A token provider's token may have been revoked or rotated early: ask it once more.
      if (!(error instanceof ContentdClientError) || error.code !== 'INVALID_TOKEN' || !this.tokens.refreshable) throw error
      return this.requestWith<T>(await this.tokens.refresh(), method, path, options)
    }
  }

  private async requestWith<T> (token: string | undefined, method: string, path: string, options: RequestOptions): Promise<HttpResult<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
    if (token) headers.authorization = `Bearer ${token}`
    const init: RequestInit = { method, headers }
    if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json'
      init.body = JSON.stringify(options.body)
    }
    let response: Response
    try {
      response = await this.fetchImpl(this.baseUrl + path, init)
    } catch (e) {
      throw new ContentdClientError(0, 'NETWORK_ERROR', `Cannot reach ${this.baseUrl}: ${e instanceof Error ? e.message : String(e)}`, { cause: e })
    }
    const text = await response.text()
    let body: unknown
    try {
      body = text === '' ? undefined : JSON.parse(text)
    } catch {
      throw errorFromBody(response.status, undefined, text)
    }
    if (!response.ok) throw errorFromBody(response.status, body, text)
    return { status: response.status, body: body as T, headers: response.headers }
  }
}

/** `"7"` → 7; undefined when the header is absent or not one of ours. */
export function versionOf (headers: Headers): number | undefined {
  const match = /^(?:W\/)?"(\d+)"$/.exec(headers.get('etag') ?? '')
  return match ? Number(match[1]) : undefined
}
