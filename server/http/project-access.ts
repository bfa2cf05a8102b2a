// The project named in the URL, checked against the caller: 400 for a username without "@",
// 404 for a missing user or project, 403 without the needed access (docs/design.md §4 order:
// identity first, then the project, then access). Leaves project and role in the context.
import type { RequestHandler } from 'express'
import type { Access } from '../auth/rights.js'
import type { Projects } from '../services/projects.js'
import { identityOf } from './auth-middleware.js'
import { context } from './context.js'

export function projectAccess (projects: Projects, needed: Access): RequestHandler {
  return async (req, res, next) => {
    const identity = identityOf(res)
    const project = await projects.find(String(req.params.username), String(req.params.projectSlug))
    const role = await projects.authorize(identity, project, needed)
    Object.assign(context(res), { project, role })
    next()
  }
}
