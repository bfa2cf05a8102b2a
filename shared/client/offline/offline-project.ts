// One project, offline first (docs/design.md §19). Every write gets its Idempotency-Key when
// it is made, enters the durable outbox (outbox.ts) and the local copy (local-view.ts) at
// once, and is sent in order whenever the server can be reached; its promise resolves when
// the server acknowledges it. The local copy is the server's state (a live subscription,
// resumed from the kept copy's version, §9) plus the pending writes, rebased on every change
// that comes in, and kept in the store at most once a second while it changes, so the next
// start shows it before any network answer.
//
// Exactly once: a write leaves the outbox only after the server answered it; a write sent
// again (after a lost answer, a reload, a day offline) carries the same key, and the server
// answers it from the key's record or, once that expired, from the change log (§19).
//
// While a write is on its way, changes that come in are held back from the view until its
// answer: the server's change for it may arrive before the answer, and the view must not
// count it twice.
import type { ChangeEntry } from '../../events.js'
import type { Json, JsonObject } from '../../json.js'
import { ContentdClientError } from '../errors.js'
import type { Http } from '../http.js'
import { versionOf } from '../http.js'
import type { WriteOptions, WriteResult } from '../project.js'
import type { LiveContent } from '../realtime.js'
import type { ContentListener, SubscribeOptions, Subscription } from '../subscription.js'
import { rebase } from './local-view.js'
import { DEFAULT_OUTBOX_LIMITS, Outbox, type QueuedWrite } from './outbox.js'
import type { OfflineStore } from './storage.js'

/** What a refused write is reported with: the write as queued, and the changes after its base version (§9). */
export interface RejectedWrite {
  write: QueuedWrite
  changes: ChangeEntry[]
}

export interface OfflineOptions {
  /** Where the outbox and the copy are kept: indexedDbStore(), directoryStore(path) or memoryStore(). */
  store: OfflineStore
  /** A queued write the server refused (failed test or If-Match, schema, rules): removed and undone, reported here. */
  onRejected?: (error: ContentdClientError, rejected: RejectedWrite) => void
  /** Writes the outbox holds at most (default 10000); past it a write throws OUTBOX_FULL. */
  maxWrites?: number
  /** Bytes of JSON the outbox holds at most (default 8 MiB); past it a write throws OUTBOX_FULL. */
  maxBytes?: number
}

interface ServerState { content: JsonObject, version: number }
interface KeptCopy { version: number, content: JsonObject, savedAt: string }

const SAVE_INTERVAL_MS = 1000
const RETRY_MIN_MS = 250
const RETRY_MAX_MS = 10_000
/** Pages of the change log read for one refusal's report (CHANGES_PAGE_BYTES each at most). */
const REPORT_PAGES = 10

/** Worth sending again later: the write may not have run, or its answer was lost; never a refusal. */
function transient (error: unknown): boolean {
  if (!(error instanceof ContentdClientError)) return true
  if (error.code === 'NETWORK_ERROR' || error.code === 'UNEXPECTED_RESPONSE' || error.code === 'IDEMPOTENCY_IN_PROGRESS') return true
  return error.status >= 500 || error.status === 401 || error.status === 408 || error.status === 429
}

function newKey (): string {
  if (typeof globalThis.crypto?.randomUUID === 'function') return globalThis.crypto.randomUUID()
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('')
}

export class OfflineProject {
  /** Resolves once the outbox and the kept copy were read (the first view, if any, is shown then). */
  readonly loaded: Promise<void>
  private readonly outbox: Outbox
  private readonly copyKey: string
  /** The server state the view is built on; held while a write is on its way. */
  private basis: ServerState | undefined
  /** The newest server state (the subscription's), possibly ahead of `basis`. */
  private latest: ServerState | undefined
  private view: JsonObject | undefined
  private readonly listeners = new Set<ContentListener>()
  /** The subscribers' onChange and onError, told of the server subscription's changes and failure. */
  private readonly subscriberOptions = new Set<SubscribeOptions>()
  /** Acknowledged writes whose change the server state has not shown yet. */
  private acknowledged: Array<{ write: QueuedWrite, version: number }> = []
  private readonly waiters = new Map<number, { resolve: (result: WriteResult) => void, reject: (error: unknown) => void }>()
  private inFlight: QueuedWrite | null = null
  private sending = false
  private retryMs = RETRY_MIN_MS
  private retryTimer: ReturnType<typeof setTimeout> | undefined
  private saveTimer: ReturnType<typeof setTimeout> | undefined
  private lastSave = 0
  private saving: Promise<void> = Promise.resolve()
  private subscription: Subscription | undefined
  private closed = false
  private readonly stopListening: Array<() => void> = []
  private readonly emptyWaiters: Array<() => void> = []

