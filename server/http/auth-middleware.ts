// Load the caller's identity once per request (loadIdentity); routes then state what they
// need (requireIdentity, requireSession). The split keeps "who is this" apart from "is
// that enough here", as PocketBase does with loadAuthToken and RequireAuth.
import type { RequestHandler, Response } from 'express'
import { ContentdError } from '../../shared/errors.js'
import { bearerSecret, type Identities, type Identity } from '../services/identity.js'
import { context } from './context.js'
import { looksLikeJwt } from '../services/app-tokens.js'

/**
 * `queryToken`: also take the credential from `?access_token=` when there is no
 * Authorization header, for browsers' EventSource, which cannot send headers (the
 * Server-Sent Events route only; request logs redact it, see request-log.ts).
 */
export function loadIdentity (identities: Identities, { queryToken = false } = {}): RequestHandler {
  return async (req, res, next) => {
    const fromQuery = queryToken && req.headers.authorization === undefined && typeof req.query.access_token === 'string' ? req.query.access_token : null
    const secret = fromQuery ?? bearerSecret(req.headers.authorization)
    // [rules, issue 31] An app user's JWT names no contentd account: it is kept for the
    // project's routes to verify (project-access.ts); everywhere else it is INVALID_TOKEN.
    if (secret !== null && looksLikeJwt(secret)) {
      Object.assign(context(res), { identity: null, authFailure: 'INVALID_TOKEN', appToken: secret })
      next()
      return
    }
    const result = await identities.resolve(secret)
    Object.assign(context(res), result.identity ? { identity: result.identity, authFailure: null } : { identity: null, authFailure: result.failure })
    next()
  }
}

export function identityOf (res: Response): Identity {
  const { identity, authFailure } = context(res)
  if (!identity) throw new ContentdError(authFailure ?? 'AUTH_REQUIRED')
  return identity
}

export const requireIdentity: RequestHandler = (_req, res, next) => {
  identityOf(res)
  next()
}

/** Managing sessions, projects, members and keys needs a person, not an API key. */
export const requireSession: RequestHandler = (_req, res, next) => {
  if (!identityOf(res).session) throw new ContentdError('SESSION_REQUIRED')
  next()
}
