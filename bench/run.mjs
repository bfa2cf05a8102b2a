// `npm run bench`: every scenario in one process tree on this machine, side by side, then a
// Markdown table (stdout and BENCHMARKS.md) with the machine and the ratios against goals.
//   BENCH_DURATION=10   seconds measured per HTTP scenario (after BENCH_WARMUP=2 seconds)
//   BENCH_ONLY=a,b      run only these scenarios (names below)
//   BENCH_NO_WRITE=1    print only, leave BENCHMARKS.md alone
//   BENCH_ROUNDS=5      rounds the ceiling and increment scenarios alternate in
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describeMachine } from './lib/machine.mjs'
import { PROJECT_ROOT, stopAll } from './lib/processes.mjs'
import { renderReport } from './lib/report.mjs'
import * as http from './scenarios/http.mjs'
import { peer } from './scenarios/peer.mjs'
import { memory } from './scenarios/memory.mjs'
import { fanout } from './scenarios/fanout.mjs'

const SCENARIOS = {
  ceiling: http.ceiling,
  increment1k: http.incrementSmall,
  increment1m: http.incrementLarge,
  set: http.setValue,
  push: http.push,
  get: http.getLarge,
  hot: http.hotCounter,
  peer,
  fanout,
  memory
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

const report = renderReport({ machine, results, date: new Date().toISOString() })
process.stdout.write(report)
if (!process.env.BENCH_NO_WRITE && !process.env.BENCH_ONLY) writeFileSync(join(PROJECT_ROOT, 'BENCHMARKS.md'), report)
const anyFailed = Object.values(results).flat().some(r => r.failed && !r.pending)
process.exitCode = anyFailed ? 1 : 0
