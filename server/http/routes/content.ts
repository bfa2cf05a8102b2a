// The content endpoints: get, update, and the six path operations. Each route validates its
// body with a shared schema, hands one Operation to the store, and answers with the
// operation's fixed message and the new version as ETag.
import { Router, type IRouter, type Request, type RequestHandler, type Response } from 'express'
import type { z } from 'zod'
import { ContentdError } from '../../../shared/errors.js'
import { assertWritableValue, type Json, type JsonObject } from '../../../shared/json.js'
import { getAt, type Operation } from '../../../shared/operations.js'
import { parsePath } from '../../../shared/path.js'
import { amountBody, insertBody, parseBody, pathBody, valueBody } from '../../../shared/schemas.js'
import type { Access } from '../../auth/rights.js'
import type { Projects } from '../../services/projects.js'
import type { ApplyOptions, Store } from '../../store/types.js'
import { etagFor, parseVersionCondition, versionMatches } from '../../store/version-condition.js'
import { jsonBody } from '../body.js'
import { projectOf } from '../context.js'
import { projectAccess } from '../project-access.js'

interface PathOperation<S extends z.ZodType> {
  schema: S
  message: string
  toOperation: (body: z.output<S>) => Operation
}

const define = <S extends z.ZodType>(operation: PathOperation<S>): PathOperation<S> => operation

/** The path operations, their bodies and their exact success messages (the spec's §2). */
export const PATH_OPERATIONS = {
  increment: define({ schema: amountBody, message: 'Value incremented successfully', toOperation: b => ({ op: 'increment', path: b.path, value: b.value }) }),
  decrement: define({ schema: amountBody, message: 'Value decremented successfully', toOperation: b => ({ op: 'decrement', path: b.path, value: b.value }) }),
  set: define({ schema: valueBody, message: 'Value set successfully', toOperation: b => ({ op: 'set', path: b.path, value: b.value as Json }) }),
  delete: define({ schema: pathBody, message: 'Value deleted successfully', toOperation: b => ({ op: 'delete', path: b.path }) }),
  push: define({ schema: valueBody, message: 'Object pushed successfully', toOperation: b => ({ op: 'push', path: b.path, value: b.value as Json }) }),
  insert: define({ schema: insertBody, message: 'Value inserted successfully', toOperation: b => ({ op: 'insert', path: b.path, value: b.value as Json, index: b.index }) })
} as const

export const UPDATE_MESSAGE = 'Project content updated successfully.'

/**
 * The success bodies never change: serialized once, sent with the headers res.json would
 * set. (res.json re-serializes and re-derives the Content-Type through two parsers on every
 * call; this is the hot path of every write.)
 */
function constantJson (message: string): (res: Response) => void {
  const body = Buffer.from(JSON.stringify({ message }))
  const length = String(body.length)
  return res => {
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.setHeader('Content-Length', length)
    res.end(body)
  }
}

export interface ContentRouteOptions {
  /** Handlers run first on every content route, and only on them. */
  prelude?: RequestHandler[]
  /** The path the routes hang below; it must name :username and :projectSlug. */
  base?: string
  /** Where the routes are added: a new router unless given (the app itself, say). */
  into?: IRouter
}

/**
 * The content routes. The app adds them straight onto itself ahead of the management routes,
 * with the API's identity and rate-limit middleware as `prelude`: the hot path then skips
 * every other layer (a sub-router would also cost a round of URL rewriting per request),
 * and no other request is authenticated or counted twice.
 */
export function contentRoutes (store: Store, projects: Projects, bodyLimitBytes: number, options: ContentRouteOptions = {}): IRouter {
  const { prelude = [], base = '/:username/:projectSlug', into: router = Router({ mergeParams: true }) } = options
  const parseJson = jsonBody(bodyLimitBytes)

  const access = (needed: Access) => projectAccess(projects, needed)

  const commit = async (req: Request, res: Response, operation: Operation, reply: (res: Response) => void) => {
    const project = projectOf(res)
    // Value rules are request validation (DESIGN.md §4 step 5), so they answer before an
    // If-Match mismatch (step 6) would; the store checks them again as part of the operation.
    if ('value' in operation && operation.op !== 'increment' && operation.op !== 'decrement') {
      assertWritableValue(operation.value, 'path' in operation ? operation.path : [])
    }
    const options: ApplyOptions = {}
    const ifMatch = req.headers['if-match']
    if (ifMatch !== undefined) options.ifMatch = parseVersionCondition(ifMatch)
    const { version } = await store.applyOperation(project, operation, options)
    res.setHeader('ETag', etagFor(version))
    reply(res)
  }

  router.get(`${base}/content`, ...prelude, access('read'), async (req, res) => {
    const project = projectOf(res)
    const snapshot = await store.readContent(project.id)
    if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
    const pathParam = req.query.path
    // Parse the path before the conditional check: a bad request stays a 400.
    const path = pathParam === undefined ? null : parsePath(pathParam)
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

  const updated = constantJson(UPDATE_MESSAGE)
  router.post(`${base}/content`, ...prelude, access('write'), parseJson, async (req, res) => {
    const body: unknown = req.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ContentdError('INVALID_BODY', 'the content must be a JSON object')
    }
    await commit(req, res, { op: 'update', value: body as JsonObject }, updated)
  })

  for (const [name, definition] of Object.entries(PATH_OPERATIONS)) {
    const done = constantJson(definition.message)
    router.post(`${base}/content/${name}`, ...prelude, access('write'), parseJson, async (req, res) => {
      const body = parseBody(definition.schema, req.body)
      await commit(req, res, (definition.toOperation as (b: unknown) => Operation)(body), done)
    })
  }

  return router
}
