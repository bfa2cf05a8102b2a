// What earlier middleware learned about a request, kept in res.locals with types.
import type { Response } from 'express'
import type { ErrorCode } from '../../shared/errors.js'
import type { LoggedIdempotencyKey, ProjectRecord, ProjectRole } from '../store/types.js'
import type { Identity } from '../services/identity.js'
import type { AppUser } from '../services/app-tokens.js'

export interface RequestContext {
  identity: Identity | null
  authFailure: ErrorCode | null
  /** Set by projectAccess (or the owner check) for routes under /api/:username/:projectSlug. */
  project?: ProjectRecord
  /** The caller's role in `project`, as the access check found it. */
  role?: ProjectRole
  /** Set by the idempotency middleware: the key the write's change log entry remembers (docs/design.md §19). */
  idempotency?: LoggedIdempotencyKey
  /** A bearer that looks like a JWT: an app user's token, verified only against the project a route names (docs/design.md §17). */
  appToken?: string | null
  /** The app user projectAccess verified, for routes that take app users (content, events). */
  app?: AppUser
}

export function context (res: Response): RequestContext {
  return res.locals as RequestContext
}

/** The project an access middleware resolved; only for routes that run one. */
export function projectOf (res: Response): ProjectRecord {
  const { project } = context(res)
  if (!project) throw new Error('projectOf: no access middleware ran for this route')
  return project
}
