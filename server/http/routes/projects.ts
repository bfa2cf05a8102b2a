// Creating, listing and deleting projects; the owner manages members.
import type { ResponseBody } from '../../../shared/api/index.js'
import { memberBody, parseBody, projectBody } from '../../../shared/schemas.js'
import { projectView, type Projects } from '../../services/projects.js'
import { identityOf, requireIdentity, requireSession } from '../auth-middleware.js'
import { jsonBody } from '../body.js'
import { pageQuery } from '../page-query.js'
import { context, projectOf } from '../context.js'
import { ownerOnly } from '../owner-session.js'
import { projectAccess } from '../project-access.js'
import type { RouteScope } from '../route-table.js'

export function projectRoutes (api: RouteScope, projects: Projects, bodyLimitBytes: number): void {
  const parseJson = jsonBody(bodyLimitBytes)

  api.post('/projects', requireSession, parseJson, async (req, res) => {
    const { user } = identityOf(res)
    const { slug, name } = parseBody(projectBody, req.body)
    res.status(201).json(projectView(await projects.create(user.id, user.username, slug, name)))
  })

  api.get('/projects', requireIdentity, async (req, res) => {
    const page = await projects.listFor(identityOf(res), pageQuery(req))
    res.json({ projects: page.items, nextCursor: page.nextCursor } satisfies ResponseBody<'ProjectList'>)
  })

  /** Only the owner, signed in with a session, manages a project. */
  const ownerSession = ownerOnly(projects)

  api.get('/:username/:projectSlug', projectAccess(projects, 'read'), async (_req, res) => {
    const project = projectOf(res)
    const role = context(res).role
    res.json(projectView(project, role, await projects.hasSchema(project), role === 'owner' ? await projects.ownerFlags(project) : undefined))
  })

  api.delete('/:username/:projectSlug', ownerSession, async (_req, res) => {
    await projects.delete(projectOf(res))
    res.json({ message: 'Project deleted' })
  })

  api.get('/:username/:projectSlug/members', ownerSession, async (req, res) => {
    const page = await projects.members(projectOf(res), pageQuery(req))
    res.json({ members: page.items, nextCursor: page.nextCursor } satisfies ResponseBody<'MemberList'>)
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
