// Fairness under abuse (issue 12): one contentd with its default limits. @bob increments a
// counter at a steady 50 requests per second; his p99 is measured quietly, then while @alice
// floods from a process of its own (flood-worker.mjs): her 1,000 keys, each scoped to 100
// projects, listed page after page by 4 clients; 4 sockets re-subscribing to her ~1 MiB
// project as fast as the acks come; 4 clients opening Engine.IO handshakes. Quiet and flooded
// phases alternate (BENCH_ROUNDS rounds), so drift in the machine's speed hits both alike.
// The goal: bob's p99 under the flood stays within 2× its quiet value.
import { loadavg } from 'node:os'
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { documentOfSize } from '../lib/documents.mjs'
import { DURATION_S } from '../lib/load.mjs'
import { summary } from '../lib/percentiles.mjs'
import { cpuMs } from '../lib/processes.mjs'
import { victimPhase } from '../lib/victim.mjs'

const ROUNDS = Number(process.env.BENCH_FAIRNESS_ROUNDS ?? 3)
const PHASE_MS = Math.max(2, DURATION_S) * 1000
const PACE_MS = 20
const KEYS = 1000
const PROJECTS = 100
const MiB = 1024 * 1024
// Clients per flood; BENCH_FAIRNESS_FLOOD=keyWalkers:4,resubscribers:0,… to look at one alone.
const FLOODERS = { keyWalkers: 4, resubscribers: 4, handshakers: 4 }
for (const part of (process.env.BENCH_FAIRNESS_FLOOD ?? '').split(',').filter(Boolean)) {
  const [name, count] = part.split(':')
  if (!(name in FLOODERS) || !/^\d+$/.test(count ?? '')) throw new Error(`BENCH_FAIRNESS_FLOOD: ${part}? (expected e.g. keyWalkers:4,resubscribers:0,handshakers:0)`)
  FLOODERS[name] = Number(count)
}

// Where the flooder runs: by default its own process in its own session (setsid), so on a
// shared machine the kernel's per-session CPU share keeps its client-side work (HTTP and
// Socket.IO parsing) from being taken out of the server's and bob's share, as if it came
// from another machine; BENCH_FAIRNESS_FLOODER=thread runs it in a worker thread of this
// process, sharing bob's share (the first measurements of issue 12).
const FLOODER_IN = process.env.BENCH_FAIRNESS_FLOODER ?? 'process'
if (!['process', 'thread'].includes(FLOODER_IN)) throw new Error(`BENCH_FAIRNESS_FLOODER: ${FLOODER_IN}? (process or thread)`)

/** Starts the flood; stop() ends it and gives what the server answered it. */
function startFlood (orders) {
  const script = new URL('./flood-worker.mjs', import.meta.url)
  if (FLOODER_IN === 'thread') {
    const worker = new Worker(script, { workerData: orders })
    const counted = new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject) })
    return { async stop () { worker.postMessage('stop'); const counts = await counted; await worker.terminate(); return counts } }
  }
  const child = fork(fileURLToPath(script), [], { detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const counted = new Promise((resolve, reject) => { child.once('message', resolve); child.once('error', reject); child.once('exit', code => reject(new Error(`flooder exited with ${code}`))) })
  child.send(orders)
  return { pid: child.pid, async stop () { child.send('stop'); const counts = await counted; child.kill(); return counts } }
}

/** A call that waits out 429s: setting up 1,100 things must stay inside RATE_LIMIT. */
async function patiently (what, send) {
  for (;;) {
    const r = await send()
    if (r.status !== 429) return r
    await new Promise(resolve => setTimeout(resolve, Number(r.headers.get('retry-after') ?? 1) * 1000))
  }
}

async function prepareFlooder (base) {
  const alice = await owner(base, 'alice')
  const refs = []
  for (let i = 0; i < PROJECTS; i++) {
    await expectStatus(patiently('project', () => call(base, 'POST', '/api/projects', { token: alice.session, body: { slug: `p${i}` } })), 201, 'create project')
    refs.push(`@alice/p${i}`)
  }
  let made = 1 // owner() made one key already
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (made < KEYS) {
      made++
      await expectStatus(patiently('key', () => call(base, 'POST', '/api/keys', { token: alice.session, body: { name: `k${made}`, permission: 'read', projects: refs } })), 201, 'create key')
    }
  }))
  const big = await patiently('big project', () => call(base, 'POST', '/api/projects', { token: alice.session, body: { slug: 'big' } }))
  // The 101st project: past a quota of 100 here only if the default changed.
  await expectStatus(Promise.resolve(big), 201, 'create big project')
  await expectStatus(patiently('big content', () => call(base, 'POST', '/api/@alice/big/content', { token: alice.key, body: documentOfSize(MiB - 512) })), 200, 'big content')
  return { session: alice.session, project: '@alice/big' }
}

