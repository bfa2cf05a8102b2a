// The content endpoints: get (now or at a past version), update, the path operations of the
// shared operation table, the change log and revert (docs/design.md §9), batch and JSON Patch
// (§10). Each write validates its body, hands one operation to the store with the caller as
// its actor, and answers with its message and the new version as ETag; every write honours
// Idempotency-Key (idempotency.ts).
import type { ResponseBody } from '../../../shared/api/index.js'
import type { Request, RequestHandler, Response } from 'express'
import { BATCH_MESSAGE } from '../../../shared/batch.js'
import { parseBatch } from '../../../shared/batch-request.js'
import type { ContentOperation } from '../../../shared/compound.js'
import { ContentdError } from '../../../shared/errors.js'
import type { Json, JsonObject } from '../../../shared/json.js'
import { parsePatch, PATCH_MEDIA_TYPE, PATCH_MESSAGE } from '../../../shared/json-patch.js'
import { PATH_OPERATION_NAMES, PATH_OPERATIONS, pathOperationFrom, revertMessage, UPDATE_MESSAGE, updateOperationFrom } from '../../../shared/operation-table.js'
import { getAt } from '../../../shared/operations.js'
import { dotSegments, formatPath, parsePath } from '../../../shared/path.js'
import { evaluateQuery, parseQueryParams, assertQueryable, wantsQuery } from '../../../shared/query.js'
import { parseBody, revertBody } from '../../../shared/schemas.js'
import { validateOperation } from '../../../shared/validate-operation.js'
import { requireOperationScope, requireKeyScope, type Access } from '../../auth/rights.js'
import { actorOf } from '../../services/actor.js'
import type { AppRules } from '../../services/app-rules.js'
import { requireReadAllowed } from '../../rules/check.js'
import type { Projects } from '../../services/projects.js'
import type { ApplyOptions, Store, StoreOperation } from '../../store/types.js'
import { etagFor, parseVersionCondition, versionMatches } from '../../store/version-condition.js'
import { identityOf } from '../auth-middleware.js'
import { bodyWithoutEscapes, jsonBody, takeBody, takeSourceJson } from '../body.js'
import { context, projectOf } from '../context.js'
import { sendContentJson } from '../encoded-content.js'
import { constantJson } from '../fast-path.js'
import { changesPageBody, DEFAULT_CHANGES_PAGE_BYTES } from '../../store/change-pages.js'
import { CONTENT_READS_PER_PAGE, readPathChanges } from '../../store/path-changes.js'
import { CHANGES_PAGE_DEFAULT, limitParam, versionParam } from '../history-query.js'
import { idempotency } from '../idempotency.js'
import { projectAccess } from '../project-access.js'
import type { RouteScope } from '../route-table.js'

export interface TransactionOptions {
  /** BATCH_LIMIT: operations per batch or patch. */
  batchLimit: number
  /** IDEMPOTENCY_TTL. */
  idempotencyTtlMs: number
  /** MAX_IDEMPOTENCY_KEYS_PER_USER (docs/design.md §13b). */
  idempotencyKeysPerUser: number
  /** CHANGES_PAGE_BYTES, for the pages of `changes?path=` (docs/design.md §13b, §15). */
  changesPageBytes?: number
}

/** PATCH takes RFC 6902 only (docs/design.md §10): any other media type, application/json included, is 415. */
const requirePatchMediaType: RequestHandler = (req, res, next) => {
  // RFC 5789 §3.1: the answer names the media type PATCH takes (its 415s in particular).
  res.setHeader('Accept-Patch', PATCH_MEDIA_TYPE)
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
  if (mediaType !== PATCH_MEDIA_TYPE) throw new ContentdError('UNSUPPORTED_MEDIA_TYPE', `PATCH takes Content-Type: ${PATCH_MEDIA_TYPE}; got ${mediaType ? JSON.stringify(mediaType) : 'no Content-Type'}`)
  next()
}

/**
 * The conditions of a read (RFC 9110 §13.2.2, docs/design.md §13b), on the version it would
 * answer with: a failing If-Match is 412; then true when If-None-Match matches (304).
 */
/** The value at a path, or undefined where nothing is (a query over nothing has no items). */
function valueAtPath (content: JsonObject, path: string[]): Json | undefined {
  try {
    return getAt(content, path)
  } catch (e) {
    if (e instanceof ContentdError && e.code === 'PATH_NOT_FOUND') return undefined
    throw e
  }
}

function notModified (req: Request, version: number): boolean {
  const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = req.headers
  if (ifMatch !== undefined && !versionMatches(parseVersionCondition(ifMatch), version)) throw new ContentdError('PRECONDITION_FAILED')
  return ifNoneMatch !== undefined && versionMatches(parseVersionCondition(ifNoneMatch), version)
}

/** The path operations whose value is written as JSON (its text may be the body's own, takeSourceJson). */
const VALUE_TEXT_OPERATIONS: ReadonlySet<string> = new Set(['set', 'push', 'insert'])

