// `GET …/content/events?path=P` (docs/design.md §15): the changes that touch one path as
// Server-Sent Events, each as a path subscription is sent it (shared/live-path.ts), without
// `subscription` or `prev` (SSE resumes by Last-Event-ID). Without a resume point the first
// event is `event: snapshot`, `id: <version>`, `data: {version, path, exists, value?}`; with
// Last-Event-ID (or ?since=) the stream first sends every retained change after it that
// touches the path, then goes live. The ordering, gaps and catch-up are the PathFollower's
// (services/path-follower.ts); the stream only frames. Writing, heartbeats, the slow-reader
// bounds (§13b), revocation, expiry and cleanup are the SSE scaffold's (sse-response.ts).
import type { Request, Response } from 'express'
import { ContentdError } from '../../shared/errors.js'
import { valueAtPath, type PathChange } from '../../shared/live-path.js'
import { dotSegments, formatPath, parsePath } from '../../shared/path.js'
import { requireKeyScope } from '../auth/rights.js'
import type { Identity } from '../services/identity.js'
import { PathFollower } from '../services/path-follower.js'
import type { EventRouteOptions } from './routes/events.js'
import { SseResponse, sseFrame, type SseCaller } from './sse-response.js'

/** The `path` query parameter: INVALID_PATH unless one valid dot path; checked against a narrowed key's paths. */
export function streamPathOf (req: Request, identity: Identity): string {
  const path = formatPath(parsePath(req.query.path))
  requireKeyScope(identity.key, { kind: 'read', path: dotSegments(path) })
  return path
}

const frameOf = (change: PathChange) => sseFrame(change.version, 'change', JSON.stringify(change))

/** `since`: Last-Event-ID or ?since=, already checked; null: start with a snapshot. */
export async function servePathStream (req: Request, res: Response, options: EventRouteOptions, caller: SseCaller, path: string, since: number | null): Promise<void> {
  const { project } = caller
  const sse = new SseResponse(req, res, options, caller, 'path event stream')
  // Following before anything is read: a change committed meanwhile is held, not missed.
  const follower = new PathFollower({
    feed: options.feed,
    store: options.store,
    project,
    path,
    pageBytes: options.changesPageBytes,
    send: change => sse.out.write(frameOf(change)),
    // The log no longer has what the client needs, or the store failed: the client reconnects
    // with Last-Event-ID and gets the plain HTTP answer.
    fail: () => sse.out.close()
  })
  sse.onEnd(() => follower.stop())

  let from: number
  try {
    // Errors with an HTTP answer (400 INVALID_VERSION, 410 HISTORY_EXPIRED, 404) come before the stream.
    if (since !== null) {
      await options.store.readPathEntries(project, path, since, 1)
      from = since
      if (!sse.open()) return
    } else {
      const snapshot = await options.store.readContent(project.id)
      if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
      const at = valueAtPath(snapshot.content, dotSegments(path))
      const data = at.exists ? { version: snapshot.version, path, exists: true, value: at.value } : { version: snapshot.version, path, exists: false }
      // Serialized now: the snapshot may be the store's live document.
      const frame = sseFrame(snapshot.version, 'snapshot', JSON.stringify(data))
      from = snapshot.version
      if (!sse.open()) return
      sse.out.write(frame)
    }
  } catch (error) {
    sse.out.abandon()
    throw error
  }
  sse.live(dotSegments(path))
  // With a resume point, the log may hold changes after it: the follower reads them first.
  if (!sse.isEnded) follower.start(from, since !== null)
}
