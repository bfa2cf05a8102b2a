// What earlier middleware learned about a request, kept in res.locals with types.
import type { Response } from 'express'
import type { ErrorCode } from '../../shared/errors.js'
import type { ProjectRecord } from '../store/types.js'
import type { Identity } from '../services/identity.js'

export interface RequestContext {
  identity: Identity | null
  authFailure: ErrorCode | null
  project?: ProjectRecord
}

export function context (res: Response): RequestContext {
  return res.locals as RequestContext
}
