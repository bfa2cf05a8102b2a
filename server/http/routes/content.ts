// The content endpoints: get, update, and the path operations of the shared operation table.
// Each write validates its body with the table's schema and validateOperation, hands one
// Operation to the store, and answers with the operation's fixed message and the new
// version as ETag.
import type { Request, Response } from 'express'
import { ContentdError } from '../../../shared/errors.js'
import { PATH_OPERATION_NAMES, PATH_OPERATIONS, pathOperationFrom, UPDATE_MESSAGE, updateOperationFrom } from '../../../shared/operation-table.js'
import { getAt, type Operation } from '../../../shared/operations.js'
import { parsePath } from '../../../shared/path.js'
import { validateOperation } from '../../../shared/validate-operation.js'
import { operationAccess, requireKeyScope, type Access } from '../../auth/rights.js'
import type { Projects } from '../../services/projects.js'
import type { ApplyOptions, Store } from '../../store/types.js'
import { etagFor, parseVersionCondition, versionMatches } from '../../store/version-condition.js'
import { identityOf } from '../auth-middleware.js'
import { jsonBody } from '../body.js'
import { projectOf } from '../context.js'
import { constantJson } from '../fast-path.js'
import { projectAccess } from '../project-access.js'
import type { RouteScope } from '../route-table.js'

/** Registers the content routes in `api` (the scope of /api, with identity and rate limit). */
export function contentRoutes (api: RouteScope, store: Store, projects: Projects, bodyLimitBytes: number): void {
  const parseJson = jsonBody(bodyLimitBytes)
  const access = (needed: Access) => projectAccess(projects, needed)
  const content = '/:username/:projectSlug/content'

  const commit = async (req: Request, res: Response, operation: Operation, reply: (res: Response) => void) => {
    const project = projectOf(res)
    // The checks that need no document are request validation (docs/design.md §4 step 5), so
    // they answer before an If-Match mismatch (step 6) would.
    validateOperation(operation)
    // A narrowed key's paths and ops (docs/design.md §12) are known once the body names them.
    requireKeyScope(identityOf(res).key, operationAccess(operation))
    const options: ApplyOptions = {}
    const ifMatch = req.headers['if-match']
    if (ifMatch !== undefined) options.ifMatch = parseVersionCondition(ifMatch)
    const { version } = await store.applyOperation(project, operation, options)
    res.setHeader('ETag', etagFor(version))
    reply(res)
  }

  api.get(content, access('read'), async (req, res) => {
    const project = projectOf(res)
    const pathParam = req.query.path
    // Parse the path before the conditional check: a bad request stays a 400.
    const path = pathParam === undefined ? null : parsePath(pathParam)
    requireKeyScope(identityOf(res).key, path ? { kind: 'read', path } : { kind: 'whole' })
    const snapshot = await store.readContent(project.id)
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
