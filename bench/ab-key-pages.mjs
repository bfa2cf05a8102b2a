// A/B of two builds of contentd on the fairness scenario's key walk (bench/scenarios/fairness.mjs),
// interleaved: server CPU per `GET /api/keys` page (user + system, all threads, from /proc),
// for changes the fairness scenario's p99 ratio cannot resolve on a shared machine.
//   node bench/ab-key-pages.mjs <rootA> <rootB>   each root holds dist/ (and package.json)
// One data directory is prepared once (@alice, 100 projects, 1,000 keys scoped to all of them),
// and each measurement runs a build on a fresh copy of it: 4 walkers (flood-worker.mjs) for
// BENCH_WARMUP s (default 3: JIT, and each walker past every page once, as the scenario's
// later rounds are), then 4 new walkers from the first page for BENCH_DURATION s (default 6),
// measured. RATE_LIMIT is BENCH_AB_RATE_LIMIT (default 0: every request a served page; 6000
// for the scenario's refusals). BENCH_ROUNDS (default 4), A, B then B, A alternately.
// BENCH_AB_BOB=1: the fairness scenario's shape per measurement instead (RATE_LIMIT 6000
// unless set): after the warm-up, @bob increments quietly for BENCH_DURATION s (the bucket
// refilling meanwhile), then the walk starts from a process of its own session, and 1 s later
// bob increments again for BENCH_DURATION s; each build's quiet and flooded p99 and their
// ratio, and the flood's server CPU per request (flooded CPU less quiet CPU).
import { fork } from 'node:child_process'
import { cpSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { call, expectStatus, owner, startContentd } from './lib/contentd.mjs'
import { documentOfSize } from './lib/documents.mjs'
import { summary } from './lib/percentiles.mjs'
import { cpuMs, tempDir } from './lib/processes.mjs'
import { victimPhase } from './lib/victim.mjs'

const roots = process.argv.slice(2, 4).map(r => resolve(r))
if (roots.length !== 2) throw new Error('usage: node bench/ab-key-pages.mjs <rootA> <rootB>')
const rounds = Number(process.env.BENCH_ROUNDS ?? 4)
const duration = Number(process.env.BENCH_DURATION ?? 6)
const warmup = Number(process.env.BENCH_WARMUP ?? 3)
const withBob = process.env.BENCH_AB_BOB === '1'
const rateLimit = process.env.BENCH_AB_RATE_LIMIT ?? (withBob ? '6000' : '0')
const KEYS = 1000
const PROJECTS = 100

/** The scenario's @alice, made by build A with no rate limit; the data directory stays for the copies. */
async function prepare () {
  const dataDir = tempDir('ab-keys-data')
  const server = await startContentd({ RATE_LIMIT: '0' }, [], { root: roots[0], dataDir })
  try {
    const alice = await owner(server.url, 'alice')
    const refs = []
    for (let i = 0; i < PROJECTS; i++) {
      await expectStatus(call(server.url, 'POST', '/api/projects', { token: alice.session, body: { slug: `p${i}` } }), 201, 'create project')
      refs.push(`@alice/p${i}`)
    }
    let made = 1 // owner() made one key already
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (made < KEYS) {
        made++
        await expectStatus(call(server.url, 'POST', '/api/keys', { token: alice.session, body: { name: `k${made}`, permission: 'read', projects: refs } }), 201, 'create key')
      }
    }))
    const bob = await owner(server.url, 'bob')
    const bobPath = await bob.project('counter', documentOfSize(1024))
    return { dataDir, session: alice.session, bobKey: bob.key, bobPath }
  } finally {
    await server.stop()
  }
}

/** 4 key walkers for `seconds`; what the server answered them. */
async function walk (url, session, seconds) {
  return startWalk(url, session).stopAfter(seconds)
}

