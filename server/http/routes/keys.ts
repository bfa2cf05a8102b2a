// API keys: minted, listed and revoked by a signed-in user.
import { apiKeyBody, parseBody } from '../../../shared/schemas.js'
import type { Keys } from '../../services/keys.js'
import { identityOf, requireSession } from '../auth-middleware.js'
import { jsonBody } from '../body.js'
import { pageQuery } from '../page-query.js'
import type { RouteScope } from '../route-table.js'

export function keyRoutes (api: RouteScope, keys: Keys, bodyLimitBytes: number): void {

  api.post('/keys', requireSession, jsonBody(bodyLimitBytes), async (req, res) => {
    const request = parseBody(apiKeyBody, req.body)
    res.status(201).json(await keys.create(identityOf(res), request))
  })

  api.get('/keys', requireSession, async (req, res) => {
    const page = await keys.list(identityOf(res).user.id, pageQuery(req))
    res.json({ keys: page.items, nextCursor: page.nextCursor })
  })

  api.delete('/keys/:id', requireSession, async (req, res) => {
    await keys.revoke(identityOf(res).user.id, String(req.params.id))
    res.json({ message: 'API key revoked' })
  })
}