  constructor (
    readonly ref: string,
    private readonly http: Http,
    private readonly live: LiveContent,
    private readonly base: string,
    private readonly options: OfflineOptions
  ) {
    this.outbox = new Outbox(options.store, `outbox/${ref}/`, {
      maxWrites: options.maxWrites ?? DEFAULT_OUTBOX_LIMITS.maxWrites, maxBytes: options.maxBytes ?? DEFAULT_OUTBOX_LIMITS.maxBytes
    })
    this.copyKey = `copy/${ref}`
    this.loaded = this.load()
    this.loaded.catch(() => {})
  }

  private async load (): Promise<void> {
    const [, kept] = await Promise.all([this.outbox.load(), this.options.store.get(this.copyKey) as Promise<KeptCopy | undefined>])
    if (this.closed) return
    if (kept) {
      this.basis = { content: kept.content, version: kept.version }
      this.recompute()
    }
    // The server's state from here on: resumed from the kept copy's version when there is one.
    this.subscription = this.live.subscribe(this.ref, (content, version) => this.serverChanged(content, version), {
      ...(kept ? { from: { content: kept.content, version: kept.version } } : {}),
      onChange: change => { for (const options of [...this.subscriberOptions]) options.onChange?.(change) },
      onError: error => { for (const options of [...this.subscriberOptions]) options.onError?.(error) }
    })
    this.stopListening.push(this.live.onConnection(state => { if (state === 'online') this.sendNow() }))
    const target = globalThis as { addEventListener?: (event: string, listener: () => void) => void, removeEventListener?: (event: string, listener: () => void) => void }
    if (typeof target.addEventListener === 'function') {
      const online = () => this.sendNow()
      target.addEventListener('online', online)
      this.stopListening.push(() => target.removeEventListener?.('online', online))
    }
    this.kick()
  }

  /** The local copy (server state + pending writes); undefined before anything is known. */
  get content (): JsonObject | undefined { return this.view }
  /** The server version the local copy is based on. */
  get version (): number | undefined { return this.basis?.version }
  /** Writes not yet acknowledged. */
  get pending (): number { return this.outbox.pending.length }

  /** Queues a write (durably), applies it to the local copy, and resolves when the server acknowledged it. */
  async enqueue (method: 'POST' | 'PATCH', suffix: string, body: Json, options: WriteOptions = {}): Promise<WriteResult> {
    if (this.closed) throw new ContentdClientError(0, 'NETWORK_ERROR', 'the client was closed')
    await this.loaded
    const write = await this.outbox.add({
      key: options.idempotencyKey ?? newKey(),
      method,
      suffix,
      body,
      ...(options.ifVersion === undefined ? {} : { ifVersion: options.ifVersion }),
      ...(this.basis === undefined ? {} : { baseVersion: this.basis.version }),
      at: new Date().toISOString()
    })
    const answered = new Promise<WriteResult>((resolve, reject) => { this.waiters.set(write.seq, { resolve, reject }) })
    this.recompute()
    this.kick()
    return answered
  }

  /** The local copy, now and after every change (a local write, or the server's). */
  subscribe (onContent: ContentListener, options: SubscribeOptions = {}): Subscription {
    this.listeners.add(onContent)
    // Its own object: one listener's options are removed with its close() alone.
    const own = { ...options }
    this.subscriberOptions.add(own)
    const view = () => this.view
    const basis = () => this.basis
    const live = () => this.subscription
    let ready: Promise<void>
    if (this.view && this.basis) {
      const [content, version] = [this.view, this.basis.version]
      queueMicrotask(() => { if (this.listeners.has(onContent)) onContent(content, version) })
      ready = Promise.resolve()
    } else {
      ready = new Promise<void>(resolve => {
        const first: ContentListener = () => { this.listeners.delete(first); resolve() }
        this.listeners.add(first)
      })
    }
    return {
      project: this.ref,
      ready,
      get content () { return view() },
      get version () { return basis()?.version },
      get snapshots () { return live()?.snapshots ?? 0 },
      get resumes () { return live()?.resumes ?? 0 },
      close: () => { this.listeners.delete(onContent); this.subscriberOptions.delete(own) }
    }
  }

  /** Resolves once the outbox is empty (every write answered). */
  flush (): Promise<void> {
    if (this.outbox.pending.length === 0) return Promise.resolve()
    return new Promise(resolve => { this.emptyWaiters.push(resolve) })
  }

