// `GET …/content/events?path=P` (docs/design.md §15): the changes that touch one path as
// Server-Sent Events, each as a path subscription is sent it (shared/live-path.ts), without
// `subscription` or `prev` (SSE resumes by Last-Event-ID). Without a resume point the first
// event is `event: snapshot`, `id: <version>`, `data: {version, path, exists, value?}`; with
// Last-Event-ID (or ?since=) the stream first sends every retained change after it that
// touches the path, then goes live. The ordering, gaps and catch-up are the PathFollower's
// (services/path-follower.ts); the stream only frames, and drops a client that does not read
// (SOCKET_SEND_BUFFER, and the unsent budget shared with every stream, §13b).
import type { Request, Response } from 'express'
import { ContentdError, type ErrorBody } from '../../shared/errors.js'
import { valueAtPath, type PathChange } from '../../shared/live-path.js'
import { dotSegments, formatPath, parsePath } from '../../shared/path.js'
import { requireKeyScope } from '../auth/rights.js'
import type { AccessEvent } from '../services/access-events.js'
import { atTime } from '../services/expiry.js'
import type { Identity } from '../services/identity.js'
import { PathFollower } from '../services/path-follower.js'
import type { UnsentHolder } from '../services/unsent-budget.js'
import type { ProjectRecord } from '../store/types.js'
import type { EventRouteOptions } from './routes/events.js'

export interface PathStreamContext {
  req: Request
  res: Response
  project: ProjectRecord
  identity: Identity
  /** Last-Event-ID or ?since=, already checked; null: start with a snapshot. */
  since: number | null
  options: EventRouteOptions
  /** Opens the response as an event stream (events.ts). */
  open (req: Request, res: Response): void
  /** Whether an access event ends this stream (events.ts). */
  endsAccess (event: AccessEvent): boolean
  /** The `revoked` event's body for an access event that ends it (events.ts). */
  reasonOf (event: AccessEvent): ErrorBody
  /** [rules, issue 31] When the stream ends for its credential's expiry (an app token's own); default the session's or key's. */
  expiresAt?: string | null
  /** [rules, issue 31] An app user's stream: re-decided on each change of rules, ended with the refusal (events.ts watchRules). */
  rulesWatch?: ((end: (reason: ErrorBody) => void) => () => void) | null
}

/** The `path` query parameter: INVALID_PATH unless one valid dot path; checked against a narrowed key's paths. */
export function streamPathOf (req: Request, identity: Identity): string {
  const path = formatPath(parsePath(req.query.path))
  requireKeyScope(identity.key, { kind: 'read', path: dotSegments(path) })
  return path
}

const frameOf = (change: PathChange) => `id: ${change.version}\nevent: change\ndata: ${JSON.stringify(change)}\n\n`

export async function servePathStream (path: string, context: PathStreamContext): Promise<void> {
  const { req, res, project, identity, since, options } = context
  const stops: Array<() => void> = []
  let ended = false
  const end = (destroy: boolean) => {
    if (ended) return
    ended = true
    follower.stop()
    for (const stop of stops.splice(0)) stop()
    if (destroy) res.destroy()
    else res.end()
  }
  const write = (frame: string) => {
    if (ended) return
    res.write(frame)
    if (res.writableLength > options.bufferBytes) {
      options.metrics?.slowConsumers.inc()
      options.logger.warn({ bufferedBytes: res.writableLength, limit: options.bufferBytes }, 'dropping a path event stream that does not read what it is sent')
      end(true)
      return
    }
    options.unsentBudget.noted(holder)
  }
  // Following before anything is read: a change committed meanwhile is held, not missed.
  const follower = new PathFollower({
    feed: options.feed,
    store: options.store,
    project,
    path,
    pageBytes: options.changesPageBytes,
    send: change => write(frameOf(change)),
    // The log no longer has what the client needs, or the store failed: the client reconnects
    // with Last-Event-ID and gets the plain HTTP answer.
    fail: () => end(false)
  })
  const holder: UnsentHolder = {
    userId: identity.user.id,
    unsent: () => res.writableLength,
    close: (unsentBytes, scope) => {
      options.metrics?.slowConsumers.inc()
      options.logger.warn({ unsentBytes, scope }, `closing a path event stream: the ${scope}'s streams hold too much unsent data`)
      end(true)
    }
  }
  const stream = { close: () => end(false) }
  const untrack = options.openStreams.track(stream, { identity, projectId: project.id }, options.streamsPerUser)
  if (!untrack) { follower.stop(); throw new ContentdError('TOO_MANY_CONNECTIONS', `at most ${options.streamsPerUser} open streams per user`) }
  stops.push(untrack, options.unsentBudget.add(holder), options.feed.onAccess(event => {
    if (!context.endsAccess(event)) return
    write(`event: revoked\ndata: ${JSON.stringify(context.reasonOf(event))}\n\n`)
    end(false)
  }))
  res.on('close', () => end(false))

  let from: number
  try {
    // Errors with an HTTP answer (400 INVALID_VERSION, 410 HISTORY_EXPIRED, 404) come before the stream.
    if (since !== null) {
      await options.store.readPathEntries(project, path, since, 1)
      from = since
      context.open(req, res)
    } else {
      const snapshot = await options.store.readContent(project.id)
      if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
      const at = valueAtPath(snapshot.content, dotSegments(path))
      const data = at.exists ? { version: snapshot.version, path, exists: true, value: at.value } : { version: snapshot.version, path, exists: false }
      // Serialized now: the snapshot may be the store's live document.
      const frame = `id: ${snapshot.version}\nevent: snapshot\ndata: ${JSON.stringify(data)}\n\n`
      from = snapshot.version
      context.open(req, res)
      if (req.method !== 'HEAD') write(frame)
    }
  } catch (error) {
    follower.stop()
    for (const stop of stops.splice(0)) stop()
    ended = true
    throw error
  }
  if (req.method === 'HEAD') { end(false); return }
  const heartbeat = setInterval(() => write(': keep-alive\n\n'), options.heartbeatMs)
  heartbeat.unref()
  stops.push(() => clearInterval(heartbeat))
  // Not once the client has gone during the reads above: nothing would stop the watch then.
  if (context.rulesWatch && !ended) {
    stops.push(context.rulesWatch(reason => { write(`event: revoked\ndata: ${JSON.stringify(reason)}\n\n`); end(false) }))
  }
  const expiresAt = context.expiresAt ?? identity.session?.expiresAt ?? identity.key?.expiresAt ?? null
  if (expiresAt !== null) {
    // atTime, not setTimeout: a credential valid for more than ~24.8 days would overflow it.
    stops.push(atTime(Date.parse(expiresAt), () => { write(`event: revoked\ndata: ${JSON.stringify(new ContentdError('INVALID_TOKEN').toBody())}\n\n`); end(false) }))
  }
  // With a resume point, the log may hold changes after it: the follower reads them first.
  follower.start(from, since !== null)
}
