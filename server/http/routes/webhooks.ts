// A project's webhooks (docs/design.md §11): owner only, with a session.
import type { ResponseBody } from '../../../shared/api/index.js'
import { parseBody } from '../../../shared/schemas.js'
import { webhookBody } from '../../../shared/webhooks.js'
import type { Projects } from '../../services/projects.js'
import type { WebhookService } from '../../webhooks/service.js'
import { jsonBody } from '../body.js'
import { projectOf } from '../context.js'
import { ownerOnly } from '../owner-session.js'
import { pageQuery } from '../page-query.js'
import type { RouteScope } from '../route-table.js'

export function webhookRoutes (api: RouteScope, webhooks: WebhookService, projects: Projects, bodyLimitBytes: number): void {
  const owner = ownerOnly(projects)
  const base = '/:username/:projectSlug/webhooks'

  api.post(base, owner, jsonBody(bodyLimitBytes), async (req, res) => {
    res.status(201).json(await webhooks.create(projectOf(res), parseBody(webhookBody, req.body)))
  })

  // Paginated exactly as GET /api/keys (docs/design.md §13b).
  api.get(base, owner, async (req, res) => {
    const page = await webhooks.list(projectOf(res), pageQuery(req))
    res.json({ webhooks: page.items, nextCursor: page.nextCursor } satisfies ResponseBody<'WebhookList'>)
  })

  api.delete(`${base}/:id`, owner, async (req, res) => {
    await webhooks.delete(projectOf(res), String(req.params.id))
    res.json({ message: 'Webhook deleted' })
  })

  api.get(`${base}/:id/deliveries`, owner, async (req, res) => {
    res.json({ deliveries: await webhooks.deliveries(projectOf(res), String(req.params.id)) } satisfies ResponseBody<'DeliveryList'>)
  })

  api.post(`${base}/:id/test`, owner, async (req, res) => {
    res.json(await webhooks.ping(projectOf(res), String(req.params.id)))
  })
}
