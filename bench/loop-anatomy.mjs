// What makes the event loop late under the 1 KiB increment load: `node bench/loop-anatomy.mjs
// [contentd|ceiling]` runs the server with bench/lib/loop-anatomy-probe.mjs, drives
// BENCH_DURATION seconds of increments (BENCH_CONNECTIONS, default 32, as `npm run bench`),
// and prints the event-loop delay percentiles (the 10 ms timer the metric uses) beside the
// garbage collections, the group commits and, with LOOP_ANATOMY_STRACE=1 and strace
// installed, every fsync by file: an fsync of contentd.sqlite itself is a WAL checkpoint.
// Then, for each late sample (> BENCH_LATE_MS, default 15), what ran while it waited.
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { owner } from './lib/contentd.mjs'
import { documentOfSize } from './lib/documents.mjs'
import { measure } from './lib/load.mjs'
import { PROJECT_ROOT, freePort, startChild, tempDir } from './lib/processes.mjs'

const target = process.argv[2] ?? 'contentd'
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const lateMs = Number(process.env.BENCH_LATE_MS ?? 15)
const strace = process.env.LOOP_ANATOMY_STRACE === '1'
const work = tempDir('anatomy')
const recordFile = join(work, 'record.json')
const straceFile = join(work, 'strace.txt')
const dataDir = join(work, 'data')
const port = await freePort()
const script = target === 'ceiling' ? join(PROJECT_ROOT, 'bench/ceiling-server.mjs') : join(PROJECT_ROOT, 'dist/server/index.js')
const nodeArgs = ['--import', join(PROJECT_ROOT, 'bench/lib/loop-anatomy-probe.mjs'), script]
const server = await startChild({
  name: target,
  command: strace ? 'strace' : process.execPath,
  args: strace ? ['-f', '--seccomp-bpf', '-e', 'trace=fsync,fdatasync', '-T', '-ttt', '-y', '-o', straceFile, process.execPath, ...nodeArgs] : nodeArgs,
  env: { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT: '0', LOG_LEVEL: 'warn', LOOP_ANATOMY_OUT: recordFile },
  port,
  readyPath: target === 'ceiling' ? '/' : '/healthz',
  cleanup: [work]
})
let record
try {
  let url = `${server.url}/api/@bench/demo/content/increment`
  let headers = { authorization: 'Bearer ck_unused' }
  if (target !== 'ceiling') {
    const user = await owner(server.url, 'bench')
    url = `${server.url}${await user.project('demo', documentOfSize(1024))}/content/increment`
    headers = { authorization: `Bearer ${user.key}` }
  }
  const result = await measure({ url, headers, body: JSON.stringify({ path: 'counter', value: 1 }), connections })
  console.log(`${target}, ${connections} connections: ${Math.round(result.reqPerSec)} req/s, latency p99 ${result.p99} ms, failed ${result.failed}`)
  // The probe writes its record on SIGTERM (under strace, the node process is strace's child).
  const nodePid = strace ? Number(readFileSync(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8').trim().split(/\s+/)[0]) : server.pid
  process.kill(nodePid, 'SIGTERM')
  for (let i = 0; i < 100 && !record; i++) {
    await new Promise(resolve => setTimeout(resolve, 100))
    try { record = JSON.parse(readFileSync(recordFile, 'utf8')) } catch { /* not written yet */ }
  }
  if (!record) throw new Error('the probe wrote no record')
  report(record, strace ? readFileSync(straceFile, 'utf8') : '')
} finally {
  await server.stop()
  rmSync(work, { recursive: true, force: true })
}

function report ({ samples, gc, commits, responses }, straceText) {
  // The measured window: the last BENCH_DURATION seconds of answers (warm-up excluded).
  const end = responses.at(-1)
  const start = end - Number(process.env.BENCH_DURATION ?? 10) * 1000
  const within = (rows, from, to) => rows.filter(row => row[0] >= from && row[0] < to)
  const fsyncs = [...straceText.matchAll(/^\d+\s+(\d+\.\d+) f(?:data)?sync\(\d+<([^>]*)>\).*<([\d.]+)>$/gm)]
    .map(m => [Number(m[1]) * 1000, m[2].replace(/^.*\//, ''), Number(m[3]) * 1000])
  const delays = within(samples, start, end).map(s => s[1]).sort((a, b) => a - b)
  const at = q => delays[Math.floor(q * (delays.length - 1))]
  console.log(`event-loop delay over ${delays.length} samples: p50 ${at(0.5).toFixed(1)} ms, p90 ${at(0.9).toFixed(1)}, p99 ${at(0.99).toFixed(1)}, max ${at(1).toFixed(1)}; ${(100 * delays.filter(d => d <= 10).length / delays.length).toFixed(1)}% ≤ 10 ms`)
  const sum = rows => rows.reduce((total, row) => total + row[1], 0)
  const measuredCommits = within(commits, start, end)
  if (measuredCommits.length > 0) {
    const durations = measuredCommits.map(c => c[1]).sort((a, b) => a - b)
    console.log(`group commits: ${durations.length}, p50 ${durations[Math.floor(durations.length / 2)].toFixed(2)} ms, p99 ${durations[Math.floor(0.99 * (durations.length - 1))].toFixed(2)}, max ${durations.at(-1).toFixed(2)}, ${sum(measuredCommits).toFixed(0)} ms in all`)
  }
  const collections = within(gc, start, end)
  for (const [kind, name] of [[1, 'minor (scavenge)'], [4, 'major'], [8, 'incremental marking']]) {
    const rows = collections.filter(c => c[2] === kind)
    if (rows.length > 0) console.log(`gc ${name}: ${rows.length}, ${sum(rows).toFixed(0)} ms in all, max ${Math.max(...rows.map(r => r[1])).toFixed(1)} ms`)
  }
  const files = new Map()
  for (const row of within(fsyncs, start, end)) files.set(row[1], [...(files.get(row[1]) ?? []), row])
  for (const [file, rows] of files) console.log(`fsync ${file}: ${rows.length}, ${rows.reduce((total, row) => total + row[2], 0).toFixed(0)} ms in all, max ${Math.max(...rows.map(r => r[2])).toFixed(1)} ms`)
  const late = within(samples, start, end).filter(s => s[1] > lateMs)
  const explained = { gc: 0, checkpoint: 0, commit: 0 }
  const answered = []
  for (const [time, delay] of late) {
    const from = time - 10 - delay
    if (sum(within(gc, from, time)) > 3) explained.gc++
    if (within(fsyncs, from, time).some(f => !f[1].endsWith('-wal'))) explained.checkpoint++
    if (sum(within(commits, from, time)) > 5) explained.commit++
    answered.push(responses.filter(r => r >= from && r < time).length)
  }
  answered.sort((a, b) => a - b)
  console.log(`samples later than ${lateMs} ms: ${late.length}; their wait held > 3 ms of gc: ${explained.gc}, > 5 ms of commits: ${explained.commit}` +
    `${strace ? `, a WAL checkpoint: ${explained.checkpoint}` : ''}; responses sent while they waited: median ${answered[Math.floor(answered.length / 2)] ?? 0}`)
}
