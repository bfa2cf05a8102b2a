// The console at "/" (docs/console.md), served without a bundler:
//   /                  public/index.html, with an import map written in at start-up
//   /console/…         the console's modules, compiled from console/ by the server's own build
//   /shared/…          the compiled shared modules: the SDK (contentd/client) and what it uses
//   /vendor/…          the browser modules the console needs from node_modules: Preact, and
//                      CodeMirror's packages (vendor-modules.ts finds them by their imports),
//                      which only the editors load, with import() (console/editor/)
//   anything else      public/ (the stylesheet)
// The one bare import of the SDK, socket.io-client, maps to the ESM client that Socket.IO
// serves itself, so it always matches the server's version.
//
// An inline import map is a script as far as Content-Security-Policy goes: the page's
// response allows exactly that one script by its SHA-256, and otherwise keeps helmet's policy.
// Styles: CodeMirror writes its theme into <style> elements at run time. Rather than helmet's
// `style-src 'unsafe-inline'`, each page answer carries a fresh nonce, in the policy and in
// <meta property="csp-nonce">, where the editor reads it (EditorView.cspNonce). Inline style
// attributes are then refused too; none is needed (SECURITY.md, "The console's policy").
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import express, { Router, type Response } from 'express'
import { vendorGraph } from './vendor-modules.js'

/** Bare specifiers the console imports from node_modules, each served from the file npm resolves it to. */
const VENDOR_SPECIFIERS = ['preact', 'preact/hooks', 'preact/jsx-runtime']
/** Served by Socket.IO itself (server/realtime), on the same port. */
const SOCKET_IO_CLIENT = '/socket.io/socket.io.esm.min.js'
const IMPORT_MAP_SLOT = '<!-- contentd:importmap -->'
const NONCE_SLOT = '<!-- contentd:nonce -->'
/** The packages the editors import (console/editor/setup.ts); what they import in turn is found. */
export const EDITOR_PACKAGES = ['@codemirror/state', '@codemirror/view', '@codemirror/language', '@codemirror/lang-json', '@codemirror/lint', '@codemirror/autocomplete', 'codemirror']

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

/**
 * The page with its import map, and the Content-Security-Policy source that allows the map.
 * `withNonce` fills in one answer's style nonce.
 */
export function consolePage (template: string, vendor: VendorModule[]): { withNonce: (nonce: string) => string, scriptHash: string } {
  const imports = Object.fromEntries(vendor.map(m => [m.specifier, m.url]))
  const map = JSON.stringify({ imports: { ...imports, 'socket.io-client': SOCKET_IO_CLIENT } })
  for (const slot of [IMPORT_MAP_SLOT, NONCE_SLOT]) if (!template.includes(slot)) throw new Error(`public/index.html lacks ${slot}`)
  const scriptHash = `'sha256-${createHash('sha256').update(map).digest('base64')}'`
  const [before, after] = template.replace(IMPORT_MAP_SLOT, `<script type="importmap">${map}</script>`).split(NONCE_SLOT) as [string, string]
  return { withNonce: nonce => `${before}<meta property="csp-nonce" nonce="${nonce}">${after}`, scriptHash }
}

/**
 * helmet's policy (already on the response) with one more allowed script, and styles from
 * this origin or carrying the nonce, instead of helmet's `https: 'unsafe-inline'`.
 */
export function consolePolicy (policy: string, scriptSource: string, nonce: string): string {
  return policy
    .replace(/(^|;)script-src ([^;]*)/, `$1script-src $2 ${scriptSource}`)
    .replace(/(^|;)style-src [^;]*/, `$1style-src 'self' 'nonce-${nonce}'`)
}

export function dashboard (): Router {
  const root = projectRoot()
  const router = Router()
  const vendor = vendorModules()
  const editor = vendorGraph(EDITOR_PACKAGES)
  const { withNonce, scriptHash } = consolePage(readFileSync(join(root, 'public', 'index.html'), 'utf8'), [...vendor, ...editor.modules])
  const sendPage = (_req: unknown, res: Response) => {
    const nonce = randomBytes(16).toString('base64')
    const policy = res.getHeader('Content-Security-Policy')
    if (typeof policy === 'string') res.setHeader('Content-Security-Policy', consolePolicy(policy, scriptHash, nonce))
    // Never stored: it names the modules (they change with every build) and carries this answer's nonce.
    res.setHeader('Cache-Control', 'no-store')
    res.type('html').send(withNonce(nonce))
  }
  router.get(['/', '/index.html'], sendPage)

  for (const { url, file } of vendor) {
    router.get(url, (_req, res) => res.sendFile(file))
    if (existsSync(`${file}.map`)) router.get(`${url}.map`, (_req, res) => res.sendFile(`${file}.map`))
  }
  for (const { name, folder } of editor.packages) router.use(`/vendor/${name}`, express.static(folder, { index: false, fallthrough: false }))
  router.use('/console', express.static(join(root, 'dist', 'console'), { index: false, fallthrough: true }))
  router.use('/shared', express.static(join(root, 'dist', 'shared'), { index: false, fallthrough: true }))
  router.use(express.static(join(root, 'public'), { index: false, fallthrough: true }))
  return router
}
