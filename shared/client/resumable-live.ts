// What a whole-project live copy (subscription.ts) and a path's live value
// (path-subscription.ts) share: asking the server for a start (a snapshot, or with `since`
// the changes after a version), holding back changes that arrive meanwhile, asking again
// after RATE_LIMITED's retryAfter, a snapshot when the history expired, and ending once on a
// refusal or close(). Each subclass says what an accepted ack and a change do to its value.
import type { EventFailure } from '../events.js'
import { ERRORS, type ErrorCode } from '../errors.js'
import { ContentdClientError } from './errors.js'

/** Socket.IO answers carry a code but no status; give errors the status HTTP would have. */
export function statusOf (code: string): number {
  return Object.prototype.hasOwnProperty.call(ERRORS, code) ? ERRORS[code as ErrorCode].status : 0
}

export abstract class ResumableLive<Ack extends { ok: true }, Change extends { version: number }> {
  protected currentVersion: number | undefined
  /** Waiting for an answer: changes are held back in `buffered` until it comes. */
  protected waiting = true
  protected buffered: Change[] = []
  /** Bumped by every request and by end(): an answer to an older request is dropped. */
  protected generation = 0
  protected closed = false
  protected taken = 0
  protected resumed = 0
  private retryTimer: ReturnType<typeof setTimeout> | undefined
  protected settleReady!: (error?: ContentdClientError) => void
  readonly ready: Promise<void>

  constructor (
    private readonly ask: (since?: number) => Promise<Ack | EventFailure>,
    private readonly onError: ((error: ContentdClientError) => void) | undefined
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
    // Nobody has to await `ready`; an unobserved refusal must not crash the process.
    this.ready.catch(() => {})
  }

  get version (): number | undefined { return this.currentVersion }
  get snapshots (): number { return this.taken }
  get resumes (): number { return this.resumed }

  abstract receive (change: Change): void
  /** An accepted answer of the current request. */
  protected abstract answered (ack: Ack): void
  /** Told once when the subscription ends (closed or failed). */
  protected abstract ended (): void

  /** Takes a (new) snapshot; changes that arrive meanwhile are held back and replayed. */
  resync (): void {
    this.request(undefined)
  }

  /**
   * After a reconnect: asks only for the changes missed since the value's version; falls back
   * to a snapshot when the server no longer has them (HISTORY_EXPIRED) or there is none yet.
   */
  resume (): void {
    if (this.waiting || this.currentVersion === undefined) { this.resync(); return }
    this.request(this.currentVersion)
  }

  /** Ends the subscription with an error (refused, revoked); no retries after this. */
  fail (error: ContentdClientError): void {
    if (this.closed) return
    this.end()
    this.settleReady(error)
    this.onError?.(error)
  }

  close (): void {
    if (this.closed) return
    this.end()
    this.settleReady(new ContentdClientError(0, 'REALTIME_ERROR', 'The subscription was closed'))
  }

  protected request (since: number | undefined): void {
    if (this.closed) return
    const generation = ++this.generation
    clearTimeout(this.retryTimer)
    this.waiting = true
    this.buffered = []
    this.ask(since).then(ack => {
      // A later resync or close() superseded this request.
      if (generation !== this.generation || this.closed) return
      if (!ack.ok && ack.code === 'RATE_LIMITED') {
        this.retryTimer = setTimeout(() => { if (generation === this.generation) this.request(since) }, (ack.retryAfter ?? 1) * 1000)
        return
      }
      if (!ack.ok && ack.code === 'HISTORY_EXPIRED') { this.resync(); return }
      if (!ack.ok) { this.fail(new ContentdClientError(statusOf(ack.code), ack.code, ack.message)); return }
      this.answered(ack)
    }, (e: unknown) => {
      if (generation !== this.generation || this.closed) return
      this.fail(e instanceof ContentdClientError ? e : new ContentdClientError(0, 'REALTIME_ERROR', e instanceof Error ? e.message : String(e)))
    })
  }

  /** The changes held back while waiting, applied in version order. */
  protected replayHeld (): void {
    const held = this.buffered
    this.buffered = []
    this.replay(held)
  }

  /**
   * A resume's changes, applied in order like live ones. Returns the changes held back while
   * waiting (to replay once the subclass has settled its version), or undefined when one of
   * them made receive() ask for a snapshot (a gap): the held ones went with the old request.
   */
  protected applyMissed (changes: Change[]): Change[] | undefined {
    const held = this.buffered
    this.buffered = []
    this.waiting = false
    const generation = this.generation
    for (const change of changes) {
      this.receive(change)
      if (generation !== this.generation) return undefined
    }
    return held
  }

  protected replay (changes: Change[]): void {
    for (const change of changes.sort((a, b) => a.version - b.version)) this.receive(change)
  }

  private end (): void {
    this.closed = true
    this.generation++
    clearTimeout(this.retryTimer)
    this.buffered = []
    this.ended()
  }
}
