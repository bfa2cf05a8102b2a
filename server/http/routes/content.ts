// The content endpoints: get (now or at a past version), update, the path operations of the
// shared operation table, the change log and revert (docs/design.md §9). Each write
// validates its body, hands one operation to the store with the caller as its actor, and
// answers with its message and the new version as ETag.
import type { Request, Response } from 'express'
import { ContentdError } from '../../../shared/errors.js'
import { PATH_OPERATION_NAMES, PATH_OPERATIONS, pathOperationFrom, UPDATE_MESSAGE, updateOperationFrom } from '../../../shared/operation-table.js'
import { getAt } from '../../../shared/operations.js'
import { parsePath } from '../../../shared/path.js'
import { parseBody, revertBody } from '../../../shared/schemas.js'
import { validateOperation } from '../../../shared/validate-operation.js'
import type { Access } from '../../auth/rights.js'
import { actorOf } from '../../services/identity.js'
import type { Projects } from '../../services/projects.js'
import type { ApplyOptions, Store, StoreOperation } from '../../store/types.js'
import { etagFor, parseVersionCondition, versionMatches } from '../../store/version-condition.js'
import { identityOf } from '../auth-middleware.js'
import { jsonBody } from '../body.js'
import { projectOf } from '../context.js'
import { constantJson } from '../fast-path.js'
import { CHANGES_PAGE_DEFAULT, limitParam, versionParam } from '../history-query.js'
import { projectAccess } from '../project-access.js'
import type { RouteScope } from '../route-table.js'

/** Registers the content routes in `api` (the scope of /api, with identity and rate limit). */
export function contentRoutes (api: RouteScope, store: Store, projects: Projects, bodyLimitBytes: number): void {
  const parseJson = jsonBody(bodyLimitBytes)
  const access = (needed: Access) => projectAccess(projects, needed)
  const content = '/:username/:projectSlug/content'

  const commit = async (req: Request, res: Response, operation: StoreOperation, reply: (res: Response) => void) => {
    const project = projectOf(res)
    // The checks that need no document are request validation (docs/design.md §4 step 5), so
    // they answer before an If-Match mismatch (step 6) would.
    if (operation.op !== 'revert') validateOperation(operation)
    const options: ApplyOptions = { actor: actorOf(identityOf(res)) }
    const ifMatch = req.headers['if-match']
    if (ifMatch !== undefined) options.ifMatch = parseVersionCondition(ifMatch)
    const { version } = await store.applyOperation(project, operation, options)
    res.setHeader('ETag', etagFor(version))
    reply(res)
  }

  api.get(content, access('read'), async (req, res) => {
    const project = projectOf(res)
    // Parse the parameters before reading and before the conditional check: a bad request
    // stays a 400.
    const pathParam = req.query.path
    const path = pathParam === undefined ? null : parsePath(pathParam)
    const version = req.query.version === undefined ? null : versionParam('version', req.query.version)
    // ?version=N: the content as it was then (404 above the current version, 410 beyond retention).
    const snapshot = version === null ? await store.readContent(project.id) : await store.readContentAt(project.id, version)
    if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
    res.setHeader('ETag', etagFor(snapshot.version))
    const ifNoneMatch = req.headers['if-none-match']
    if (ifNoneMatch !== undefined && versionMatches(parseVersionCondition(ifNoneMatch), snapshot.version)) {
      res.status(304).end()
      return
    }
    if (path) {
      res.json(getAt(snapshot.content, path))
      return
    }
    res.type('application/json').send(snapshot.json ?? JSON.stringify(snapshot.content))
  })

  // The change log: entries after `since` (default 0), `limit` (1..1000, default 100) at most.
  api.get(`${content}/changes`, access('read'), async (req, res) => {
    const since = req.query.since === undefined ? 0 : versionParam('since', req.query.since)
    const limit = req.query.limit === undefined ? CHANGES_PAGE_DEFAULT : limitParam(req.query.limit)
    const page = await store.readChanges(projectOf(res), since, limit)
    res.setHeader('ETag', etagFor(page.version))
    res.json(page)
  })

  api.post(`${content}/revert`, access('write'), parseJson, async (req, res) => {
    const { version } = parseBody(revertBody, req.body)
    await commit(req, res, { op: 'revert', version }, reply => reply.json({ message: `Content reverted to version ${version}.` }))
  })

  // The whole content is free-form: no schema, only validateOperation's "a JSON object".
  const updated = constantJson(UPDATE_MESSAGE)
  api.post(content, access('write'), parseJson, async (req, res) => {
    await commit(req, res, updateOperationFrom(req.body), updated)
  })

  for (const name of PATH_OPERATION_NAMES) {
    const done = constantJson(PATH_OPERATIONS[name].message)
    api.post(`${content}/${name}`, access('write'), parseJson, async (req, res) => {
      await commit(req, res, pathOperationFrom(name, req.body), done)
    })
  }
}
