// Bounded work under attack (issue 26, docs/design.md §13b): for each attack the review found,
// @bob increments his counter at a steady 50 requests per second, first quietly, then while
// another account runs the attack from a process of its own (attack-worker.mjs). Printed per
// attack: bob's p99 and worst latency, his failures, the server's peak RSS, whether the process
// survived, and what the attacker got. The goal: bob's p99 stays within 1 s under every attack
// and the process never dies. A server that died is started afresh for the next attack.
//   BENCH_ATTACKS=patch,slowReaders,…   which attacks (all by default)
//   BENCH_ATTACK_SECONDS=10             length of each quiet and attacked phase
//   BENCH_ATTACK_REVERTS=110            reverts of a ~7 MB content in the change-pages attack
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { owner, startContentd } from '../lib/contentd.mjs'
import { documentOfSize } from '../lib/documents.mjs'
import { summary } from '../lib/percentiles.mjs'
import { rssBytes } from '../lib/processes.mjs'
import { victimPhase } from '../lib/victim.mjs'

const ALL = ['patch', 'slowReaders', 'changePages', 'schemaUrl', 'schemaUnique', 'schemaCompile', 'webhooks', 'idempotency']
const ATTACKS = process.env.BENCH_ATTACKS ? process.env.BENCH_ATTACKS.split(',').map(s => s.trim()) : ALL
for (const name of ATTACKS) if (!ALL.includes(name)) throw new Error(`BENCH_ATTACKS: ${name}? (known: ${ALL.join(', ')})`)
const PHASE_MS = Number(process.env.BENCH_ATTACK_SECONDS ?? 10) * 1000
const REVERTS = Number(process.env.BENCH_ATTACK_REVERTS ?? 110)
const PACE_MS = 20
const MiB = 1024 * 1024

// The server's defaults, but webhooks may target the attacker's sink on loopback.
const SERVER_ENV = { RATE_LIMIT: '6000', WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'error' }

function startAttacker (orders) {
  const child = fork(fileURLToPath(new URL('./attack-worker.mjs', import.meta.url)), [], { detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const messages = []
  let exited = null
  let wake = () => {}
  child.on('message', message => { messages.push(message); wake() })
  child.on('exit', code => { exited = code; wake() })
  /** The attacker's next message, or an error when it exits first or stays silent `ms`. */
  const next = (ms) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`attacker ${orders.attack}: no answer in ${ms / 1000} s`)), ms)
    wake = () => {
      if (messages.length > 0) { clearTimeout(timer); resolve(messages.shift()) } else if (exited !== null) { clearTimeout(timer); reject(new Error(`attacker ${orders.attack} exited with ${exited}`)) }
    }
    wake()
  })
  child.send(orders)
  return {
    ready: () => next(15 * 60_000),
    async stop () {
      if (child.connected) child.send('stop')
      try { return await next(60_000) } finally { child.kill('SIGKILL') }
    }
  }
}

/** Whether the server answers /healthz within 10 s: alive and not stalled. */
async function healthy (server) {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return false
  try {
    const response = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) })
    await response.arrayBuffer()
    return response.status === 200
  } catch { return false }
}

/** Samples the server's RSS every 100 ms until stopped: the peak seen. */
function watchRss (pid) {
  const rss = () => { try { return rssBytes(pid) } catch { return 0 } } // 0 once the process is gone
  let peak = rss()
  const timer = setInterval(() => { peak = Math.max(peak, rss()) }, 100)
  return () => { clearInterval(timer); return peak }
}

export async function attacks () {
  const rows = []
  let server = null
  let bob = null
  let bobPath = null
  const fresh = async () => {
    server = await startContentd(SERVER_ENV)
    bob = await owner(server.url, 'bob')
    bobPath = await bob.project('counter', documentOfSize(1024))
    await victimPhase(server.url, bob.key, bobPath, 2000, PACE_MS) // warm-up
  }
  try {
    await fresh()
    for (const [i, attack] of ATTACKS.entries()) {
      const quiet = await victimPhase(server.url, bob.key, bobPath, PHASE_MS, PACE_MS)
      const attacker = startAttacker({ url: server.url, attack, username: `mallory${i}`, reverts: REVERTS })
      let got = {}
      let under = { latencies: [], failures: 0 }
      let peak = 0
      let error
      try {
        await attacker.ready()
        const stopRss = watchRss(server.pid)
        under = await victimPhase(server.url, bob.key, bobPath, PHASE_MS, PACE_MS)
        peak = stopRss()
        got = await attacker.stop()
      } catch (e) {
        error = e instanceof Error ? e.message : String(e)
        await attacker.stop().catch(() => {})
      }
      const survived = await healthy(server)
      const q = summary(quiet.latencies)
      const u = summary(under.latencies)
      const max = under.latencies.length ? Math.max(...under.latencies) : undefined
      const row = {
        kind: 'attacks',
        scenario: `attack: ${attack}`,
        attack,
        quietP99: q.p99,
        attackedP50: u.p50,
        attackedP99: u.p99,
        attackedMax: max,
        failures: under.failures,
        samples: u.samples,
        peakRssMiB: peak / MiB,
        survived,
        got,
        failed: !survived || under.failures > 0 || error !== undefined || (u.p99 ?? Infinity) > 1000,
        ...(error ? { error } : {})
      }
      rows.push(row)
      // A server the attack killed or left stalled is replaced, so the next attack starts clean.
      if (!survived) { await server.stop(); await fresh() }
      process.stderr.write(`bench: attack ${attack}: bob p99 quiet ${q.p99?.toFixed(1)} ms, attacked ${u.p99?.toFixed(1)} ms (max ${max?.toFixed(1)} ms, ${under.failures} failed); server RSS peak ${(peak / MiB).toFixed(0)} MiB, ${survived ? 'alive' : 'DIED or stalled'}; attacker got ${JSON.stringify(got)}${error ? `; ${error}` : ''}\n`)
    }
  } finally {
    await server?.stop()
  }
  return rows
}
