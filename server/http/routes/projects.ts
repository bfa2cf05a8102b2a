// Creating, listing and deleting projects; the owner manages members.
import { memberBody, parseBody, projectBody } from '../../../shared/schemas.js'
import { projectView, type Projects } from '../../services/projects.js'
import { identityOf, requireIdentity, requireSession } from '../auth-middleware.js'
import { jsonBody } from '../body.js'
import { context, projectOf } from '../context.js'
import { projectAccess, projectOwnerSession } from '../project-access.js'
import type { RouteScope } from '../route-table.js'

export function projectRoutes (api: RouteScope, projects: Projects, bodyLimitBytes: number): void {
  const parseJson = jsonBody(bodyLimitBytes)

  api.post('/projects', requireSession, parseJson, async (req, res) => {
    const { user } = identityOf(res)
    const { slug, name } = parseBody(projectBody, req.body)
    res.status(201).json(projectView(await projects.create(user.id, user.username, slug, name)))
  })

  api.get('/projects', requireIdentity, async (_req, res) => {
    res.json({ projects: await projects.listFor(identityOf(res)) })
  })

  const ownerSession = projectOwnerSession(projects)

  api.get('/:username/:projectSlug', projectAccess(projects, 'read'), (_req, res) => {
    res.json(projectView(projectOf(res), context(res).role))
  })

  api.delete('/:username/:projectSlug', ownerSession, async (_req, res) => {
    await projects.delete(projectOf(res))
    res.json({ message: 'Project deleted' })
  })

  api.get('/:username/:projectSlug/members', ownerSession, async (_req, res) => {
    res.json({ members: await projects.members(projectOf(res)) })
  })

  api.put('/:username/:projectSlug/members/:member', ownerSession, parseJson, async (req, res) => {
    const { role } = parseBody(memberBody, req.body)
    res.json(await projects.setMember(projectOf(res), String(req.params.member), role))
  })

  api.delete('/:username/:projectSlug/members/:member', ownerSession, async (req, res) => {
    await projects.removeMember(projectOf(res), String(req.params.member))
    res.json({ message: 'Member removed' })
  })
}
