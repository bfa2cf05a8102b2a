// Profiles contentd under one load: `node bench/profile.mjs [bytes] [increment|set|set100k|get|get-identity] [--baseline[=REF]]`
// (`npm run bench:profile` is the 1 KiB increment) runs the server child with --cpu-prof,
// drives BENCH_DURATION seconds of the load (after BENCH_WARMUP) on a document of the given
// size (default 1 KiB), and prints the functions with the most self time, self and inclusive
// time by module, and the table of self time by layer that BENCHMARKS.md shows under "Where
// the time goes" (bench/lib/profile-layers.mjs). With --baseline the same load is profiled
// first on the build of REF (default BENCH_BASELINE_REF, 89649a9; bench/lib/baseline.mjs),
// and the layer table has a column for each: before and after. BENCH_SERVER_ENV: settings for
// the server, e.g. 'HISTORY=off' (space-separated NAME=value).
import { copyFileSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { baselineBuild } from './lib/baseline.mjs'
import { owner, startContentd } from './lib/contentd.mjs'
import { documentOfSize } from './lib/documents.mjs'
import { fmt } from './lib/format.mjs'
import { WARMUP_S, measure } from './lib/load.mjs'
import { layerTable, layerTimes } from './lib/profile-layers.mjs'
import { settingsFrom, tempDir } from './lib/processes.mjs'

const flags = process.argv.slice(2).filter(a => a.startsWith('--'))
const [bytesArg, opArg] = process.argv.slice(2).filter(a => !a.startsWith('--'))
const bytes = Number(bytesArg ?? 1024)
const op = opArg ?? 'increment'
const baselineFlag = flags.find(f => f === '--baseline' || f.startsWith('--baseline='))

/** One profiled run of the load on the build at `root` (this tree's when undefined): its profile and req/s. */
async function profiled (root) {
  const dir = tempDir('prof')
  const window = {}
  try {
    const server = await startContentd(settingsFrom('BENCH_SERVER_ENV'), ['--cpu-prof', `--cpu-prof-dir=${dir}`], { root })
    let result
    try {
      const user = await owner(server.url, 'bench')
      const path = await user.project('demo', documentOfSize(bytes))
      // get: as browsers ask (compressed, bench/scenarios/http.mjs); get-identity: uncompressed.
      const get = op.startsWith('get')
      // set100k: the `set100k` scenario's write, a ~100 KB value at settings.blob (bench/scenarios/http.mjs).
      const body = get ? undefined : op === 'set100k' ? JSON.stringify({ path: 'settings.blob', value: documentOfSize(100 * 1000) }) : JSON.stringify({ path: 'counter', value: 1 })
      const headers = { authorization: `Bearer ${user.key}`, ...(op === 'get' ? { 'accept-encoding': 'gzip, deflate, br, zstd' } : {}) }
      const load = { url: `${server.url}${path}/content${get ? '' : '/' + (op === 'set100k' ? 'set' : op)}`, method: get ? 'GET' : 'POST', headers, body }
      await measure({ ...load, duration: WARMUP_S, warmup: false })
      // The layer table covers the measured seconds only (V8 stamps samples with this monotonic clock).
      window.from = Number(process.hrtime.bigint() / 1000n)
      result = await measure({ ...load, warmup: false })
      window.to = Number(process.hrtime.bigint() / 1000n)
      console.log(`${op} on ${bytes} bytes${root ? ` (${root})` : ''}: ${Math.round(result.reqPerSec)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, failed ${result.failed}`)
    } finally {
      // The profile is written when the server exits.
      await server.stop()
    }
    const file = readdirSync(dir).find(f => f.endsWith('.cpuprofile'))
    // BENCH_PROFILE_OUT=<dir>: keep the .cpuprofile (for DevTools, or an analysis of one function).
    if (process.env.BENCH_PROFILE_OUT) copyFileSync(join(dir, file), join(process.env.BENCH_PROFILE_OUT, `${root ? 'baseline' : 'build'}-${op}-${bytes}.cpuprofile`))
    return { profile: JSON.parse(readFileSync(join(dir, file), 'utf8')), reqPerSec: result.reqPerSec, window }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Layer times of the measured seconds; all samples if none fell in them (a clock that is not the same). */
function measuredLayers (run) {
  const within = layerTimes(run.profile, run.window)
  if (within.total > 0) return within
  console.log('(no samples within the measured seconds: the layer table counts the whole profile)')
  return layerTimes(run.profile)
}

const columns = []
if (baselineFlag) {
  const baseline = baselineBuild(baselineFlag.includes('=') ? baselineFlag.slice('--baseline='.length) : undefined)
  if (!baseline) throw new Error('--baseline with BENCH_BASELINE_REF=none: name a commit (--baseline=REF)')
  const before = await profiled(baseline.root)
  columns.push({ title: `commit ${baseline.ref} (${fmt(before.reqPerSec)} req/s)`, times: measuredLayers(before) })
}
const now = await profiled(undefined)
const { profile } = now
columns.push({ title: `this build (${fmt(now.reqPerSec)} req/s)`, times: measuredLayers(now) })

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
console.log(`\nself time by layer (${op} on ${bytes} bytes, the server's samples over the measured BENCH_DURATION=${process.env.BENCH_DURATION ?? 10} s, after a ${WARMUP_S} s warm-up):\n`)
console.log(layerTable(columns))
