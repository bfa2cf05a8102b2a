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
import type { ContentdClientError } from './errors.js'
import { ResumableLive } from './resumable-live.js'

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

export class LivePathValue extends ResumableLive<Exclude<PathAck, EventFailure>, PathChangeEvent> implements PathSubscription {
  private state: PathValue = { exists: false }

  constructor (
    readonly project: string,
    readonly path: string,
    private readonly listener: PathListener,
    private readonly options: PathSubscribeOptions,
    requestPath: PathRequester,
    private readonly onClose: (value: LivePathValue) => void
  ) {
    super(requestPath, options.onError)
  }

  get value (): Json | undefined { return this.state.exists ? this.state.value : undefined }
  get exists (): boolean { return this.state.exists }

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

  protected answered (ack: Exclude<PathAck, EventFailure>): void {
    if ('changes' in ack) this.catchUp(ack.changes, ack.version)
    else this.start(ack.exists ? { exists: true, value: structuredClone(ack.value as Json) } : { exists: false }, ack.version)
  }

  private catchUp (changes: PathChangeEvent[], version: number): void {
    const held = this.applyMissed(changes)
    if (held === undefined) return
    // Nothing touched the path meanwhile: the value is current at the ack's version.
    this.currentVersion = version
    this.resumed += 1
    this.replay(held)
  }

  private start (state: PathValue, version: number): void {
    this.state = state
    this.currentVersion = version
    this.waiting = false
    this.taken += 1
    this.listener(this.value, version)
    this.settleReady()
    this.replayHeld()
  }

  protected ended (): void {
    this.onClose(this)
  }
}
