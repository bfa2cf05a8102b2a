// Only the project's owner, signed in with a session, manages it (members, webhooks): 403
// FORBIDDEN without access, SESSION_REQUIRED for an API key, OWNER_REQUIRED for a member.
// Leaves project and role in the context.
import type { RequestHandler } from 'express'
import { ContentdError } from '../../shared/errors.js'
import type { Projects } from '../services/projects.js'
import { identityOf } from './auth-middleware.js'
import { context } from './context.js'

export function ownerOnly (projects: Projects): RequestHandler {
  return async (req, res, next) => {
    const identity = identityOf(res)
    const project = await projects.find(String(req.params.username), String(req.params.projectSlug))
    const role = await projects.roleOf(project, identity.user.id)
    if (role === null) throw new ContentdError('FORBIDDEN')
    if (!identity.session) throw new ContentdError('SESSION_REQUIRED')
    if (role !== 'owner') throw new ContentdError('OWNER_REQUIRED')
    Object.assign(context(res), { project, role })
    next()
  }
}