export async function fairness () {
  // BENCH_FAIRNESS_PROFILE=dir: the server runs with --cpu-prof, its profile written there on stop.
  const profileDir = process.env.BENCH_FAIRNESS_PROFILE
  const server = await startContentd({ RATE_LIMIT: '6000' }, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])
  try {
    const flooder = await prepareFlooder(server.url)
    const bob = await owner(server.url, 'bob')
    const path = await bob.project('counter', documentOfSize(1024))
    // Warm-up: JIT and caches, for bob's requests.
    await victimPhase(server.url, bob.key, path, 2000, PACE_MS)

    const quiet = { latencies: [], failures: 0 }
    const flooded = { latencies: [], failures: 0 }
    // CPU time (ms) the server and the bench process (bob's client and the flooder's thread) used in each phase.
    const cpu = { quietServer: 0, floodedServer: 0, quietBench: 0, floodedBench: 0 }
    const benchCpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
    const flood = { keyPages: 0, keyPagesLimited: 0, snapshots: 0, subscribesLimited: 0, handshakes: 0, handshakesLimited: 0, errors: 0 }
    for (let round = 0; round < ROUNDS; round++) {
      let serverAt = cpuMs(server.pid)
      let benchAt = benchCpuMs()
      const calm = await victimPhase(server.url, bob.key, path, PHASE_MS, PACE_MS)
      cpu.quietServer += cpuMs(server.pid) - serverAt
      cpu.quietBench += benchCpuMs() - benchAt
      quiet.latencies.push(...calm.latencies)
      quiet.failures += calm.failures

      const flooding = startFlood({ url: server.url, ...flooder, ...FLOODERS })
      // Let the flood build up before measuring under it.
      await new Promise(resolve => setTimeout(resolve, 1000))
      serverAt = cpuMs(server.pid)
      benchAt = benchCpuMs()
      const flooderAt = flooding.pid ? cpuMs(flooding.pid) : 0
      const under = await victimPhase(server.url, bob.key, path, PHASE_MS, PACE_MS)
      const serverUsed = cpuMs(server.pid) - serverAt
      const benchUsed = benchCpuMs() - benchAt
      const flooderUsed = flooding.pid ? cpuMs(flooding.pid) - flooderAt : 0
      cpu.floodedServer += serverUsed
      cpu.floodedBench += benchUsed
      const counts = await flooding.stop()
      flooded.latencies.push(...under.latencies)
      flooded.failures += under.failures
      for (const name of Object.keys(flood)) flood[name] += counts[name]
      process.stderr.write(`bench: fairness round ${round + 1}: p99 quiet ${summary(calm.latencies).p99.toFixed(1)} ms, flooded ${summary(under.latencies).p99.toFixed(1)} ms; server CPU ${Math.round(100 * serverUsed / PHASE_MS)}% (quiet ${Math.round(100 * (cpu.quietServer / (round + 1)) / PHASE_MS)}%), bench process CPU ${Math.round(100 * benchUsed / PHASE_MS)}%${flooding.pid ? `, flooder process CPU ${Math.round(100 * flooderUsed / PHASE_MS)}%` : ''}; flood ${JSON.stringify(counts)}; load ${loadavg()[0].toFixed(2)}\n`)
      // Let the server drain what the flood left (open sockets closing, unfinished handshakes).
      await new Promise(resolve => setTimeout(resolve, 1000))
    }

    const { p50: quietP50, p99: quietP99 } = summary(quiet.latencies)
    const { p50: floodedP50, p99: floodedP99 } = summary(flooded.latencies)
    const ratio = floodedP99 / quietP99
    return {
      kind: 'fairness',
      scenario: `fairness: @bob's increments (1 every ${PACE_MS} ms) quiet, then while @alice floods`,
      quietP50,
      quietP99,
      floodedP50,
      floodedP99,
      ratio,
      samples: `${quiet.latencies.length} / ${flooded.latencies.length}`,
      flood,
      failed: quiet.failures + flooded.failures > 0 || (FLOODERS.keyWalkers > 0 && flood.keyPages === 0) || (FLOODERS.resubscribers > 0 && flood.snapshots === 0) || (FLOODERS.handshakers > 0 && flood.handshakes === 0),
      note: `${ROUNDS} rounds of ${PHASE_MS / 1000} s each; bob's non-200 answers ${quiet.failures + flooded.failures}; server CPU ${Math.round(100 * cpu.quietServer / (ROUNDS * PHASE_MS))}% of a core quiet, ${Math.round(100 * cpu.floodedServer / (ROUNDS * PHASE_MS))}% flooded; bench process (bob, and the flooder when a thread) ${Math.round(100 * cpu.floodedBench / (ROUNDS * PHASE_MS))}% flooded; load average ${loadavg()[0].toFixed(1)}`
    }
  } finally {
    await server.stop()
  }
}
