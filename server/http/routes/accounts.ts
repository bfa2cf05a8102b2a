// Signup, login, logout and "who am I".
import type { ResponseBody } from '../../../shared/api/index.js'
import type { RequestHandler } from 'express'
import { ContentdError } from '../../../shared/errors.js'
import { credentialsBody, parseBody } from '../../../shared/schemas.js'
import type { Accounts } from '../../services/accounts.js'
import { displayName } from '../../services/identity.js'
import { identityOf, requireIdentity, requireSession } from '../auth-middleware.js'
import { jsonBody } from '../body.js'
import type { RouteScope } from '../route-table.js'

/**
 * `guessLimit`: the stricter per-IP limit on login and signup, against password guessing;
 * `loginThrottle`: the per-username lock on login (runs once the body names the username).
 */
export function accountRoutes (api: RouteScope, accounts: Accounts, signupOpen: boolean, bodyLimitBytes: number, guessLimit: RequestHandler, loginThrottle: RequestHandler): void {
  const parseJson = jsonBody(bodyLimitBytes)

  api.post('/auth/signup', guessLimit, async (_req, _res, next) => {
    if (!signupOpen) throw new ContentdError('SIGNUP_DISABLED')
    next()
  }, parseJson, async (req, res) => {
    const { username, password } = parseBody(credentialsBody, req.body)
    res.status(201).json(await accounts.signup(username, password))
  })

  api.post('/auth/login', guessLimit, parseJson, loginThrottle, async (req, res) => {
    const { username, password } = parseBody(credentialsBody, req.body)
    res.json(await accounts.login(username, password))
  })

  api.post('/auth/logout', requireSession, async (_req, res) => {
    await accounts.logout(identityOf(res).credentialHash)
    res.json({ message: 'Logged out' })
  })

  api.get('/me', requireIdentity, (_req, res) => {
    const { user } = identityOf(res)
    res.json({ username: displayName(user.username), createdAt: user.createdAt } satisfies ResponseBody<'Me'>)
  })
}