/** Registers the content routes in `api` (the scope of /api, with identity and rate limit). */
export function contentRoutes (api: RouteScope, store: Store, projects: Projects, bodyLimitBytes: number, transactions: TransactionOptions, appRules?: AppRules): void {
  const parseJson = jsonBody(bodyLimitBytes)
  // Update, set, push, insert: the value's JSON may be found in the body's text (takeSourceJson).
  const parseJsonKeepingText = jsonBody(bodyLimitBytes, true)
  // [rules, issue 31] With appRules, app users' tokens are taken here and the rules decide (§17).
  const access = (needed: Access) => projectAccess(projects, needed, appRules)
  const idempotent = idempotency(store, transactions.idempotencyTtlMs, transactions.idempotencyKeysPerUser)
  // Every content write: the caller may write, the body is JSON, the key is honoured.
  const write = [access('write'), parseJson, idempotent]
  const writeValue = [access('write'), parseJsonKeepingText, idempotent]
  const content = '/:username/:projectSlug/content'

  const commit = async (req: Request, res: Response, operation: StoreOperation, reply: (res: Response) => void) => {
    const project = projectOf(res)
    // The checks that need no document are request validation (docs/design.md §4 step 5), so
    // they answer before an If-Match mismatch (step 6) would. Batches and patches were
    // checked operation by operation as they were parsed. `true`: the value's JSON is made
    // here, once, while the value just parsed is in the CPU's caches (made inside the write
    // instead, so as not to live through the wait for the group commit, it cost the same CPU
    // per request: BENCHMARKS.md), and the engine stores it
    // (shared/validate-operation.ts valueJsonOf); when the body is what JSON.stringify
    // writes, that JSON is found in it instead (takeSourceJson, shared/json-text.ts: 1 parse
    // and 0 serializations per write, issue 35). A body without \u escapes vouches that no
    // string of the value holds a lone surrogate (body.ts), so the check need not search the
    // text for one, which would copy it whole (JSON.stringify returns it in parts).
    if (operation.op !== 'revert' && operation.op !== 'batch' && operation.op !== 'patch') validateOperation(operation, true, bodyWithoutEscapes(req), takeSourceJson(req))
    // [rules, issue 31] An app user: the rules are checked by the engine, in the write's atomic step.
    const { app } = context(res)
    let options: ApplyOptions
    if (app && appRules) {
      options = { actor: { type: 'app', sub: app.sub }, rules: await appRules.checkFor(project, app) }
    } else {
      // A narrowed key's paths and ops (docs/design.md §12) are known once the body names them.
      const identity = identityOf(res)
      requireOperationScope(identity.key, operation)
      options = { actor: actorOf(identity) }
    }
    const { idempotency: key } = context(res)
    if (key) options.idempotency = key
    // Made for this write alone (the routes below take the body from the request): the
    // store may let go of its value once committed (content-engine.ts releaseValue).
    options.valueHandedOver = true
    // Checked by the store against the version it changes, atomically (docs/design.md §13b):
    // a failing If-Match, or an If-None-Match that matches, is 412 and changes nothing.
    const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = req.headers
    if (ifMatch !== undefined) options.ifMatch = parseVersionCondition(ifMatch)
    if (ifNoneMatch !== undefined) options.ifNoneMatch = parseVersionCondition(ifNoneMatch)
    const { version } = await store.applyOperation(project, operation, options)
    res.setHeader('ETag', etagFor(version))
    reply(res)
    return version
  }

  /** Batches and patches answer with their message and the new version in the body too. */
  const commitAll = async (req: Request, res: Response, operation: ContentOperation, message: string) => {
    const version = await commit(req, res, operation, () => undefined)
    res.json({ message, version } satisfies ResponseBody<'Applied'>)
  }

  api.get(content, access('read'), async (req, res) => {
    const project = projectOf(res)
    // Parse the parameters before reading and before the conditional check: a bad request
    // stays a 400.
    const pathParam = req.query.path
    const path = pathParam === undefined ? null : parsePath(pathParam)
    // A one-shot live query (docs/design.md §16): the ordered, limited children of `path`.
    const query = wantsQuery(req.query) ? parseQueryParams(req.query) : null
    if (query && !path) throw new ContentdError('INVALID_QUERY', 'a query needs ?path= naming the object or array whose children it orders')
    const version = req.query.version === undefined ? null : versionParam('version', req.query.version)
    const { app } = context(res)
    // A narrowed key reads only inside its paths: never the whole content, now or at a past version (docs/design.md §12).
    if (!app) requireKeyScope(identityOf(res).key, path && version === null ? { kind: 'read', path } : { kind: 'whole' })
    // ?version=N: the content as it was then (404 above the current version, 410 beyond retention).
    const snapshot = version === null ? await store.readContent(project.id) : await store.readContentAt(project.id, version)
    if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
    // [rules, issue 31] An app user needs .read at the path (the root without one), on the content it reads (§17).
    if (app && appRules) requireReadAllowed(await appRules.checkFor(project, app), snapshot.content, path ?? [])
    res.setHeader('ETag', etagFor(snapshot.version))
    // The whole content may be compressed (encoded-content.ts); a 304 names what a 200 would vary on.
    if (!path) res.vary('Accept-Encoding')
    if (notModified(req, snapshot.version)) {
      res.status(304).end()
      return
    }
    if (path && query) {
      const value = valueAtPath(snapshot.content, path)
      assertQueryable(value)
      res.json({ version: snapshot.version, items: evaluateQuery(value, query) })
      return
    }
    if (path) {
      res.json(getAt(snapshot.content, path))
      return
    }
    await sendContentJson(req, res, snapshot.json ?? JSON.stringify(snapshot.content), snapshot.encoded)
  })

  // The change log: entries after `since` (default 0), `limit` (1..1000, default 100) at most.
  api.get(`${content}/changes`, access('read'), async (req, res) => {
    // ?path=: the history of one path (docs/design.md §15), open to a key narrowed to it.
    if (req.query.path !== undefined) {
      await sendPathChanges(req, res)
      return
    }
    // Changes carry whole-content values (update, revert): an unnarrowed key only (docs/design.md §12).
    const { app } = context(res)
    if (app && appRules) {
      // [rules, issue 31] The whole log: .read at the root (§17), decided on the current content.
      const current = await store.readContent(projectOf(res).id)
      if (!current) throw new ContentdError('PROJECT_NOT_FOUND')
      requireReadAllowed(await appRules.checkFor(projectOf(res), app), current.content, [])
    } else {
      requireKeyScope(identityOf(res).key, { kind: 'whole' })
    }
    const since = req.query.since === undefined ? 0 : versionParam('since', req.query.since)
    const limit = req.query.limit === undefined ? CHANGES_PAGE_DEFAULT : limitParam(req.query.limit)
    const page = await store.readChangesJson(projectOf(res), since, limit)
    res.setHeader('ETag', etagFor(page.version))
    // A page is fixed by the version, `since` and `limit`: the same URL at the same version is the same page.
    if (notModified(req, page.version)) {
      res.status(304).end()
      return
    }
    // The stored entries as they are (docs/design.md §13b); the same text as res.json of the parsed page.
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.send(changesPageBody(page))
  })

  /** `changes?path=`: only the entries that touch the path, each as a path subscription is sent it. */
  const sendPathChanges = async (req: Request, res: Response) => {
    const path = formatPath(parsePath(req.query.path))
    const { app } = context(res)
    // [rules, issue 31] An app user: .read at the path, decided on the current content (§17).
    if (app && appRules) await appRules.requireLiveRead(projectOf(res), app, dotSegments(path))
    else requireKeyScope(identityOf(res).key, { kind: 'read', path: dotSegments(path) })
    const since = req.query.since === undefined ? 0 : versionParam('since', req.query.since)
    const limit = req.query.limit === undefined ? CHANGES_PAGE_DEFAULT : limitParam(req.query.limit)
    const page = await readPathChanges(store, projectOf(res), { path, since, limit, pageBytes: transactions.changesPageBytes ?? DEFAULT_CHANGES_PAGE_BYTES, contentReads: CONTENT_READS_PER_PAGE })
    res.setHeader('ETag', etagFor(page.version))
    if (notModified(req, page.version)) {
      res.status(304).end()
      return
    }
    res.json({ version: page.version, changes: page.changes, more: page.more })
  }

  api.post(`${content}/revert`, ...write, async (req, res) => {
    const { version } = parseBody(revertBody, req.body)
    await commit(req, res, { op: 'revert', version }, reply => reply.json({ message: revertMessage(version) }))
  })

  // The whole content is free-form: no schema, only validateOperation's "a JSON object".
  const updated = constantJson(UPDATE_MESSAGE)
  // The body is handed to the operation (takeBody, ApplyOptions.valueHandedOver): its value
  // lives on in the document, not through the request until its answer.
  api.post(content, ...writeValue, async (req, res) => {
    await commit(req, res, updateOperationFrom(takeBody(req)), updated)
  })

  for (const name of PATH_OPERATION_NAMES) {
    const done = constantJson(PATH_OPERATIONS[name].message)
    // Only a written JSON value may be found in the body's text: an increment's, decrement's
    // or delete's body is not kept for it (nor a finder made per request).
    const writes = VALUE_TEXT_OPERATIONS.has(name) ? writeValue : write
    api.post(`${content}/${name}`, ...writes, async (req, res) => {
      await commit(req, res, pathOperationFrom(name, takeBody(req)), done)
    })
  }

  api.post(`${content}/batch`, ...write, async (req, res) => {
    await commitAll(req, res, { op: 'batch', operations: parseBatch(req.body, transactions.batchLimit) }, BATCH_MESSAGE)
  })

  api.patch(content, access('write'), requirePatchMediaType, parseJson, idempotent, async (req, res) => {
    await commitAll(req, res, { op: 'patch', operations: parsePatch(req.body, transactions.batchLimit) }, PATCH_MESSAGE)
  })
}