  /** Stops sending and listening, and keeps the copy as it is now. The outbox stays in the store. */
  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.retryTimer)
    clearTimeout(this.saveTimer)
    for (const stop of this.stopListening) stop()
    this.subscription?.close()
    await this.loaded.catch(() => {})
    await this.save()
  }

  private serverChanged (content: JsonObject, version: number): void {
    this.latest = { content: structuredClone(content), version }
    if (this.inFlight === null) this.takeLatest()
    this.scheduleSave()
  }

  private takeLatest (): void {
    if (!this.latest) return
    this.basis = this.latest
    this.acknowledged = this.acknowledged.filter(a => a.version > (this.basis as ServerState).version)
    this.recompute()
  }

  private recompute (): void {
    if (!this.basis) return
    const pending = [...this.acknowledged.map(a => a.write), ...this.outbox.pending]
    this.view = rebase(this.basis.content, pending).content
    for (const listener of [...this.listeners]) listener(this.view, this.basis.version)
  }

  private sendNow (): void {
    this.retryMs = RETRY_MIN_MS
    clearTimeout(this.retryTimer)
    this.retryTimer = undefined
    this.kick()
  }

  /** Sends the outbox in order, one write at a time, until it is empty or the server cannot be reached. */
  private kick (): void {
    if (this.sending || this.closed || this.retryTimer !== undefined) return
    this.sending = true
    void this.sendAll().finally(() => { this.sending = false })
  }

  private async sendAll (): Promise<void> {
    await this.loaded
    for (;;) {
      if (this.closed) return
      const write = this.outbox.pending[0]
      if (!write) {
        for (const resolve of this.emptyWaiters.splice(0)) resolve()
        return
      }
      this.inFlight = write
      try {
        const result = await this.send(write)
        this.retryMs = RETRY_MIN_MS
        await this.outbox.remove(write)
        if (result.version !== undefined && (this.latest?.version ?? -1) < result.version) this.acknowledged.push({ write, version: result.version })
        this.inFlight = null
        this.takeLatest()
        this.recompute()
        this.settle(write, waiter => waiter.resolve(result))
      } catch (error) {
        this.inFlight = null
        if (transient(error)) {
          this.takeLatest()
          this.retryTimer = setTimeout(() => { this.retryTimer = undefined; this.kick() }, this.retryMs)
          this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS)
          return
        }
        await this.refused(write, error as ContentdClientError)
      }
    }
  }

  private async send (write: QueuedWrite): Promise<WriteResult> {
    const headers: Record<string, string> = { 'idempotency-key': write.key }
    if (write.ifVersion !== undefined) headers['if-match'] = `"${write.ifVersion}"`
    if (write.method === 'PATCH') headers['content-type'] = 'application/json-patch+json'
    const result = await this.http.request<{ message: string }>(write.method, this.base + write.suffix, { body: write.body, headers })
    return { message: result.body.message, version: versionOf(result.headers), replayed: result.headers.get('idempotent-replayed') === 'true' }
  }

  /** A refusal: out of the outbox, out of the view, reported with the changes after its base version. */
  private async refused (write: QueuedWrite, error: ContentdClientError): Promise<void> {
    await this.outbox.remove(write)
    this.takeLatest()
    this.recompute()
    const changes = await this.changesSince(write.baseVersion ?? 0)
    this.settle(write, waiter => waiter.reject(error))
    try {
      this.options.onRejected?.(error, { write, changes })
    } catch {
      // The app's handler failing must not stop the outbox.
    }
  }

  private async changesSince (since: number): Promise<ChangeEntry[]> {
    const changes: ChangeEntry[] = []
    try {
      for (let page = 0; page < REPORT_PAGES; page++) {
        const body = (await this.http.request<{ changes: ChangeEntry[], more: boolean }>('GET', `${this.base}/changes?since=${since}&limit=1000`)).body
        changes.push(...body.changes)
        const last = body.changes.at(-1)
        if (!body.more || !last) break
        since = last.version
      }
    } catch {
      // The report goes out with what could be read (none when the log has moved past it).
    }
    return changes
  }

  private settle (write: QueuedWrite, how: (waiter: { resolve: (result: WriteResult) => void, reject: (error: unknown) => void }) => void): void {
    const waiter = this.waiters.get(write.seq)
    if (!waiter) return
    this.waiters.delete(write.seq)
    how(waiter)
  }

  /** Keeps the server's state in the store at most once a second while it changes. */
  private scheduleSave (): void {
    if (this.saveTimer !== undefined || this.closed) return
    const wait = Math.max(0, this.lastSave + SAVE_INTERVAL_MS - Date.now())
    this.saveTimer = setTimeout(() => { this.saveTimer = undefined; void this.save() }, wait)
  }

  private save (): Promise<void> {
    const state = this.latest ?? this.basis
    if (!state) return this.saving
    this.lastSave = Date.now()
    const copy: KeptCopy = { version: state.version, content: state.content, savedAt: new Date().toISOString() }
    // One save at a time, in order: an older copy never lands after a newer one.
    this.saving = this.saving.then(() => this.options.store.put(this.copyKey, copy as unknown as Json)).catch(() => {})
    return this.saving
  }
}