/** 4 key walkers from a process in a session of its own, as the fairness scenario runs its flooder. */
function startWalk (url, session) {
  const child = fork(fileURLToPath(new URL('./scenarios/flood-worker.mjs', import.meta.url)), [], { detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const counted = new Promise((resolve, reject) => { child.once('message', resolve); child.once('error', reject) })
  child.send({ url, session, project: '@alice/none', keyWalkers: 4, resubscribers: 0, handshakers: 0 })
  return {
    async stopAfter (seconds) {
      await new Promise(resolve => setTimeout(resolve, seconds * 1000))
      child.send('stop')
      const counts = await counted
      child.kill()
      return counts
    }
  }
}

/** The fairness scenario's quiet then flooded phase, on a warm server. */
async function bobPhases (server, prepared) {
  const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
  let at = cpuMs(server.pid)
  const quiet = await victimPhase(server.url, prepared.bobKey, prepared.bobPath, duration * 1000, 20)
  const quietCpu = cpuMs(server.pid) - at
  const flood = startWalk(server.url, prepared.session)
  await sleep(1000)
  at = cpuMs(server.pid)
  const flooded = await victimPhase(server.url, prepared.bobKey, prepared.bobPath, duration * 1000, 20)
  const floodedCpu = cpuMs(server.pid) - at
  const counts = await flood.stopAfter(0)
  return { quiet: summary(quiet.latencies).p99, flooded: summary(flooded.latencies).p99, failures: quiet.failures + flooded.failures, counts, floodCpu: floodedCpu - quietCpu }
}

async function measure (root, prepared) {
  const dataDir = tempDir('ab-keys')
  cpSync(prepared.dataDir, dataDir, { recursive: true })
  const server = await startContentd({ RATE_LIMIT: rateLimit }, [], { root, dataDir })
  try {
    await walk(server.url, prepared.session, warmup)
    if (withBob) {
      await victimPhase(server.url, prepared.bobKey, prepared.bobPath, 2000, 20) // bob's JIT
      const b = await bobPhases(server, prepared)
      const requests = b.counts.keyPages + b.counts.keyPagesLimited
      return { pages: b.counts.keyPages, limited: b.counts.keyPagesLimited, errors: b.counts.errors + b.failures, usedMs: b.floodCpu, msPerRequest: b.floodCpu / requests, quietP99: b.quiet, floodedP99: b.flooded, ratio: b.flooded / b.quiet }
    }
    const at = cpuMs(server.pid)
    const counts = await walk(server.url, prepared.session, duration)
    const usedMs = cpuMs(server.pid) - at
    const requests = counts.keyPages + counts.keyPagesLimited
    return { usedMs, pages: counts.keyPages, limited: counts.keyPagesLimited, errors: counts.errors, msPerRequest: usedMs / requests }
  } finally {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const prepared = await prepare()
const perRequest = { A: [], B: [] }
const ratios = { A: [], B: [] }
try {
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['A', 'B'] : ['B', 'A']
    for (const label of order) {
      const m = await measure(roots[label === 'A' ? 0 : 1], prepared)
      perRequest[label].push(m.msPerRequest)
      const bob = withBob ? `; bob's p99 quiet ${m.quietP99.toFixed(1)} ms, flooded ${m.floodedP99.toFixed(1)} ms, ${m.ratio.toFixed(2)}×` : ''
      if (withBob) ratios[label].push(m.ratio)
      process.stdout.write(`round ${round + 1} ${label}: ${m.msPerRequest.toFixed(3)} ms of server CPU per request (${m.pages} pages, ${m.limited} × 429, ${m.errors} errors, ${m.usedMs} ms CPU in ${duration} s)${bob}\n`)
    }
  }
} finally {
  rmSync(prepared.dataDir, { recursive: true, force: true })
}
const median = values => { const s = [...values].sort((a, b) => a - b); const m = Math.floor(s.length / 2); return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
process.stdout.write(`median ms per request: A ${median(perRequest.A).toFixed(3)}, B ${median(perRequest.B).toFixed(3)}; B ÷ A ${(median(perRequest.B) / median(perRequest.A)).toFixed(2)}×\n`)
if (withBob) process.stdout.write(`median p99 flooded ÷ quiet: A ${median(ratios.A).toFixed(2)}×, B ${median(ratios.B).toFixed(2)}×\n`)
