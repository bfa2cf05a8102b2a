// A project's content schema (docs/design.md §12): the owner, with a session, sets, reads and
// removes it. The body of PUT and the answer of GET are the JSON Schema itself.
import type { ProjectSchemas } from '../../services/schemas.js'
import type { Projects } from '../../services/projects.js'
import { displayName } from '../../services/identity.js'
import { identityOf } from '../auth-middleware.js'
import { jsonBody } from '../body.js'
import { projectOf } from '../context.js'
import { ownerOnly } from '../owner-session.js'
import type { RouteScope } from '../route-table.js'

export function schemaRoutes (api: RouteScope, projects: Projects, schemas: ProjectSchemas, bodyLimitBytes: number): void {
  const ownerSession = ownerOnly(projects)
  const path = '/:username/:projectSlug/schema'

  api.put(path, ownerSession, jsonBody(bodyLimitBytes), async (req, res) => {
    res.json(await schemas.set(projectOf(res), req.body, displayName(identityOf(res).user.username)))
  })

  api.get(path, ownerSession, async (_req, res) => {
    const record = await schemas.get(projectOf(res))
    res.setHeader('Last-Modified', new Date(record.setAt).toUTCString())
    res.json(record.schema)
  })

  api.delete(path, ownerSession, async (_req, res) => {
    await schemas.remove(projectOf(res))
    res.json({ message: 'Schema removed' })
  })
}
