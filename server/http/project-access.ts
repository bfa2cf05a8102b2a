// The project named in the URL, checked against the caller: 400 for a username without "@",
// 404 for a missing user or project, 403 without the needed access (docs/design.md §4 order:
// identity first, then the project, then access). Leaves project and role in the context.
import type { RequestHandler } from 'express'
import type { Access } from '../auth/rights.js'
import type { Projects } from '../services/projects.js'
import type { AppRules } from '../services/app-rules.js'
import { identityOf } from './auth-middleware.js'
import { context } from './context.js'

export function projectAccess (projects: Projects, needed: Access, appRules?: AppRules): RequestHandler {
  return async (req, res, next) => {
    // [rules, issue 31] A route that takes app users (content, events) verifies their token
    // against the project it names; the rules decide each read and write there (§17).
    const { appToken } = context(res)
    if (appRules && appToken) {
      const project = await projects.find(String(req.params.username), String(req.params.projectSlug))
      Object.assign(context(res), { project, app: await appRules.verify(project, appToken) })
      next()
      return
    }
    const identity = identityOf(res)
    const project = await projects.find(String(req.params.username), String(req.params.projectSlug))
    const role = await projects.authorize(identity, project, needed)
    Object.assign(context(res), { project, role })
    next()
  }
}
