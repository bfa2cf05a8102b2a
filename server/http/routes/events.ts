// GET /api/:username/:projectSlug/content/events: the project's changes as Server-Sent Events
// (docs/design.md §9). With Last-Event-ID (or ?since=) it replays every retained change after
// that version, then goes live; with neither it starts with a snapshot. The stream ends when
// the caller's access ends (revocation, logout, expiry, removal, deletion), at shutdown, or
// when the client stops reading (it then resumes with Last-Event-ID).
//
// The framing is a few lines (`id:`, `event:`, `data:`, a comment for heartbeats), so no SSE
// library: what matters here, ordering, resume and the buffer cap, is change-stream.ts.
import type { Request, Response } from 'express'
import { ContentdError, isContentdError, type ErrorBody } from '../../../shared/errors.js'
import { requireKeyScope } from '../../auth/rights.js'
import type { ChangeFeed } from '../../feed/change-feed.js'
import type { Logger } from '../../logger.js'
import type { Metrics } from '../../observability/metrics.js'
import { atTime } from '../../services/expiry.js'
import type { AccessEvent } from '../../services/access-events.js'
import type { Identity } from '../../services/identity.js'
import type { OpenStreams } from '../../services/open-streams.js'
import type { Projects } from '../../services/projects.js'
import type { UnsentBudget, UnsentHolder } from '../../services/unsent-budget.js'
import type { ProjectRecord, Store } from '../../store/types.js'
import { identityOf } from '../auth-middleware.js'
import { context, projectOf } from '../context.js'
import type { AppRules } from '../../services/app-rules.js'
import { CLOCK_LEEWAY_S, type AppUser } from '../../services/app-tokens.js'
import { dotSegments } from '../../../shared/path.js'
import { versionParam } from '../history-query.js'
import { projectAccess } from '../project-access.js'
import type { RouteScope } from '../route-table.js'
import { ChangeStream } from '../change-stream.js'
import { wantsQuery } from '../../../shared/query.js'
import type { QueryHub } from '../../queries/query-hub.js'
import { streamQuery } from '../query-events.js'
import { servePathStream, streamPathOf } from '../path-change-stream.js'

export interface EventRouteOptions {
  store: Store
  projects: Projects
  /** Changes and access events, this node's and the other nodes' (server/feed/). */
  feed: Pick<ChangeFeed, 'subscribe' | 'onAccess'>
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
  /** Live queries (docs/design.md §16): `?path=&orderBy=&limit=` streams a query's result instead. */
  queries?: QueryHub | undefined
  /** CHANGES_PAGE_BYTES: a path stream's catch-up reads (docs/design.md §15). */
  changesPageBytes: number
  /** App users and rules (docs/design.md §17): with it, app tokens may stream. */
  appRules?: AppRules
}

