// The reference page at /docs: Swagger UI (the swagger-ui-dist package, a dependency: no
// CDN) rendering /openapi.json, with "Try it out" authorized by the document's bearer
// security scheme. helmet's Content-Security-Policy forbids inline scripts, so the page is
// static HTML and its scripts are files under /docs/assets: the library's bundle, and
// DOCS_INIT (ours), which starts it.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export const DOCS_ASSETS_PATH = '/docs/assets'
const INIT_FILE = 'contentd-docs.js'

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>contentd API reference</title>
<link rel="icon" type="image/png" href="${DOCS_ASSETS_PATH}/favicon-32x32.png">
<link rel="stylesheet" href="${DOCS_ASSETS_PATH}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_ASSETS_PATH}/swagger-ui-bundle.js"></script>
<script src="${DOCS_ASSETS_PATH}/${INIT_FILE}"></script>
</body>
</html>
`

// Plain ES2017. validatorUrl null: Swagger UI would otherwise send the document to an online
// validator. "Authorize" takes the token for "Try it out" (the document's bearerAuth scheme).
export const DOCS_INIT = `(function () {
  'use strict';
  window.contentdReference = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    displayRequestDuration: true,
    presets: [SwaggerUIBundle.presets.apis]
  });
})();
`
const DOCS_INIT_BYTES = Buffer.from(DOCS_INIT)

interface Asset { type: string, body: () => Buffer }

const swaggerUiDirectory = () => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))

/** Read once, on first request. */
function fromSwaggerUi (file: string, type: string): Asset {
  let body: Buffer | undefined
  return { type, body: () => (body ??= readFileSync(join(swaggerUiDirectory(), file))) }
}

/** The files of /docs/assets/{file}; any other name is 404. */
export const DOCS_ASSETS: Record<string, Asset> = {
  'swagger-ui-bundle.js': fromSwaggerUi('swagger-ui-bundle.js', 'text/javascript'),
  'swagger-ui.css': fromSwaggerUi('swagger-ui.css', 'text/css'),
  'favicon-32x32.png': fromSwaggerUi('favicon-32x32.png', 'image/png'),
  [INIT_FILE]: { type: 'text/javascript', body: () => DOCS_INIT_BYTES }
}
