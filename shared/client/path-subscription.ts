// The live value at one path (docs/design.md §15): `project.ref('a.b').subscribe(listener)`.
// It starts from a path subscription's ack (the value, or nothing there) and applies the
// `change` events sent on that subscription with applyPathChange (shared/live-path.ts), the
// same rule the server's tests check. Each event names the version sent before it on the
// subscription (`prev`): an event whose `prev` is not the value's version means one was
// lost, and the value asks again. After a reconnect it resumes from its version (the ack then
// holds the changes, or a fresh snapshot of the path; HISTORY_EXPIRED: a snapshot).
// Socket handling lives in realtime.ts.
import type { EventFailure } from '../events.js'
import type { Json } from '../json.js'
import { applyPathChange, type PathChangeEvent, type PathValue } from '../live-path.js'
import { ContentdClientError } from './errors.js'
import { statusOf } from './subscription.js'

/** A path subscription's ack (docs/design.md §15). */
export type PathAck =
  | { ok: true, project: string, path: string, version: number, exists: boolean, value?: Json }
  | { ok: true, project: string, path: string, version: number, changes: PathChangeEvent[] }
  | EventFailure

/** Called with the value at the path (undefined when nothing is there) after the ack and after every change. */
export type PathListener = (value: Json | undefined, version: number) => void

export interface PathSubscribeOptions {
  /** Every change applied, in order (as sent: as it is, or projected onto the path). */
  onChange?: (change: PathChangeEvent) => void
  /** The subscription was refused or ended (403, 404, revoked); not retried after this. */
  onError?: (error: ContentdClientError) => void
}

export interface PathSubscription {
  readonly project: string
  readonly path: string
  /** Resolves after the first value arrived; rejects when refused. */
  readonly ready: Promise<void>
  /** The value at the path; undefined when nothing is there (or before the first ack). */
  readonly value: Json | undefined
  readonly exists: boolean
  /** The version of the last ack or change applied. */
  readonly version: number | undefined
  /** Snapshots taken (the first, and after gaps or expired history). */
  readonly snapshots: number
  /** Reconnects caught up from the log without a snapshot. */
  readonly resumes: number
  close (): void
}

export type PathRequester = (since?: number) => Promise<PathAck>

export class LivePathValue implements PathSubscription {
  private state: PathValue = { exists: false }
  private currentVersion: number | undefined
  private waiting = true
  private buffered: PathChangeEvent[] = []
  private generation = 0
  private closed = false
  private taken = 0
  private resumed = 0
  private retryTimer: ReturnType<typeof setTimeout> | undefined
  private settleReady!: (error?: ContentdClientError) => void
  readonly ready: Promise<void>

  constructor (
    readonly project: string,
    readonly path: string,
    private readonly listener: PathListener,
    private readonly options: PathSubscribeOptions,
    private readonly requestPath: PathRequester,
    private readonly onClose: (value: LivePathValue) => void
  ) {
    let settled = false
    this.ready = new Promise<void>((resolve, reject) => {
      this.settleReady = error => {
        if (settled) return
        settled = true
        if (error) reject(error)
        else resolve()
      }
    })
    this.ready.catch(() => {})
  }

  get value (): Json | undefined { return this.state.exists ? this.state.value : undefined }
  get exists (): boolean { return this.state.exists }
  get version (): number | undefined { return this.currentVersion }
  get snapshots (): number { return this.taken }
  get resumes (): number { return this.resumed }

  resync (): void { this.request(undefined) }

  /** After a reconnect: the changes since the value's version (or a snapshot). */
  resume (): void {
    if (this.waiting || this.currentVersion === undefined) { this.resync(); return }
    this.request(this.currentVersion)
  }

  receive (change: PathChangeEvent): void {
    if (this.closed) return
    if (this.waiting) { this.buffered.push(change); return }
    const version = this.currentVersion as number
    if (change.version <= version) return
    // A lost event: what was sent before this one is not what the value has.
    if (change.prev !== version) { this.resync(); return }
    try {
      this.state = applyPathChange(this.state, this.path, change)
    } catch {
      this.resync()
      return
    }
    this.currentVersion = change.version
    this.options.onChange?.(change)
    this.listener(this.value, change.version)
  }

  fail (error: ContentdClientError): void {
    if (this.closed) return
    this.end()
    this.settleReady(error)
    this.options.onError?.(error)
  }

  close (): void {
    if (this.closed) return
    this.end()
    this.settleReady(new ContentdClientError(0, 'REALTIME_ERROR', 'The subscription was closed'))
  }

  private request (since: number | undefined): void {
    if (this.closed) return
    const generation = ++this.generation
    clearTimeout(this.retryTimer)
    this.waiting = true
    this.buffered = []
    this.requestPath(since).then(ack => {
      if (generation !== this.generation || this.closed) return
      if (!ack.ok && ack.code === 'RATE_LIMITED') {
        this.retryTimer = setTimeout(() => { if (generation === this.generation) this.request(since) }, (ack.retryAfter ?? 1) * 1000)
        return
      }
      if (!ack.ok && ack.code === 'HISTORY_EXPIRED') { this.resync(); return }
      if (!ack.ok) { this.fail(new ContentdClientError(statusOf(ack.code), ack.code, ack.message)); return }
      if ('changes' in ack) this.catchUp(ack.changes, ack.version)
      else this.start(ack.exists ? { exists: true, value: structuredClone(ack.value as Json) } : { exists: false }, ack.version)
    }, (e: unknown) => {
      if (generation !== this.generation || this.closed) return
      this.fail(e instanceof ContentdClientError ? e : new ContentdClientError(0, 'REALTIME_ERROR', e instanceof Error ? e.message : String(e)))
    })
  }

  private catchUp (changes: PathChangeEvent[], version: number): void {
    const held = this.buffered
    this.buffered = []
    this.waiting = false
    const generation = this.generation
    for (const change of changes) {
      this.receive(change)
      if (generation !== this.generation) return
    }
    // Nothing touched the path meanwhile: the value is current at the ack's version.
    this.currentVersion = version
    this.resumed += 1
    for (const change of held.sort((a, b) => a.version - b.version)) this.receive(change)
  }

  private start (state: PathValue, version: number): void {
    this.state = state
    this.currentVersion = version
    this.waiting = false
    this.taken += 1
    this.listener(this.value, version)
    this.settleReady()
    const held = this.buffered.sort((a, b) => a.version - b.version)
    this.buffered = []
    for (const change of held) this.receive(change)
  }

  private end (): void {
    this.closed = true
    this.generation++
    clearTimeout(this.retryTimer)
    this.buffered = []
    this.onClose(this)
  }
}
