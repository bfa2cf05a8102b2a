// A project's content schema (docs/design.md §12): the owner, with a session, sets, reads and
// removes it. The body of PUT and the answer of GET are the JSON Schema itself.
import type { ProjectSchemas } from '../../services/schemas.js'
import type { Projects } from '../../services/projects.js'
import type { RouteScope } from '../route-table.js'
import { ownerDocumentRoutes } from './owner-document.js'

export function schemaRoutes (api: RouteScope, projects: Projects, schemas: ProjectSchemas, bodyLimitBytes: number): void {
  ownerDocumentRoutes(api, '/:username/:projectSlug/schema', projects, bodyLimitBytes, {
    set: async (project, body, setBy) => await schemas.set(project, body, setBy),
    get: async project => await schemas.get(project),
    remove: async project => { await schemas.remove(project) },
    setAt: record => record.setAt,
    document: record => record.schema,
    removed: 'Schema removed'
  })
}
