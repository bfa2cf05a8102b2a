// GET /api/:username/:projectSlug/content/events: the project's changes as Server-Sent Events
// (docs/design.md §9). With Last-Event-ID (or ?since=) it replays every retained change after
// that version, then goes live; with neither it starts with a snapshot. The stream ends when
// the caller's access ends (revocation, logout, expiry, removal, deletion), at shutdown, or
// when the client stops reading (it then resumes with Last-Event-ID).
//
// What every stream shares (the response head, writing, heartbeats, the slow-reader bounds,
// revocation and expiry, cleanup) is sse-response.ts; ordering and resume, change-stream.ts.
import { ContentdError, isContentdError, type ErrorBody } from '../../../shared/errors.js'
import { requireKeyScope } from '../../auth/rights.js'
import type { ChangeFeed } from '../../feed/change-feed.js'
import type { AccessEvent } from '../../services/access-events.js'
import type { Identity } from '../../services/identity.js'
import type { Projects } from '../../services/projects.js'
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
import { SseResponse, sseFrame, type SseCaller, type SseSettings } from '../sse-response.js'

export interface EventRouteOptions extends SseSettings {
  store: Store
  projects: Projects
  /** Changes and access events, this node's and the other nodes' (server/feed/). */
  feed: Pick<ChangeFeed, 'subscribe' | 'onAccess'>
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
    // project, §17), checked again whenever the project's rules change (watchRules).
    const identity = app && appRules ? appStreamIdentity(project, app) : identityOf(res)
    const appRead = app && appRules ? (path: readonly string[]) => appRules.requireLiveRead(project, app, path) : null
    // Noted before the first check: a change of rules heard before the stream watches is caught up with.
    const heardBefore = appRules?.changesHeard ?? 0
    // An app user's stream ends when its token does, with the 60 s leeway (§17).
    const appExpiry = app?.expiresAt == null ? null : new Date(app.expiresAt + CLOCK_LEEWAY_S * 1000).toISOString()
    const caller: SseCaller = {
      identity,
      project,
      endsAccess: event => endsAccess(event, identity, project),
      reasonOf,
      expiresAt: appExpiry ?? identity.session?.expiresAt ?? identity.key?.expiresAt ?? null,
      watchRules: app && appRules ? path => watchRules(appRules, project, app, path, heardBefore) : null
    }
    if (options.queries && wantsQuery(req.query)) {
      await streamQuery(req, res, { ...options, queries: options.queries }, caller, appRead)
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
      await servePathStream(req, res, options, caller, path, since)
      return
    }

    // The ChangeStream writes through the scaffold's writer, made with the scaffold's options.
    let stream!: ChangeStream
    const sse = new SseResponse(req, res, options, caller, 'Server-Sent Events stream', out => {
      stream = new ChangeStream({ ...out, store, project }, since ?? 0, since !== null)
      return stream.out
    })
    // Listening before anything is read: a change committed meanwhile is not missed.
    sse.onEnd(options.feed.subscribe(project.id, change => stream.receive(change)))

    let snapshotVersion: number | undefined
    try {
      // Errors that have an HTTP answer (400 INVALID_VERSION, 410 HISTORY_EXPIRED) are found
      // before the stream starts: a first look at the log, or the snapshot.
      const first = since === null ? await store.readContent(project.id) : await store.readChangesJson(project, since, 1)
      if (!first) throw new ContentdError('PROJECT_NOT_FOUND')
      if (!sse.open()) return
      if ('content' in first) {
        // Written at once: the snapshot may be the store's live cached document.
        const json = first.json ?? JSON.stringify(first.content)
        sse.out.writePaced(sseFrame(first.version, 'snapshot', `{"version":${first.version},"content":${json}}`))
        snapshotVersion = first.version
      }
    } catch (e) {
      sse.out.abandon()
      throw e
    }
    sse.live([])
    stream.start(snapshotVersion)
  })
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
