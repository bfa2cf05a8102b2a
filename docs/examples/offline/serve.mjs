// Serves the offline example without a bundler: the page and its script from this folder,
// the SDK as built (dist/shared/ at /sdk/), and the SDK's two dependencies as the browser
// ES modules their packages ship (/vendor/). The page keeps working when the contentd
// server is stopped: nothing it needs to start comes from there.
//
//   node scripts/build.mjs && node docs/examples/offline/serve.mjs   # then open the printed URL
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { dirname, extname, join, normalize, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, '..', '..', '..')
const ROUTES = [
  ['/sdk/', join(root, 'dist', 'shared')],
  ['/vendor/idb/', join(root, 'node_modules', 'idb', 'build')],
  ['/vendor/socket.io-client/', join(root, 'node_modules', 'socket.io-client', 'dist')],
  ['/', here]
]
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.map': 'application/json' }

/** Starts the example's server on `port` (0: any free one); resolves with it and its URL. */
export async function serveExample (port = 0) {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)
    const [prefix, dir] = ROUTES.find(([p]) => path.startsWith(p))
    const file = normalize(join(dir, path.slice(prefix.length) || 'index.html'))
    // Nothing outside the folder a route names.
    if (!file.startsWith(dir)) { res.writeHead(403).end(); return }
    try {
      const body = await readFile(file)
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(body)
    } catch {
      res.writeHead(404).end()
    }
  })
  await new Promise(resolve => server.listen(port, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${server.address().port}/` }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { url } = await serveExample(Number(process.argv[2] ?? 8080))
  console.log(`offline example at ${url}#server=http://127.0.0.1:3000&token=cdk_…&project=@alice/demo`)
  console.log('(start contentd with CORS_ORIGINS including this origin)')
}
