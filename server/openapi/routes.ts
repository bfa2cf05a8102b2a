// GET /openapi.json, and the reference page at /docs that renders it. The page is static
// HTML plus one script file (helmet's CSP allows no inline scripts) and uses no CDN. The
// document describes the routes of `table`: what this server really serves.
import type { RouteScope, RouteTable } from '../http/route-table.js'
import { DOCS_HTML, DOCS_SCRIPT } from './docs-page.js'
import { buildOpenApiDocument } from './spec.js'

export function openApiRoutes (routes: RouteScope, table: RouteTable): void {
  let json: string | undefined

  routes.get('/openapi.json', (_req, res) => {
    json ??= JSON.stringify(buildOpenApiDocument(table.routes), null, 2)
    res.type('application/json').send(json)
  })

  routes.get('/docs', (_req, res) => {
    res.type('text/html').send(DOCS_HTML)
  })

  routes.get('/docs/reference.js', (_req, res) => {
    res.type('text/javascript').send(DOCS_SCRIPT)
  })
}
