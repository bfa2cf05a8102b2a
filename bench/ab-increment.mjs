// A/B of two builds of contentd on the increment load, interleaved, for changes too small for
// `npm run bench` to resolve on a shared machine: server CPU per request (user + system, all
// threads, from /proc) and req/s of each build, round by round, A, B, A, B…
//   node bench/ab-increment.mjs <rootA> <rootB>   each root holds dist/ (and package.json)
// Copy a build aside first, e.g. `mkdir -p /tmp/A && cp -r dist package.json /tmp/A/ &&
// ln -s "$PWD/node_modules" "$PWD/public" /tmp/A/`. BENCH_ROUNDS (default 4),
// BENCH_DURATION (default 8 s), BENCH_WARMUP (default 2 s) per measurement.
// BENCH_AB_TOGETHER=1: both builds are loaded at the same time (16 connections each), so
// whatever else runs on the machine weighs on both alike; each round's B ÷ A is then paired.
// BENCH_ENV_A / BENCH_ENV_B: settings for that build's server, e.g. BENCH_ENV_B='HISTORY=off'
// (space-separated NAME=value), to weigh a setting within one build.
import { join, resolve } from 'node:path'
import { owner } from './lib/contentd.mjs'
import { documentOfSize } from './lib/documents.mjs'
import { measure } from './lib/load.mjs'
import { freePort, settingsFrom, startChild, stopAll, tempDir } from './lib/processes.mjs'

const roots = process.argv.slice(2, 4).map(r => resolve(r))
if (roots.length !== 2) throw new Error('usage: node bench/ab-increment.mjs <rootA> <rootB>')
const rounds = Number(process.env.BENCH_ROUNDS ?? 4)
const duration = Number(process.env.BENCH_DURATION ?? 8)

async function start (root, label) {
  const port = await freePort()
  const dataDir = tempDir(`ab-${label}`)
  const server = await startChild({
    name: `contentd ${label}`,
    args: [join(root, 'dist/server/index.js')],
    env: { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT: '0', LOG_LEVEL: 'warn', ...settingsFrom(`BENCH_ENV_${label}`) },
    port,
    readyPath: '/healthz',
    cleanup: [dataDir]
  })
  const user = await owner(server.url, 'bench')
  const path = await user.project('demo', documentOfSize(1024))
  return { label, server, target: { url: `${server.url}${path}/content/increment`, method: 'POST', headers: { authorization: `Bearer ${user.key}` }, body: JSON.stringify({ path: 'counter', value: 1 }) } }
}

const builds = [await start(roots[0], 'A'), await start(roots[1], 'B')]
const results = { A: [], B: [] }
try {
  for (let round = 0; round < rounds; round++) {
    if (process.env.BENCH_AB_TOGETHER === '1') {
      const both = await Promise.all(builds.map(build => measure({ ...build.target, duration, pid: build.server.pid, connections: 16 })))
      both.forEach((r, i) => {
        const { label } = builds[i]
        if (r.failed) throw new Error(`${label}: failed run ${JSON.stringify(r.statusCodes)}`)
        results[label].push(r)
        console.log(`round ${round + 1} ${label}: ${Math.round(r.reqPerSec)} req/s, ${(r.cpuPerRequest * 1000).toFixed(0)} µs CPU/req, p99 ${r.p99} ms`)
      })
      continue
    }
    // A, B in even rounds; B, A in odd ones, so neither always runs first.
    for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
      const r = await measure({ ...build.target, duration, pid: build.server.pid })
      if (r.failed) throw new Error(`${build.label}: failed run ${JSON.stringify(r.statusCodes)}`)
      results[build.label].push(r)
      console.log(`round ${round + 1} ${build.label}: ${Math.round(r.reqPerSec)} req/s, ${(r.cpuPerRequest * 1000).toFixed(0)} µs CPU/req, p99 ${r.p99} ms`)
    }
  }
} finally {
  await stopAll()
}
const median = xs => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
for (const label of ['A', 'B']) {
  const cpu = results[label].map(r => r.cpuPerRequest * 1000)
  console.log(`${label}: CPU/req median ${median(cpu).toFixed(0)} µs (${cpu.map(c => c.toFixed(0)).join(', ')}), req/s median ${Math.round(median(results[label].map(r => r.reqPerSec)))}`)
}
const ratios = results.B.map((b, i) => b.cpuPerRequest / results.A[i].cpuPerRequest)
console.log(`B ÷ A CPU/req per round: ${ratios.map(r => r.toFixed(3)).join(', ')}; median ${median(ratios).toFixed(3)}`)
