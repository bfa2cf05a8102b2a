// GET /openapi.json, and the reference page at /docs that renders it. The page is static
// HTML plus one script file (helmet's CSP allows no inline scripts) and uses no CDN.
import { Router } from 'express'
import { DOCS_HTML, DOCS_SCRIPT } from './docs-page.js'
import { buildOpenApiDocument } from './spec.js'

export function openApiRoutes (): Router {
  const router = Router()
  let json: string | undefined

  router.get('/openapi.json', (_req, res) => {
    json ??= JSON.stringify(buildOpenApiDocument(), null, 2)
    res.type('application/json').send(json)
  })

  router.get('/docs', (_req, res) => {
    res.type('text/html').send(DOCS_HTML)
  })

  router.get('/docs/reference.js', (_req, res) => {
    res.type('text/javascript').send(DOCS_SCRIPT)
  })

  return router
}
