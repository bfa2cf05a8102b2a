// A live query as Server-Sent Events (docs/design.md §16): GET …/content/events?path=P&
// orderBy=&direction=&limit=&startAt=&endAt= sends `event: snapshot` (`{version, items}`, every
// item with its value), then `event: query` (`{version, items}`: every key in order, values
// only for children new to the result or changed) after each change that alters the result.
// A query has no log to resume from: a reconnect (Last-Event-ID or not) starts with a fresh
// snapshot. Writing, heartbeats, the slow-reader bounds (docs/design.md §13b), revocation,
// expiry and cleanup are the SSE scaffold's (sse-response.ts), as for every SSE stream.
import type { Request, Response } from 'express'
import type { QueryResult } from '../../shared/api/queries.js'
import { ContentdError } from '../../shared/errors.js'
import { formatPath, parsePath } from '../../shared/path.js'
import { parseQueryParams } from '../../shared/query.js'
import { requireKeyScope } from '../auth/rights.js'
import type { QueryEvent, QueryHub } from '../queries/query-hub.js'
import { sseQueryData } from '../queries/query-wire.js'
import { SseResponse, sseFrame, type SseCaller, type SseSettings } from './sse-response.js'

/**
 * `appRead`: [rules, issue 31] an app user's `.read` at the query's path (§17), checked before
 * anything is read.
 */
export async function streamQuery (req: Request, res: Response, options: SseSettings & { queries: QueryHub }, caller: SseCaller, appRead: ((path: readonly string[]) => Promise<unknown>) | null): Promise<void> {
  const { project, identity } = caller
  if (req.query.path === undefined) throw new ContentdError('INVALID_QUERY', 'a query needs ?path= naming the object or array whose children it orders')
  const segments = parsePath(req.query.path)
  const plan = parseQueryParams(req.query)
  requireKeyScope(identity.key, { kind: 'read', path: segments })
  if (appRead) await appRead(segments)

  const sse = new SseResponse(req, res, options, caller, 'live query stream')
  // Events heard before the snapshot is written follow it.
  let held: QueryEvent[] | null = []
  // `{version, items}`, the items serialized once for every subscriber of the result (query-wire.ts).
  const send = (event: QueryEvent) => sse.out.write(sseFrame(event.version, 'query', sseQueryData(event)))
  let open
  try {
    open = await options.queries.open(project.id, formatPath(segments), plan, event => { if (held) held.push(event); else send(event) })
  } catch (e) {
    sse.out.abandon()
    throw e
  }
  // At once if the client has gone while the result was being read.
  sse.onEnd(open.close)
  if (!sse.open()) return
  const snapshot: QueryResult = { version: open.version, items: open.items }
  sse.out.write(sseFrame(open.version, 'snapshot', JSON.stringify(snapshot)))
  for (const event of held) send(event)
  held = null
  sse.live(segments)
}
