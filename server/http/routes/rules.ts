// App users and rules, the owner's side (docs/design.md §17): the app sign-in a project trusts
// (`…/auth`), its rules document (`…/rules`) and the simulator (`…/rules/check`). Owner only,
// with a session, as the schema is.
import type { AppRules } from '../../services/app-rules.js'
import { displayName } from '../../services/identity.js'
import type { Projects } from '../../services/projects.js'
import { identityOf } from '../auth-middleware.js'
import { jsonBody } from '../body.js'
import { projectOf } from '../context.js'
import { ownerOnly } from '../owner-session.js'
import type { RouteScope } from '../route-table.js'

export function rulesRoutes (api: RouteScope, projects: Projects, appRules: AppRules, bodyLimitBytes: number): void {
  const owner = ownerOnly(projects)
  const parseJson = jsonBody(bodyLimitBytes)
  const auth = '/:username/:projectSlug/auth'
  const rules = '/:username/:projectSlug/rules'
  const setBy = (res: Parameters<typeof identityOf>[0]) => displayName(identityOf(res).user.username)

  api.put(auth, owner, parseJson, async (req, res) => {
    res.json(await appRules.setAuth(projectOf(res), req.body, setBy(res)))
  })

  api.get(auth, owner, async (_req, res) => {
    res.json(await appRules.getAuth(projectOf(res)))
  })

  api.delete(auth, owner, async (_req, res) => {
    await appRules.removeAuth(projectOf(res))
    res.json({ message: 'App sign-in removed' })
  })

  api.put(rules, owner, parseJson, async (req, res) => {
    res.json(await appRules.setRules(projectOf(res), req.body, setBy(res)))
  })

  api.get(rules, owner, async (_req, res) => {
    const record = await appRules.getRules(projectOf(res))
    res.setHeader('Last-Modified', new Date(record.setAt).toUTCString())
    res.json(record.document)
  })

  api.delete(rules, owner, async (_req, res) => {
    await appRules.removeRules(projectOf(res))
    res.json({ message: 'Rules removed' })
  })

  api.post(`${rules}/check`, owner, parseJson, async (req, res) => {
    res.json(await appRules.simulate(projectOf(res), req.body))
  })
}
