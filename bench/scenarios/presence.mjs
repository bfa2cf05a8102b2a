// Presence fan-out: 1,000 members of one project (each its own Socket.IO connection), each
// setting its presence state once a second, spread evenly over the second: 1,000 updates a
// second, each delivered to all 1,000 members — 1,000,000 deliveries a second asked of one
// node. Measured over BENCH_PRESENCE_SECONDS after a warm-up:
// - delivery delay: from the moment a member sent a state (its `t`) to the moment a probe
//   member received the `presence` event carrying it, p50/p99/max over every update the
//   probes received (the probes are 20 of the members, using socket.io-client in this
//   process; the others are raw connections in child processes that only count what they
//   receive, so the load generator keeps up);
// - deliveries a second, against the 1,000,000 asked for;
// - the server's CPU (cores busy, and microseconds per delivery), from /proc.
import { fork } from 'node:child_process'
import { join } from 'node:path'
import { io } from 'socket.io-client'
import { owner, startContentd } from '../lib/contentd.mjs'
import { PROJECT_ROOT, cpuMs } from '../lib/processes.mjs'
import { percentile } from '../lib/percentiles.mjs'
import { metricValue } from '../lib/server-metrics.mjs'

// The sizes, one row each: the 1,000 the issue asks for, and a size a small machine keeps up
// with, so its delay is the server's and not a backlog's.
const SIZES = (process.env.BENCH_PRESENCE_MEMBERS ?? '1000,250').split(',').map(Number)
const PROBE_COUNT = Number(process.env.BENCH_PRESENCE_PROBES ?? 20)
const CHILDREN = Number(process.env.BENCH_PRESENCE_PROCESSES ?? 2)
const SECONDS = Number(process.env.BENCH_PRESENCE_SECONDS ?? 10)
const WARMUP_MS = 3000
const INTERVAL_MS = 1000
const METRICS_TOKEN = 'bench-metrics-token-presence'
const PROJECT = '@bench/demo'

const now = () => performance.timeOrigin + performance.now()
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function probe (url, token, index, onUpdate) {
  const socket = io(url, { auth: { token }, transports: ['websocket'], forceNew: true, reconnection: false })
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', e => reject(new Error(`connect: ${e.message}`)))
  })
  const subscribed = await socket.timeout(10_000).emitWithAck('subscribe', { project: PROJECT })
  if (!subscribed.ok) throw new Error(`subscribe: ${subscribed.code}`)
  socket.on('presence', event => {
    if (event.type === 'update' && event.member.id !== socket.id) onUpdate(now() - event.member.state.t)
  })
  const joined = await socket.timeout(10_000).emitWithAck('presence:set', { project: PROJECT, state: { t: now(), member: index, seq: 0 } })
  if (!joined.ok) throw new Error(`presence:set: ${joined.code}`)
  return { socket, index, seq: 0, next: 0 }
}

