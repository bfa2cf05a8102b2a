// The response side of every Server-Sent Events stream (docs/design.md §9, §15, §16): the
// whole-project change stream (change-stream.ts), the path stream (path-change-stream.ts) and
// the live-query stream (query-events.ts) differ only in what they send; how it is sent, and
// what ends it, lives here once:
// - SseWriter: the frames (`id:`/`event:`/`data:`, a comment for heartbeats), the per-stream
//   bound on what a client that does not read may hold (SOCKET_SEND_BUFFER, docs/design.md
//   §13b: past it the stream is destroyed, and resumes with Last-Event-ID), `event: revoked`,
//   and telling its owner once when the stream ends, however it ends; a frame shared by many
//   streams (a live change) goes straight to the socket as one pre-framed chunk (sse-chunk.ts);
// - SseResponse: one request's stream around a writer: the response head, the per-user count
//   of open streams (OpenStreams, also shutdown and the access re-check), the unsent budget
//   shared with Socket.IO (SLOW_CLIENT_BYTES_PER_USER / SLOW_CLIENT_BYTES), access events,
//   the credential's expiry, an app user's rules, heartbeats, and the cleanup of all of them.
//
// The framing is a few lines, so no SSE library.
import type { Socket } from 'node:net'
import type { Request, Response } from 'express'
import { ContentdError, type ErrorBody } from '../../shared/errors.js'
import type { ChangeFeed } from '../feed/change-feed.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../observability/metrics.js'
import type { AccessEvent } from '../services/access-events.js'
import { atTime } from '../services/expiry.js'
import type { Identity } from '../services/identity.js'
import type { OpenStreams } from '../services/open-streams.js'
import { BacklogReports, type UnsentBudget, type UnsentHolder } from '../services/unsent-budget.js'
import type { ProjectRecord } from '../store/types.js'
import { directSocketOf, noteDirectBailout, SharedFrame, stillDirect, type DirectWriteBailout } from './sse-chunk.js'

export { SharedFrame } from './sse-chunk.js'

/** One event: its id (a version), its name, its data (JSON: no raw newline, so one `data:` line). */
export function sseFrame (id: number, event: string, data: string): string {
  return `id: ${id}\nevent: ${event}\ndata: ${data}\n\n`
}

export interface SseWriterOptions {
  res: Response
  /** SOCKET_SEND_BUFFER: what one stream may hold for a client that does not read. */
  bufferBytes: number
  /** Told once when the stream is dropped for not reading (for logs and metrics). */
  onSlowConsumer (bufferedBytes: number): void
  /** Told once when the stream ends, however it ends. */
  onEnd (): void
  /**
   * The unsent budget: after a write that leaves data unsent (and the next one after that),
   * after paced writes, and when the client has taken what was written.
   */
  onWritten? (): void
  /**
   * Told when a shared frame had to go through res.write because a Node internal the
   * direct write relies on moved (sse-chunk.ts); the stream works as before.
   */
  onDirectBailout? (reason: DirectWriteBailout): void
  /** False: shared frames go through res.write too (the tests compare both ways). */
  direct?: boolean
}

export class SseWriter {
  private ended = false
  /** Which writes are reported to the unsent budget (services/unsent-budget.ts). */
  private readonly reports = new BacklogReports()
  /** The socket a direct write left data in, waited on for its `drain` (res has none then). */
  private drainingSocket: Socket | null = null
  /** The socket shared frames were last written straight to (checked whole once, then stillDirect). */
  private direct: Socket | null = null
  private readonly bailOut: (reason: DirectWriteBailout) => void
  private readonly onSocketDrain = () => {
    this.drainingSocket = null
    if (!this.ended) this.options.onWritten?.()
  }

  constructor (private readonly options: SseWriterOptions) {
    options.res.on('close', () => this.finish())
    options.res.on('drain', () => { if (!this.ended) options.onWritten?.() })
    this.bailOut = reason => options.onDirectBailout?.(reason)
  }

  get isEnded (): boolean { return this.ended }

  /**
   * A live frame: past `bufferBytes` unsent, the stream is dropped (the client resumes). A
   * shared frame (the same for many streams) goes straight to the socket as one pre-framed
   * chunk when that sends the same bytes (sse-chunk.ts).
   */
  write (frame: string | Buffer | SharedFrame): void {
    if (this.ended) return
    const { res } = this.options
    let unsent: number
    const socket = frame instanceof SharedFrame ? this.directSocket() : null
    if (socket !== null) {
      if (!socket.write((frame as SharedFrame).chunk)) this.awaitDrain(socket)
      // All the stream holds: the response itself holds nothing then (sse-chunk.ts), so
      // this is res.writableLength, and a direct write is held to the same bound.
      unsent = socket.writableLength
    } else {
      res.write(frame instanceof SharedFrame ? frame.frame : frame)
      // What the response holds and what its socket holds.
      unsent = res.writableLength
    }
    if (unsent > this.options.bufferBytes) {
      this.options.onSlowConsumer(unsent)
      this.drop()
      return
    }
    // As a Socket.IO connection does (server/realtime/send-buffer.ts): a stream that had
    // nothing unsent when last reported and has nothing now is not reported; on a fan-out to
    // streams that read, that is every direct write (res.write corks the socket until the
    // next tick, so after it there is always something unsent, and it is reported).
    if (this.reports.due(unsent)) this.options.onWritten?.()
  }