/** `scope` is /api with an identity loader that also accepts ?access_token= (for EventSource). */
export function eventRoutes (scope: RouteScope, options: EventRouteOptions): void {
  scope.get('/:username/:projectSlug/content/events', projectAccess(options.projects, 'read', options.appRules), async (req, res) => {
    const project = projectOf(res)
    const { app } = context(res)
    const appRules = app ? options.appRules : undefined
    // [rules, issue 31] An app user streams under an identity of its own (the per-user stream
    // count and unsent budget), with .read at the stream's path (the root for the whole
    // project, §17), checked again whenever the project's rules change (rulesWatch).
    const identity = app && appRules ? appStreamIdentity(project, app) : identityOf(res)
    const appRead = app && appRules ? (path: readonly string[]) => appRules.requireLiveRead(project, app, path) : null
    // Noted before the first check: a change of rules heard before the stream watches is caught up with.
    const heardBefore = appRules?.changesHeard ?? 0
    const rulesWatch = app && appRules ? (path: readonly string[]) => watchRules(appRules, project, app, path, heardBefore) : null
    // An app user's stream ends when its token does, with the 60 s leeway (§17).
    const appExpiry = app?.expiresAt == null ? null : new Date(app.expiresAt + CLOCK_LEEWAY_S * 1000).toISOString()
    const expiresAt = appExpiry ?? identity.session?.expiresAt ?? identity.key?.expiresAt ?? null
    if (options.queries && wantsQuery(req.query)) {
      await streamQuery(req, res, { ...options, queries: options.queries, openStream: open, endsAccess, reasonOf, identity, expiresAt, appRead, rulesWatch })
      return
    }
    // ?path=: one path's changes (docs/design.md §15), open to a key narrowed to it.
    const path = req.query.path === undefined ? null : streamPathOf(req, identity)
    // A stream carries the whole content (snapshot, update and revert values): never for a
    // narrowed key, as for a Socket.IO subscription (docs/design.md §12).
    if (path === null) requireKeyScope(identity.key, { kind: 'whole' })
    const segments = path === null ? [] : dotSegments(path)
    if (appRead) await appRead(segments)
    const { store } = options
    // Last-Event-ID wins over ?since=: an EventSource reconnects to the URL it started with
    // (?since= and all) and says in the header how far it got.
    const lastEventId = req.headers['last-event-id']
    const since = lastEventId !== undefined
      ? versionParam('Last-Event-ID', lastEventId)
      : req.query.since === undefined ? null : versionParam('since', req.query.since)
    if (path !== null) {
      await servePathStream(path, { req, res, project, identity, since, options, open, endsAccess: event => endsAccess(event, identity, project), reasonOf, expiresAt, rulesWatch: rulesWatch && (end => rulesWatch(segments)(end)) })
      return
    }

    const stops: Array<() => void> = []
    const stopAll = () => { for (const stop of stops.splice(0)) stop() }
    const stream = new ChangeStream({
      store,
      project,
      res,
      bufferBytes: options.bufferBytes,
      onSlowConsumer: buffered => {
        options.metrics?.slowConsumers.inc()
        options.logger.warn({ bufferedBytes: buffered, limit: options.bufferBytes }, 'dropping a Server-Sent Events stream that does not read what it is sent')
      },
      onEnd: () => stopAll(),
      onWritten: () => options.unsentBudget.noted(holder)
    }, since ?? 0, since !== null)
    const holder: UnsentHolder = {
      userId: identity.user.id,
      unsent: () => res.writableLength,
      close: (unsentBytes, scope) => {
        options.metrics?.slowConsumers.inc()
        options.logger.warn({ unsentBytes, scope }, `closing a Server-Sent Events stream: the ${scope}'s streams hold too much unsent data`)
        stream.drop()
      }
    }
    const untrack = options.openStreams.track(stream, { identity, projectId: project.id }, options.streamsPerUser)
    if (!untrack) { stream.abandon(); throw new ContentdError('TOO_MANY_CONNECTIONS', `at most ${options.streamsPerUser} open streams per user`) }
    // Listening before anything is read: a change committed meanwhile is not missed.
    stops.push(
      untrack,
      options.unsentBudget.add(holder),
      options.feed.subscribe(project.id, change => stream.receive(change)),
      options.feed.onAccess(event => { if (endsAccess(event, identity, project)) stream.revoke(reasonOf(event)) })
    )

    let snapshotVersion: number | undefined
    try {
      // Errors that have an HTTP answer (400 INVALID_VERSION, 410 HISTORY_EXPIRED) are found
      // before the stream starts: a first look at the log, or the snapshot.
      const first = since === null ? await store.readContent(project.id) : await store.readChangesJson(project, since, 1)
      if (!first) throw new ContentdError('PROJECT_NOT_FOUND')
      if (stream.isEnded) return
      open(req, res)
      // HEAD (served by this GET route) gets the headers only: no stream without a body.
      if (req.method === 'HEAD') { res.end(); stream.abandon(); return }
      if ('content' in first) {
        // Written at once: the snapshot may be the store's live cached document.
        const json = first.json ?? JSON.stringify(first.content)
        res.write(`id: ${first.version}\nevent: snapshot\ndata: {"version":${first.version},"content":${json}}\n\n`)
        options.unsentBudget.noted(holder)
        snapshotVersion = first.version
      }
    } catch (e) {
      stream.abandon()
      throw e
    }
    if (rulesWatch) stops.push(rulesWatch([])(reason => stream.revoke(reason)))
    if (expiresAt !== null) stops.push(atTime(Date.parse(expiresAt), () => stream.revoke(new ContentdError('INVALID_TOKEN').toBody())))
    const heartbeat = setInterval(() => stream.heartbeat(), options.heartbeatMs)
    heartbeat.unref()
    stops.push(() => clearInterval(heartbeat))
    stream.start(snapshotVersion)
  })
}

function open (req: Request, res: Response): void {
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

function endsAccess (event: AccessEvent, identity: Identity, project: ProjectRecord): boolean {
  switch (event.kind) {
    case 'credential-revoked': return event.credentialHash === identity.credentialHash
    case 'member-removed': return event.projectId === project.id && event.userId === identity.user.id
    case 'project-deleted': return event.projectId === project.id
    // An app user's stream re-checks its .read (watchRules); nobody else's depends on rules.
    case 'rules-changed': return false
  }
}

function reasonOf (event: AccessEvent) {
  const code = event.kind === 'credential-revoked' ? 'INVALID_TOKEN' : event.kind === 'member-removed' ? 'FORBIDDEN' : 'PROJECT_NOT_FOUND'
  return new ContentdError(code).toBody()
}

/**
 * [rules, issue 31] An app user's stream is counted as a user of its own, `app:<project>:<sub>`
 * (never an account: no session, no key, nothing a revocation event names).
 */
function appStreamIdentity (project: ProjectRecord, app: AppUser): Identity {
  const id = `app:${project.id}:${app.sub}`
  return { user: { id, username: id, passwordHash: '', createdAt: '' }, session: null, key: null, credentialHash: id, app: { sub: app.sub } }
}

/**
 * [rules, issue 31] After each change of the project's rules or trust setting (on any node),
 * an app user's stream is decided again as when it opened: its token against the trust
 * setting, `.read` at its path on the current content. Refused: `end` with the refusal
 * (RULES_DENIED naming the path, or INVALID_TOKEN), sent as `event: revoked`.
 */
export function watchRules (appRules: AppRules, project: ProjectRecord, app: AppUser, path: readonly string[], heardBefore: number): (end: (reason: ErrorBody) => void) => () => void {
  return end => {
    const recheck = () => {
      appRules.recheckReadsOf(project).then(decide => decide(app, path)).catch((error: unknown) => {
        end(isContentdError(error) ? error.toBody() : new ContentdError('INTERNAL_ERROR').toBody())
      })
    }
    const stop = appRules.watch(projectId => { if (projectId === project.id) recheck() })
    // A change heard between the first check and now (any project's: checking again is cheap).
    if (appRules.changesHeard !== heardBefore) recheck()
    return stop
  }
}
