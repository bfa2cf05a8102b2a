// API keys: minted, listed and revoked by a signed-in user.
import { apiKeyBody, parseBody } from '../../../shared/schemas.js'
import type { Keys } from '../../services/keys.js'
import { identityOf, requireSession } from '../auth-middleware.js'
import { charge } from '../rate-limit.js'
import { jsonBody } from '../body.js'
import { pageQuery } from '../page-query.js'
import type { RouteScope } from '../route-table.js'

/** Scoped projects named on a key page per extra point of RATE_LIMIT. */
export const SCOPES_PER_POINT = 100

export function keyRoutes (api: RouteScope, keys: Keys, bodyLimitBytes: number): void {

  api.post('/keys', requireSession, jsonBody(bodyLimitBytes), async (req, res) => {
    const request = parseBody(apiKeyBody, req.body)
    res.status(201).json(await keys.create(identityOf(res), request))
  })

  api.get('/keys', requireSession, async (req, res) => {
    // The answer's JSON text, each key's part kept from an earlier page when the key and its
    // projects are unchanged (Keys.listJson): the body is what res.json of
    // {keys, nextCursor} (ResponseBody<'ApiKeyList'>) sends, byte for byte, with the headers
    // res.json sets (as constantJson in fast-path.ts sends them, without express's checks).
    const page = await keys.listJson(identityOf(res).user.id, pageQuery(req))
    // A page names up to KEY_PAGE_SCOPE_BUDGET scoped projects: the work of ~10 requests,
    // charged as such (one more point per SCOPES_PER_POINT), so listing keys in a loop runs
    // out of budget as fast as the work it makes (issue 12).
    charge(res, Math.floor(page.scopedProjects / SCOPES_PER_POINT))
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.setHeader('Content-Length', Buffer.byteLength(page.json))
    res.end(page.json)
  })

  api.delete('/keys/:id', requireSession, async (req, res) => {
    await keys.revoke(identityOf(res).user.id, String(req.params.id))
    res.json({ message: 'API key revoked' })
  })
}
