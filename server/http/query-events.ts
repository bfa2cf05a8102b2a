// A live query as Server-Sent Events (docs/design.md §16): GET …/content/events?path=P&
// orderBy=&direction=&limit=&startAt=&endAt= sends `event: snapshot` (`{version, items}`, every
// item with its value), then `event: query` (`{version, items}`: every key in order, values
// only for children new to the result or changed) after each change that alters the result.
// A query has no log to resume from: a reconnect (Last-Event-ID or not) starts with a fresh
// snapshot. The stream counts as one of the user's open streams, is re-checked and ended as
// every SSE stream is, and is closed when its client does not read (SOCKET_SEND_BUFFER and
// the shared unsent budget, docs/design.md §13b).
import type { Request, Response } from 'express'
import type { QueryResult } from '../../shared/api/queries.js'
import { ContentdError, type ErrorBody } from '../../shared/errors.js'
import { formatPath, parsePath } from '../../shared/path.js'
import { parseQueryParams } from '../../shared/query.js'
import { requireKeyScope } from '../auth/rights.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../observability/metrics.js'
import type { QueryEvent, QueryHub } from '../queries/query-hub.js'
import { sseQueryData } from '../queries/query-wire.js'
import type { AccessEvent } from '../services/access-events.js'
import { atTime } from '../services/expiry.js'
import type { Identity } from '../services/identity.js'
import type { ChangeFeed } from '../feed/change-feed.js'
import type { OpenStreams } from '../services/open-streams.js'
import type { UnsentBudget, UnsentHolder } from '../services/unsent-budget.js'
import type { ProjectRecord } from '../store/types.js'
import { identityOf } from './auth-middleware.js'
import { projectOf } from './context.js'

export interface QueryStreamOptions {
  queries: QueryHub
  feed: Pick<ChangeFeed, 'onAccess'>
  openStreams: OpenStreams
  unsentBudget: UnsentBudget
  heartbeatMs: number
  bufferBytes: number
  streamsPerUser: number
  logger: Logger
  metrics?: Metrics | undefined
  /** The SSE response head (events.ts), shared with change streams. */
  openStream: (req: Request, res: Response) => void
  endsAccess: (event: AccessEvent, identity: Identity, project: ProjectRecord) => boolean
  reasonOf: (event: AccessEvent) => ErrorBody
  /** The caller (events.ts: an app user's own identity); default the request's. */
  identity?: Identity
  /** [rules, issue 31] When the stream ends for its credential's expiry (an app token's own); default the session's or key's. */
  expiresAt?: string | null
  /** [rules, issue 31] An app user's `.read` at the query's path (§17), checked before anything is read. */
  appRead?: ((path: readonly string[]) => Promise<unknown>) | null
  /** [rules, issue 31] An app user's stream: re-decided on each change of rules, ended with the refusal (events.ts watchRules). */
  rulesWatch?: ((path: readonly string[]) => (end: (reason: ErrorBody) => void) => () => void) | null
}

export async function streamQuery (req: Request, res: Response, options: QueryStreamOptions): Promise<void> {
  const project = projectOf(res)
  const identity = options.identity ?? identityOf(res)
  if (req.query.path === undefined) throw new ContentdError('INVALID_QUERY', 'a query needs ?path= naming the object or array whose children it orders')
  const segments = parsePath(req.query.path)
  const plan = parseQueryParams(req.query)
  requireKeyScope(identity.key, { kind: 'read', path: segments })
  if (options.appRead) await options.appRead(segments)

  let ended = false
  const stops: Array<() => void> = []
  const end = (reason?: ErrorBody) => {
    if (ended) return
    ended = true
    for (const stop of stops.splice(0)) stop()
    if (reason && res.headersSent && !res.writableEnded) res.write(`event: revoked\ndata: ${JSON.stringify(reason)}\n\n`)
    if (res.headersSent) res.end()
  }
  const write = (text: string) => {
    if (ended) return
    res.write(text)
    options.unsentBudget.noted(holder)
    if (res.writableLength > options.bufferBytes) {
      options.metrics?.slowConsumers.inc()
      options.logger.warn({ bufferedBytes: res.writableLength, limit: options.bufferBytes }, 'dropping a live query stream that does not read what it is sent')
      end()
      res.destroy()
    }
  }
  const holder: UnsentHolder = {
    userId: identity.user.id,
    unsent: () => res.writableLength,
    close: () => { options.metrics?.slowConsumers.inc(); end(); res.destroy() }
  }
  const stream = { close: () => end() }
  const untrack = options.openStreams.track(stream, { identity, projectId: project.id }, options.streamsPerUser)
  if (!untrack) throw new ContentdError('TOO_MANY_CONNECTIONS', `at most ${options.streamsPerUser} open streams per user`)
  stops.push(untrack, options.unsentBudget.add(holder))
  stops.push(options.feed.onAccess(event => { if (options.endsAccess(event, identity, project)) end(options.reasonOf(event)) }))
  res.on('close', () => end())

  // Events heard before the snapshot is written follow it.
  let held: QueryEvent[] | null = []
  // `{version, items}`, the items serialized once for every subscriber of the result (query-wire.ts).
  const send = (event: QueryEvent) => write(`id: ${event.version}\nevent: query\ndata: ${sseQueryData(event)}\n\n`)
  let open
  try {
    open = await options.queries.open(project.id, formatPath(segments), plan, event => { if (held) held.push(event); else send(event) })
  } catch (e) {
    end()
    throw e
  }
  // The client may have gone while the result was being read: nothing is left to stop it then.
  if (ended) { open.close(); return }
  stops.push(open.close)
  options.openStream(req, res)
  if (req.method === 'HEAD') { res.end(); end(); return }
  const snapshot: QueryResult = { version: open.version, items: open.items }
  write(`id: ${open.version}\nevent: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`)
  for (const event of held) send(event)
  held = null
  if (options.rulesWatch) stops.push(options.rulesWatch(segments)(reason => end(reason)))
  const expiresAt = options.expiresAt ?? identity.session?.expiresAt ?? identity.key?.expiresAt ?? null
  if (expiresAt !== null) stops.push(atTime(Date.parse(expiresAt), () => end(new ContentdError('INVALID_TOKEN').toBody())))
  const heartbeat = setInterval(() => write(': keep-alive\n\n'), options.heartbeatMs)
  heartbeat.unref()
  stops.push(() => clearInterval(heartbeat))
}
