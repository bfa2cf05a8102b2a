// `npm run bench`: every scenario in one process tree on this machine, side by side, then
// Markdown tables with the machine and the ratios against goals: on stdout, and in
// BENCHMARKS.md between its results markers (the hand-written rest of the file is kept).
//   BENCH_DURATION=10   seconds measured per HTTP scenario (after BENCH_WARMUP=2 seconds of load)
//   BENCH_ONLY=a,b      run only these scenarios (names below)
//   BENCH_NO_WRITE=1    print only, leave BENCHMARKS.md alone
//   BENCH_ROUNDS=5      rounds the ceiling and increment scenarios alternate in
//   BENCH_FAIRNESS_ROUNDS=3  quiet/flooded rounds of the fairness scenario (BENCH_DURATION s each)
//   BENCH_WIDE_SUBSCRIBERS=10000, BENCH_WIDE_CHANGES=30   the wide fan-out's subscribers and changes (and the plain-`net` floor's sockets and rounds, netFloor)
//   BENCH_SSE_CPU_SUBSCRIBERS=1000, BENCH_SSE_CPU_CHANGES=100, BENCH_SSE_CPU_ROUNDS=3   SSE ÷ Socket.IO server CPU per change (bench/scenarios/sse-cpu.mjs)
//   BENCH_BASELINE_REF=89649a9   the commit the 100 KB set is compared with (set100k; built once into a cache, bench/lib/baseline.mjs); 'none' skips it
//   BENCH_ATTACKS=patch,…, BENCH_ATTACK_SECONDS=10, BENCH_ATTACK_REVERTS=110   the attacks scenario (bench/scenarios/attacks.mjs)
//   BENCH_BACKUP_MIB=1024   the size of the store the backup scenario builds and backs up (bench/scenarios/backup.mjs)
//   BENCH_QUERY_CHILDREN=50000, BENCH_QUERY_SUBSCRIBERS=1000, BENCH_QUERY_CHANGES=50, BENCH_QUERY_CPU_CHANGES=300   live queries (bench/scenarios/queries.mjs)
//   BENCH_PRESENCE_MEMBERS=1000,250, BENCH_PRESENCE_SECONDS=10   the presence fan-out's sizes (a row each) and length
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describeMachine } from './lib/machine.mjs'
import { PROJECT_ROOT, stopAll } from './lib/processes.mjs'
import { renderResults, spliceResults } from './lib/report.mjs'
import * as http from './scenarios/http.mjs'
import { peer } from './scenarios/peer.mjs'
import { resume } from './scenarios/resume.mjs'
import { livePaths } from './scenarios/live-paths.mjs'
import { memory } from './scenarios/memory.mjs'
import { fanout } from './scenarios/fanout.mjs'
import { fanoutWide } from './scenarios/fanout-wide.mjs'
import { netFloor } from './scenarios/net-floor.mjs'
import { sseCpu } from './scenarios/sse-cpu.mjs'
import { consoleScenario } from './scenarios/console.mjs'
import { history } from './scenarios/history.mjs'
import { fairness } from './scenarios/fairness.mjs'
import { presence } from './scenarios/presence.mjs'
import { batch } from './scenarios/batch.mjs'
import { attacks } from './scenarios/attacks.mjs'
import { backup } from './scenarios/backup.mjs'
import { queries } from './scenarios/queries.mjs'
import { queryEncodings } from './scenarios/query-encodings.mjs'
import { jsonWork } from './scenarios/json-work.mjs'
import { rulesIncrement } from './scenarios/rules.mjs'

const SCENARIOS = {
  ceiling: http.ceiling,
  increment1k: http.incrementSmall,
  increment1m: http.incrementLarge,
  increment1mSchema: http.incrementLargeSchema,
  increment1kNoHistory: http.incrementSmallNoHistory,
  rulesIncrement,
  set: http.setValue,
  set100k: http.setLarge,
  push: http.push,
  get: http.getLarge,
  hot: http.hotCounter,
  batch,
  resume,
  sseCpu,
  paths: livePaths,
  peer,
  fanout,
  fanoutWide,
  netFloor,
  history,
  fairness,
  attacks,
  backup,
  jsonWork,
  presence,
  queries,
  queryEncodings,
  memory,
  console: consoleScenario
}

const only = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map(s => s.trim()) : Object.keys(SCENARIOS)
for (const name of only) if (!(name in SCENARIOS)) { console.error(`unknown scenario ${name}; known: ${Object.keys(SCENARIOS).join(', ')}`); process.exit(2) }

process.on('SIGINT', () => { stopAll().finally(() => process.exit(130)) })

const machine = describeMachine()
const results = {}
// The ceiling and the increments are compared with each other: measured together, interleaved.
// Every other scenario is a step of its own.
const ratioNames = only.filter(name => http.RATIO_SCENARIOS.includes(name))
const interleaved = ratioNames.length > 1 ? ratioNames : []
const steps = [
  ...(interleaved.length > 0 ? [{ names: interleaved, label: `${interleaved.join(', ')}, interleaved`, run: () => http.ratioScenarios(interleaved) }] : []),
  ...only.filter(name => !interleaved.includes(name)).map(name => ({ names: [name], label: name, run: async () => ({ [name]: await SCENARIOS[name]() }) }))
]
for (const step of steps) {
  process.stderr.write(`bench: ${step.label}…\n`)
  try {
    Object.assign(results, await step.run())
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    for (const name of step.names) results[name] = { scenario: name, error: message, failed: true }
    process.stderr.write(`bench: ${step.label} failed: ${message}\n`)
  }
}
await stopAll()

const report = renderResults({ machine, results, date: new Date().toISOString() })
process.stdout.write(report + '\n')
if (!process.env.BENCH_NO_WRITE && !process.env.BENCH_ONLY) {
  const file = join(PROJECT_ROOT, 'BENCHMARKS.md')
  writeFileSync(file, spliceResults(readFileSync(file, 'utf8'), report))
}
const anyFailed = Object.values(results).flat().some(r => r.failed && !r.pending)
process.exitCode = anyFailed ? 1 : 0
