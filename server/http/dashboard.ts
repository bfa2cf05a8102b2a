// The console at "/" (docs/console.md), served without a bundler:
//   /                  public/index.html, with an import map written in at start-up
//   /console/…         the console's modules, compiled from console/ by the server's own build
//   /shared/…          the compiled shared modules: the SDK (contentd/client) and what it uses
//   /vendor/…          the few browser modules the console needs from node_modules (Preact)
//   anything else      public/ (the stylesheet)
// The one bare import of the SDK, socket.io-client, maps to the ESM client that Socket.IO
// serves itself, so it always matches the server's version.
//
// An inline import map is a script as far as Content-Security-Policy goes: the page's
// response allows exactly that one script by its SHA-256, and otherwise keeps helmet's policy.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import express, { Router, type Response } from 'express'

/** Bare specifiers the console imports from node_modules, each served from the file npm resolves it to. */
const VENDOR_SPECIFIERS = ['preact', 'preact/hooks', 'preact/jsx-runtime']
/** Served by Socket.IO itself (server/realtime), on the same port. */
const SOCKET_IO_CLIENT = '/socket.io/socket.io.esm.min.js'
const IMPORT_MAP_SLOT = '<!-- contentd:importmap -->'

/** The repository root: the nearest folder above this module holding package.json. */
function projectRoot (): string {
  let dir = import.meta.dirname
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('cannot find the project root (package.json)')
    dir = parent
  }
  return dir
}

interface VendorModule { specifier: string, url: string, file: string }

/**
 * "preact/hooks" → /vendor/preact/hooks.mjs, served from node_modules/preact/hooks/dist/hooks.mjs.
 * The URL ends in the file's own name, so the source map it names resolves beside it.
 */
function vendorModules (): VendorModule[] {
  const resolve = createRequire(import.meta.url).resolve
  return VENDOR_SPECIFIERS.map(specifier => {
    const file = resolve(specifier)
    const folder = specifier.includes('/') ? `${dirname(specifier)}/` : ''
    return { specifier, url: `/vendor/${folder}${basename(file)}`, file }
  })
}

/** The page with its import map, and the Content-Security-Policy source that allows the map. */
export function consolePage (template: string, vendor: VendorModule[]): { html: string, scriptHash: string } {
  const imports = Object.fromEntries(vendor.map(m => [m.specifier, m.url]))
  const map = JSON.stringify({ imports: { ...imports, 'socket.io-client': SOCKET_IO_CLIENT } })
  if (!template.includes(IMPORT_MAP_SLOT)) throw new Error(`public/index.html lacks ${IMPORT_MAP_SLOT}`)
  const scriptHash = `'sha256-${createHash('sha256').update(map).digest('base64')}'`
  return { html: template.replace(IMPORT_MAP_SLOT, `<script type="importmap">${map}</script>`), scriptHash }
}

/** helmet's policy (already on the response) with one more allowed script. */
function allowScript (res: Response, source: string): void {
  const policy = res.getHeader('Content-Security-Policy')
  if (typeof policy !== 'string') return
  res.setHeader('Content-Security-Policy', policy.replace(/(^|;)script-src ([^;]*)/, `$1script-src $2 ${source}`))
}

export function dashboard (): Router {
  const root = projectRoot()
  const router = Router()
  const vendor = vendorModules()
  const { html, scriptHash } = consolePage(readFileSync(join(root, 'public', 'index.html'), 'utf8'), vendor)
  const sendPage = (_req: unknown, res: Response) => {
    allowScript(res, scriptHash)
    // Always revalidated: it names the modules, and they change with every build.
    res.setHeader('Cache-Control', 'no-cache')
    res.type('html').send(html)
  }
  router.get(['/', '/index.html'], sendPage)

  for (const { url, file } of vendor) {
    router.get(url, (_req, res) => res.sendFile(file))
    if (existsSync(`${file}.map`)) router.get(`${url}.map`, (_req, res) => res.sendFile(`${file}.map`))
  }
  router.use('/console', express.static(join(root, 'dist', 'console'), { index: false, fallthrough: true }))
  router.use('/shared', express.static(join(root, 'dist', 'shared'), { index: false, fallthrough: true }))
  router.use(express.static(join(root, 'public'), { index: false, fallthrough: true }))
  return router
}