  /**
   * A frame the client takes at its own pace (a snapshot, a catch-up page followed by
   * `drained()`): not held to the per-stream bound, but counted in the unsent budget.
   */
  writePaced (frame: string | Buffer): void {
    if (this.ended) return
    this.options.res.write(frame)
    this.reports.mark()
    this.options.onWritten?.()
  }

  /** Resolves once the client has taken what was written (or the stream ended). */
  async drained (): Promise<void> {
    const { res } = this.options
    // What a paced write holds until the client takes it counts in the budget too.
    if (!this.ended) { this.reports.mark(); this.options.onWritten?.() }
    if (this.ended || !res.writableNeedDrain) return
    await new Promise<void>(resolve => {
      const done = () => { res.off('drain', done); res.off('close', done); resolve() }
      res.on('drain', done)
      res.on('close', done)
    })
  }

  /** A comment line that keeps proxies from closing an idle stream. */
  heartbeat (): void {
    this.write(': keep-alive\n\n')
  }

  /** Access ended: tells the client why (`event: revoked`), then ends the stream. */
  revoke (reason: ErrorBody): void {
    if (this.ended) return
    this.write(`event: revoked\ndata: ${JSON.stringify(reason)}\n\n`)
    this.close()
  }

  /**
   * Ends the stream at once, for a client that does not read: destroy, not end, since ending
   * would wait for the client to read what is buffered. It resumes with Last-Event-ID.
   */
  drop (): void {
    if (this.ended) return
    this.options.res.destroy()
    this.finish()
  }

  /** Ends the response (shutdown, or a failure the client recovers from by reconnecting). */
  close (): void {
    if (this.ended) return
    this.options.res.end()
    this.finish()
  }

  /** The request failed before the stream began: stop, and leave the response to the error handler. */
  abandon (): void {
    this.finish()
  }

  /** The socket to write a shared frame's chunk to, or null for res.write (sse-chunk.ts). */
  private directSocket (): Socket | null {
    if (this.options.direct === false) return null
    const { res } = this.options
    const known = this.direct
    if (known !== null && stillDirect(res, known)) return known
    this.direct = directSocketOf(res, this.bailOut)
    return this.direct
  }

  /**
   * A direct write the socket could not take at once: its `drain` tells the budget, as the
   * response's does after res.write (the socket may serve another request after this one).
   */
  private awaitDrain (socket: Socket): void {
    if (this.drainingSocket !== null) return
    this.drainingSocket = socket
    socket.once('drain', this.onSocketDrain)
  }

  private finish (): void {
    if (this.ended) return
    this.ended = true
    this.drainingSocket?.off('drain', this.onSocketDrain)
    this.drainingSocket = null
    this.options.onEnd()
  }
}

/** What every stream of the events route shares (a part of EventRouteOptions). */
export interface SseSettings {
  /** Access events, this node's and the other nodes' (server/feed/). */
  feed: Pick<ChangeFeed, 'onAccess'>
  openStreams: OpenStreams
  /** SLOW_CLIENT_BYTES_PER_USER / SLOW_CLIENT_BYTES: shared with the Socket.IO connections. */
  unsentBudget: UnsentBudget
  heartbeatMs: number
  /** SOCKET_SEND_BUFFER: what one stream may hold for a client that does not read. */
  bufferBytes: number
  /** SOCKET_CONNECTIONS_PER_IDENTITY: open streams per user on this node (counted apart from sockets). */
  streamsPerUser: number
  logger: Logger
  metrics?: Metrics | undefined
}

/** Who streams, and what ends their access (decided once per request, events.ts). */
export interface SseCaller {
  identity: Identity
  project: ProjectRecord
  /** Whether an access event ends this caller's streams of this project. */
  endsAccess (event: AccessEvent): boolean
  /** The `revoked` event's body for an access event that ends it. */
  reasonOf (event: AccessEvent): ErrorBody
  /** When the credential expires (an app token's own, or the session's or key's); the stream then ends with INVALID_TOKEN. */
  expiresAt: string | null
  /** [rules, issue 31] An app user's stream: re-decided at its path on each change of rules, ended with the refusal (events.ts watchRules). */
  watchRules: ((path: readonly string[]) => (end: (reason: ErrorBody) => void) => () => void) | null
}

