// Profiles contentd under one load: `node bench/profile.mjs [bytes] [increment|set|get|get-identity]` runs the server
// child with --cpu-prof, drives BENCH_DURATION seconds of increments on a document of the
// given size (default 1 KiB), and prints the functions with the most self time.
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { owner, startContentd } from './lib/contentd.mjs'
import { documentOfSize } from './lib/documents.mjs'
import { measure } from './lib/load.mjs'
import { tempDir } from './lib/processes.mjs'

const bytes = Number(process.argv[2] ?? 1024)
const op = process.argv[3] ?? 'increment'
const dir = tempDir('prof')
const server = await startContentd({}, ['--cpu-prof', `--cpu-prof-dir=${dir}`])
try {
  const user = await owner(server.url, 'bench')
  const path = await user.project('demo', documentOfSize(bytes))
  // get: as browsers ask (compressed, bench/scenarios/http.mjs); get-identity: uncompressed.
  const get = op.startsWith('get')
  const body = get ? undefined : JSON.stringify({ path: 'counter', value: 1 })
  const headers = { authorization: `Bearer ${user.key}`, ...(op === 'get' ? { 'accept-encoding': 'gzip, deflate, br, zstd' } : {}) }
  const result = await measure({ url: `${server.url}${path}/content${get ? '' : '/' + op}`, method: get ? 'GET' : 'POST', headers, body })
  console.log(`${op} on ${bytes} bytes: ${Math.round(result.reqPerSec)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, failed ${result.failed}`)
} finally {
  await server.stop()
}
const file = readdirSync(dir).find(f => f.endsWith('.cpuprofile'))
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'))
const selfTime = new Map()
const byId = new Map(profile.nodes.map(n => [n.id, n]))
const dt = profile.timeDeltas
const total = dt.reduce((a, b) => a + b, 0)
profile.samples.forEach((id, i) => {
  const { functionName, url, lineNumber } = byId.get(id).callFrame
  const key = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${lineNumber + 1}`
  selfTime.set(key, (selfTime.get(key) ?? 0) + (dt[i] ?? 0))
})
const top = [...selfTime].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 30))
for (const [name, us] of top) console.log(`${(100 * us / total).toFixed(1).padStart(5)}%  ${name}`)
// Inclusive time by package, to see which layer costs what.
const inclusive = new Map()
const parent = new Map()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
profile.samples.forEach((id, i) => {
  const seen = new Set()
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const url = byId.get(cur).callFrame.url
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
    const pkg = m ? m[1] : url.includes('/dist/') ? 'contentd:' + url.replace(/^.*\/dist\//, '') : null
    if (pkg && !seen.has(pkg)) { seen.add(pkg); inclusive.set(pkg, (inclusive.get(pkg) ?? 0) + (dt[i] ?? 0)) }
  }
})
const selfByModule = new Map()
profile.samples.forEach((id, i) => {
  const { url, functionName } = byId.get(id).callFrame
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  const name = m ? m[1] : url.includes('/dist/') ? 'contentd:' + url.replace(/^.*\/dist\//, '') : url.startsWith('node:') ? 'node:' + url.slice(5).split('/')[0] : `(${functionName || url || 'native'})`
  selfByModule.set(name, (selfByModule.get(name) ?? 0) + (dt[i] ?? 0))
})
console.log('\nself time by module:')
for (const [name, us] of [...selfByModule].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${(100 * us / total).toFixed(1).padStart(5)}%  ${name}`)
console.log('\ninclusive by module:')
for (const [name, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${(100 * us / total).toFixed(1).padStart(5)}%  ${name}`)
rmSync(dir, { recursive: true, force: true })
