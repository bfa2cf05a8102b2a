// GET /openapi.json, and the reference page at /docs that renders it (docs-page.ts): static
// HTML and script files (helmet's CSP allows no inline scripts), served from the installed
// swagger-ui-dist package, no CDN. The document describes the routes of `table`: what this
// server really serves.
import { ContentdError } from '../../shared/errors.js'
import type { RouteScope, RouteTable } from '../http/route-table.js'
import { DOCS_ASSETS, DOCS_ASSETS_PATH, DOCS_HTML } from './docs-page.js'
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

  routes.get(`${DOCS_ASSETS_PATH}/:file`, (req, res) => {
    const asset = Object.hasOwn(DOCS_ASSETS, req.params.file as string) ? DOCS_ASSETS[req.params.file as string] : undefined
    if (!asset) throw new ContentdError('NOT_FOUND')
    // The files change only with the installed package: an hour's caching, revalidated by ETag.
    res.type(asset.type).setHeader('Cache-Control', 'public, max-age=3600')
    res.send(asset.body())
  })
}
