// App users and rules, the owner's side (docs/design.md §17): the app sign-in a project trusts
// (`…/auth`), its rules document (`…/rules`) and the simulator (`…/rules/check`). Owner only,
// with a session, as the schema is.
import type { AppRules } from '../../services/app-rules.js'
import type { Projects } from '../../services/projects.js'
import { jsonBody } from '../body.js'
import { projectOf } from '../context.js'
import { ownerOnly } from '../owner-session.js'
import type { RouteScope } from '../route-table.js'
import { ownerDocumentRoutes, setByOf } from './owner-document.js'

export function rulesRoutes (api: RouteScope, projects: Projects, appRules: AppRules, bodyLimitBytes: number): void {
  const owner = ownerOnly(projects)
  const parseJson = jsonBody(bodyLimitBytes)
  const auth = '/:username/:projectSlug/auth'
  const rules = '/:username/:projectSlug/rules'

  api.put(auth, owner, parseJson, async (req, res) => {
    res.json(await appRules.setAuth(projectOf(res), req.body, setByOf(res)))
  })

  api.get(auth, owner, async (_req, res) => {
    res.json(await appRules.getAuth(projectOf(res)))
  })

  api.delete(auth, owner, async (_req, res) => {
    await appRules.removeAuth(projectOf(res))
    res.json({ message: 'App sign-in removed' })
  })

  ownerDocumentRoutes(api, rules, projects, bodyLimitBytes, {
    set: async (project, body, setBy) => await appRules.setRules(project, body, setBy),
    get: async project => await appRules.getRules(project),
    remove: async project => { await appRules.removeRules(project) },
    setAt: record => record.setAt,
    document: record => record.document,
    removed: 'Rules removed'
  })

  api.post(`${rules}/check`, owner, parseJson, async (req, res) => {
    res.json(await appRules.simulate(projectOf(res), req.body))
  })
}