/**
 * One request's stream. Created before anything is read (so an access event during the
 * reads ends it); then `open()` once the first reads succeeded, what the stream has to send
 * first, and `live(path)`. Throws TOO_MANY_CONNECTIONS when the caller has too many open.
 */
export class SseResponse {
  readonly out: SseWriter
  private readonly stops: Array<() => void> = []

  /**
   * `kind` names the stream in logs ("path event stream"); `writerOf` builds the writer from
   * the options made here (a ChangeStream builds its own around them).
   */
  constructor (
    private readonly req: Request,
    private readonly res: Response,
    private readonly settings: SseSettings,
    private readonly caller: SseCaller,
    kind: string,
    writerOf: (options: SseWriterOptions) => SseWriter = options => new SseWriter(options)
  ) {
    const { logger, metrics, unsentBudget, bufferBytes } = settings
    const holder: UnsentHolder = {
      userId: caller.identity.user.id,
      unsent: () => res.writableLength,
      close: (unsentBytes, scope) => {
        metrics?.slowConsumers.inc()
        logger.warn({ unsentBytes, scope }, `closing a ${kind}: the ${scope}'s streams hold too much unsent data`)
        this.out.drop()
      }
    }
    this.out = writerOf({
      res,
      bufferBytes,
      onSlowConsumer: buffered => {
        metrics?.slowConsumers.inc()
        logger.warn({ bufferedBytes: buffered, limit: bufferBytes }, `dropping a ${kind} that does not read what it is sent`)
      },
      onEnd: () => { for (const stop of this.stops.splice(0)) stop() },
      onWritten: () => unsentBudget.noted(holder),
      onDirectBailout: reason => noteDirectBailout(reason, logger, metrics)
    })
    const untrack = settings.openStreams.track({ close: () => this.end() }, { identity: caller.identity, projectId: caller.project.id }, settings.streamsPerUser)
    if (!untrack) {
      this.out.abandon()
      throw new ContentdError('TOO_MANY_CONNECTIONS', `at most ${settings.streamsPerUser} open streams per user`)
    }
    this.stops.push(
      untrack,
      unsentBudget.add(holder),
      settings.feed.onAccess(event => { if (caller.endsAccess(event)) this.end(caller.reasonOf(event)) })
    )
  }

  get isEnded (): boolean { return this.out.isEnded }

  /** Runs `stop` when the stream ends (at once if it has). */
  onEnd (stop: () => void): void {
    if (this.out.isEnded) stop()
    else this.stops.push(stop)
  }

  /**
   * Sends the response head. False, with nothing more to send, when the stream has already
   * ended (the client went, or access ended, during the first reads) or for HEAD (served by
   * the GET route: the headers only).
   */
  open (): boolean {
    if (this.out.isEnded) return false
    this.head()
    if (this.req.method === 'HEAD') {
      this.res.end()
      this.out.abandon()
      return false
    }
    return true
  }

  /**
   * After what the stream sends first: heartbeats, and the end at the credential's expiry
   * and (an app user's) at a change of rules that refuses `.read` at `path`.
   */
  live (path: readonly string[]): void {
    const { watchRules, expiresAt } = this.caller
    if (watchRules && !this.out.isEnded) this.onEnd(watchRules(path)(reason => this.out.revoke(reason)))
    // atTime, not setTimeout: a credential valid for more than ~24.8 days would overflow it.
    if (expiresAt !== null && !this.out.isEnded) {
      this.onEnd(atTime(Date.parse(expiresAt), () => this.out.revoke(new ContentdError('INVALID_TOKEN').toBody())))
    }
    if (this.out.isEnded) return
    const heartbeat = setInterval(() => this.out.heartbeat(), this.settings.heartbeatMs)
    heartbeat.unref()
    this.onEnd(() => clearInterval(heartbeat))
  }

  /**
   * Access ended (with the reason, sent as `event: revoked`), or shutdown (without). Before
   * the head was sent (during the first reads) the head goes first, so an EventSource sees
   * an event stream end, not an answer it cannot read.
   */
  private end (reason?: ErrorBody): void {
    if (this.out.isEnded) return
    if (!this.res.headersSent) this.head()
    if (reason) this.out.revoke(reason)
    else this.out.close()
  }

  private head (): void {
    const { req, res } = this
    res.status(200)
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8')
    // no-transform: a compressing proxy would hold events back to fill its buffers.
    res.setHeader('Cache-Control', 'no-cache, no-transform')
    res.setHeader('Connection', 'keep-alive')
    // nginx buffers responses unless told not to.
    res.setHeader('X-Accel-Buffering', 'no')
    req.socket.setNoDelay(true)
    res.flushHeaders()
  }
}