function startMembers (port, token, first, count, memberCount) {
  const child = fork(join(PROJECT_ROOT, 'bench/lib/presence-members.mjs'), [], {
    env: { ...process.env, BENCH_PRESENCE: JSON.stringify({ port, token, project: PROJECT, first, count, total: memberCount, intervalMs: INTERVAL_MS }) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const messages = []
  const waiting = []
  child.on('message', message => {
    const i = waiting.findIndex(w => w.type === message.type)
    if (i === -1) messages.push(message)
    else waiting.splice(i, 1)[0].resolve(message)
  })
  const exited = new Promise(resolve => child.once('exit', code => resolve(code)))
  const next = type => {
    const i = messages.findIndex(m => m.type === type)
    if (i !== -1) return Promise.resolve(messages.splice(i, 1)[0])
    return Promise.race([
      new Promise(resolve => waiting.push({ type, resolve })),
      exited.then(code => { throw new Error(`member process exited with ${code}`) })
    ])
  }
  return {
    ready: next('ready'),
    start: epoch => child.send({ type: 'start', epoch }),
    report: async () => { child.send('report'); return next('report') },
    stop: async () => { if (child.exitCode === null) { child.send('stop'); await Promise.race([exited, sleep(5000)]); child.kill('SIGKILL') } }
  }
}

export async function presence () {
  const rows = []
  for (const members of SIZES) rows.push(...await presenceRun(members))
  return rows
}

async function presenceRun (memberCount) {
  const probeCount = Math.min(memberCount, PROBE_COUNT)
  // BENCH_PRESENCE_PROFILE=<dir>: the server writes a CPU profile there (node --cpu-prof).
  const profile = process.env.BENCH_PRESENCE_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PRESENCE_PROFILE}`] : []
  const server = await startContentd({ SOCKET_CONNECTIONS_PER_IDENTITY: String(memberCount * 2), METRICS_TOKEN }, profile)
  const children = []
  const probes = []
  let timer = null
  try {
    const user = await owner(server.url, 'bench')
    await user.project('demo', {})
    let measuring = false
    const delays = []
    for (let i = 0; i < probeCount; i++) probes.push(await probe(server.url, user.key, memberCount - probeCount + i, delay => { if (measuring) delays.push(delay) }))
    const raw = memberCount - probeCount
    for (let c = 0; c < CHILDREN; c++) {
      const first = Math.floor(raw * c / CHILDREN)
      const count = Math.floor(raw * (c + 1) / CHILDREN) - first
      if (count > 0) children.push(startMembers(server.port, user.key, first, count, memberCount))
    }
    await Promise.all(children.map(child => child.ready))
    const epoch = now() + 500
    for (const child of children) child.start(epoch)
    for (const p of probes) p.next = epoch + (p.index / memberCount) * INTERVAL_MS
    let probeSent = 0
    timer = setInterval(() => {
      const at = now()
      for (const p of probes) {
        if (p.next > at) continue
        p.next += INTERVAL_MS
        p.seq++
        p.socket.emit('presence:set', { project: PROJECT, state: { t: now(), member: p.index, seq: p.seq, path: `posts.${p.seq % 50}.title` } })
        probeSent++
      }
    }, 2)
    await sleep(WARMUP_MS)
    const before = { at: now(), cpu: cpuMs(server.pid), reports: await Promise.all(children.map(c => c.report())), probeSent }
    measuring = true
    await sleep(SECONDS * 1000)
    measuring = false
    const after = { at: now(), cpu: cpuMs(server.pid), reports: await Promise.all(children.map(c => c.report())), probeSent }
    clearInterval(timer)
    timer = null
    const seconds = (after.at - before.at) / 1000
    const sum = (reports, field) => reports.reduce((n, r) => n + r[field], 0)
    const rawFrames = sum(after.reports, 'frames') - sum(before.reports, 'frames')
    const sentPerSecond = (sum(after.reports, 'sent') - sum(before.reports, 'sent') + after.probeSent - before.probeSent) / seconds
    // The raw members' receipts, scaled to all members (the probes receive the same stream).
    const deliveriesPerSecond = rawFrames / seconds * (memberCount / Math.max(1, raw))
    const asked = sentPerSecond * memberCount
    const cpuCores = (after.cpu - before.cpu) / 1000 / seconds
    delays.sort((a, b) => a - b)
    const dropped = await metricValue(server.url, METRICS_TOKEN, 'contentd_realtime_slow_consumers_total')
    const sockets = await metricValue(server.url, METRICS_TOKEN, 'contentd_active_sockets')
    const keptUp = deliveriesPerSecond >= asked * 0.95
    return [{
      scenario: `presence: ${memberCount} members updating once a second, one project, one node`,
      kind: 'presence',
      members: memberCount,
      updatesPerSecond: sentPerSecond,
      deliveriesPerSecond,
      asked,
      p50: percentile(delays, 50),
      p99: percentile(delays, 99),
      max: delays.at(-1),
      timed: delays.length,
      cpuCores,
      cpuMicrosPerDelivery: deliveriesPerSecond > 0 ? cpuCores * 1e6 / deliveriesPerSecond : undefined,
      failed: delays.length === 0 || dropped > 0 || sockets < memberCount,
      note: [
        keptUp ? 'kept up' : `delivered ${Math.round(100 * deliveriesPerSecond / asked)}% of what was asked`,
        dropped > 0 ? `${dropped} slow connections dropped` : null,
        sockets < memberCount ? `${memberCount - sockets} members disconnected` : null
      ].filter(Boolean).join('; ')
    }]
  } finally {
    if (timer) clearInterval(timer)
    for (const p of probes) p.socket.close()
    await Promise.all(children.map(child => child.stop()))
    await server.stop()
  }
}
