// A document the project's owner keeps beside its content (its schema, §12; its rules, §17):
// PUT sets it (the body is the document), GET answers it with Last-Modified, DELETE removes
// it. Owner only, with a session. The routes are the same for each; what differs is the
// service that checks and stores it.
import type { Response } from 'express'
import type { ProjectRecord } from '../../store/types.js'
import { displayName } from '../../services/identity.js'
import type { Projects } from '../../services/projects.js'
import { identityOf } from '../auth-middleware.js'
import { jsonBody } from '../body.js'
import { projectOf } from '../context.js'
import { ownerOnly } from '../owner-session.js'
import type { RouteScope } from '../route-table.js'

export interface OwnerDocument<R> {
  /** Checks and stores the body; resolves with the answer to PUT. */
  set (project: ProjectRecord, body: unknown, setBy: string): Promise<unknown>
  /** The stored record; rejects with the document's NOT_FOUND error when there is none. */
  get (project: ProjectRecord): Promise<R>
  remove (project: ProjectRecord): Promise<void>
  /** When it was set (Last-Modified), and the document GET answers. */
  setAt (record: R): string
  document (record: R): unknown
  /** DELETE's message, e.g. "Schema removed". */
  removed: string
}

/** The display name a change of the document is recorded under. */
export function setByOf (res: Response): string {
  return displayName(identityOf(res).user.username)
}

export function ownerDocumentRoutes<R> (api: RouteScope, path: string, projects: Projects, bodyLimitBytes: number, kept: OwnerDocument<R>): void {
  const owner = ownerOnly(projects)

  api.put(path, owner, jsonBody(bodyLimitBytes), async (req, res) => {
    res.json(await kept.set(projectOf(res), req.body, setByOf(res)))
  })

  api.get(path, owner, async (_req, res) => {
    const record = await kept.get(projectOf(res))
    res.setHeader('Last-Modified', new Date(kept.setAt(record)).toUTCString())
    res.json(kept.document(record))
  })

  api.delete(path, owner, async (_req, res) => {
    await kept.remove(projectOf(res))
    res.json({ message: kept.removed })
  })
}
