// Signup, login, logout and "who am I".
import { Router } from 'express'
import { ContentdError } from '../../../shared/errors.js'
import { credentialsBody, parseBody } from '../../../shared/schemas.js'
import type { Accounts } from '../../services/accounts.js'
import { displayName } from '../../services/identity.js'
import { identityOf, requireIdentity, requireSession } from '../auth-middleware.js'
import { jsonBody } from '../body.js'

export function accountRoutes (accounts: Accounts, signupOpen: boolean, bodyLimitBytes: number): Router {
  const router = Router()
  const parseJson = jsonBody(bodyLimitBytes)

  router.post('/auth/signup', async (_req, _res, next) => {
    if (!signupOpen) throw new ContentdError('SIGNUP_DISABLED')
    next()
  }, parseJson, async (req, res) => {
    const { username, password } = parseBody(credentialsBody, req.body)
    res.status(201).json(await accounts.signup(username, password))
  })

  router.post('/auth/login', parseJson, async (req, res) => {
    const { username, password } = parseBody(credentialsBody, req.body)
    res.json(await accounts.login(username, password))
  })

  router.post('/auth/logout', requireSession, async (_req, res) => {
    await accounts.logout(identityOf(res).credentialHash)
    res.json({ message: 'Logged out' })
  })

  router.get('/me', requireIdentity, (_req, res) => {
    const { user } = identityOf(res)
    res.json({ username: displayName(user.username), createdAt: user.createdAt })
  })

  return router
}
