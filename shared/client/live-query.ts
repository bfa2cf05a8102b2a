// A live query on the client (docs/design.md §16): the ordered, limited children of a path,
// kept current from the server's `query` events. Each event lists every key in order and
// carries values only for children new to the result or changed; the client keeps the others'
// values from before. A `prev` that is not the last version seen (an event was lost), and a
// reconnect, make it subscribe again for a fresh result. Socket handling lives in realtime.ts.
import type { EventFailure } from '../events.js'
import type { Json } from '../json.js'
import type { LiveQuery, QueryItem } from '../query.js'
import { ContentdClientError } from './errors.js'
import { statusOf } from './subscription.js'

// Plain interfaces, the same shapes as shared/api/queries.ts's schemas (the SDK's module
// graph and its types stay free of zod).
export interface QueryResult { version: number, items: QueryItem[] }
export interface QuerySubscribeAck { ok: true, project: string, path: string, query: LiveQuery, version: number, items: QueryItem[] }
export interface QueryEventPayload { project: string, subscription: string, version: number, prev: number, items: Array<{ key: string, value?: Json }> }

/** The Socket.IO event of live queries (shared/api/queries.ts has it too; this module stays free of zod). */
export const QUERY_EVENT = 'query'

export type QueryListener = (items: QueryItem[], version: number) => void

export interface QuerySubscription {
  readonly project: string
  readonly path: string
  /** Resolves after the first result arrived; rejects when the server refused the query. */
  readonly ready: Promise<void>
  /** The current result, in order (empty before the first one). Treat it as read-only. */
  readonly items: QueryItem[]
  readonly version: number | undefined
  close (): void
}

export interface QuerySubscribeOptions {
  /** The query was refused or ended (access revoked); it is not retried after this. */
  onError?: (error: ContentdClientError) => void
}

/** Sends `subscribe { project, path, query }`; resolves with the ack. */
export type QueryRequester = () => Promise<QuerySubscribeAck | EventFailure>

export class ClientQuery implements QuerySubscription {
  items: QueryItem[] = []
  version: number | undefined
  readonly ready: Promise<void>
  private settle!: { resolve: () => void, reject: (e: ContentdClientError) => void }
  private state: 'waiting' | 'live' | 'closed' = 'waiting'
  private readonly listeners = new Set<{ listener: QueryListener, options: QuerySubscribeOptions }>()

  constructor (
    readonly project: string,
    readonly path: string,
    readonly query: LiveQuery,
    private readonly request: QueryRequester,
    private readonly closed: (query: ClientQuery) => void
  ) {
    this.ready = new Promise((resolve, reject) => { this.settle = { resolve, reject } })
    // Not every caller awaits ready; a refusal reaches them through onError.
    this.ready.catch(() => {})
  }

  /** Another listener of the same query on this client: it shares the result. */
  listen (listener: QueryListener, options: QuerySubscribeOptions): () => void {
    const entry = { listener, options }
    this.listeners.add(entry)
    if (this.state === 'live' && this.version !== undefined) {
      const version = this.version
      queueMicrotask(() => { if (this.listeners.has(entry)) listener(this.items, version) })
    }
    return () => {
      this.listeners.delete(entry)
      if (this.listeners.size === 0) this.close()
    }
  }

  /** Asks for a fresh result (first time, after a gap, after a reconnect). */
  resync (): void {
    if (this.state === 'closed') return
    void this.request().then(ack => {
      if (this.state === 'closed') return
      if (!ack.ok) { this.fail(new ContentdClientError(statusOf(ack.code), ack.code, ack.message)); return }
      this.state = 'live'
      this.items = ack.items.map(item => ({ key: item.key, value: item.value }))
      this.version = ack.version
      this.settle.resolve()
      this.notify()
    })
  }

  receive (event: QueryEventPayload): void {
    if (this.state !== 'live') return
    if (event.prev !== this.version) { this.state = 'waiting'; this.resync(); return }
    const before = new Map(this.items.map(item => [item.key, item.value]))
    const items: QueryItem[] = []
    for (const item of event.items) {
      const value: Json | undefined = 'value' in item ? item.value : before.get(item.key)
      // A key without a value we do not have: our result is not the server's; start again.
      if (value === undefined) { this.state = 'waiting'; this.resync(); return }
      items.push({ key: item.key, value })
    }
    this.items = items
    this.version = event.version
    this.notify()
  }

  fail (error: ContentdClientError): void {
    if (this.state === 'closed') return
    this.settle.reject(error)
    for (const { options } of [...this.listeners]) options.onError?.(error)
    this.finish()
  }

  close (): void {
    if (this.state === 'closed') return
    this.finish()
  }

  private finish (): void {
    this.state = 'closed'
    this.listeners.clear()
    this.closed(this)
  }

  private notify (): void {
    const version = this.version as number
    for (const { listener } of [...this.listeners]) listener(this.items, version)
  }
}
