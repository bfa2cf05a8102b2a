// Wide fan-out: 10,000 Socket.IO subscribers (BENCH_WIDE_SUBSCRIBERS) on one project on one
// node; changes are made over HTTP one at a time at a steady pace. Most subscribers are raw
// WebSocket connections in child processes (bench/lib/fanout-members.mjs) that count the
// messages they receive and note when each arrived, without decoding them: a decoding client
// could not take 10,000 copies of each change in one process. 20 are socket.io-client probes
// in this process that decode each change: its commit time (the entry's `at`, the server's
// clock, which is this machine's) and the HTTP response's. The delay after commit is taken at
// every subscriber (p50, p99 and max of all 10,000 × changes deliveries, as the plain-`net`
// floor takes it at every socket); the probes, which join last and so are written last in
// each broadcast, also give the delay to the broadcast's end and after the response. None
// lost: every subscriber must count every change, none may be dropped or disconnected. Also
// measured: the server's RSS per connection (RSS after all connected minus RSS before,
// divided by the connections) and its CPU per delivery.
import { io } from 'socket.io-client'
import { owner, pacedIncrements, startContentd } from '../lib/contentd.mjs'
import { forkChild } from '../lib/ipc-child.mjs'
import { cpuMs, rssBytes } from '../lib/processes.mjs'
import { percentile } from '../lib/percentiles.mjs'
import { metricValue } from '../lib/server-metrics.mjs'

export const SUBSCRIBERS = Number(process.env.BENCH_WIDE_SUBSCRIBERS ?? 10_000)
export const CHANGES = Number(process.env.BENCH_WIDE_CHANGES ?? 30)
const PROBES = 20
// The plain-`net` floor (net-floor.mjs) takes this scenario's sizes, processes and pace.
export const MEMBER_PROCESSES = 4
export const PACE_MS = 250
const CHILDREN = MEMBER_PROCESSES
const METRICS_TOKEN = 'bench-metrics-token-fanout'
export const PROJECT = '@bench/demo'

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

/** `total` split into `parts` counts as even as whole numbers allow (the member processes' shares). */
export function splitAmong (total, parts) {
  return Array.from({ length: parts }, (_, c) => Math.floor(total * (c + 1) / parts) - Math.floor(total * c / parts))
}

function startMembers (port, token, count) {
  return forkChild('bench/lib/fanout-members.mjs', { BENCH_FANOUT_MEMBERS: JSON.stringify({ port, token, project: PROJECT, count }) })
}

async function probe (url, token, onChange) {
  const socket = io(url, { auth: { token }, transports: ['websocket'], forceNew: true, reconnection: false })
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', e => reject(new Error(`connect: ${e.message}`)))
  })
  const ack = await socket.timeout(10_000).emitWithAck('subscribe', { project: PROJECT })
  if (!ack.ok) throw new Error(`subscribe: ${ack.code} ${ack.message}`)
  socket.on('change', onChange)
  return socket
}

export async function fanoutWide () {
  // BENCH_WIDE_PROFILE=<dir>: the server writes a CPU profile there (node --cpu-prof).
  const profile = process.env.BENCH_WIDE_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WIDE_PROFILE}`] : []
  const server = await startContentd({ SOCKET_CONNECTIONS_PER_IDENTITY: String(SUBSCRIBERS * 2), METRICS_TOKEN }, profile)
  const children = []
  const probes = []
  try {
    const user = await owner(server.url, 'bench')
    const path = await user.project('demo', { counter: 0 })
    await sleep(1000)
    const rssBefore = rssBytes(server.pid)
    const connectStarted = performance.now()
    const raw = SUBSCRIBERS - PROBES
    for (const count of splitAmong(raw, CHILDREN)) if (count > 0) children.push(startMembers(server.port, user.key, count))
    await Promise.all(children.map(child => child.ready))
    const receipts = []
    for (let i = 0; i < PROBES; i++) probes.push(await probe(server.url, user.key, change => receipts.push({ version: change.version, committed: Date.parse(change.at), at: Date.now(), perf: performance.now() })))
    const connectSeconds = (performance.now() - connectStarted) / 1000
    await sleep(2000)
    const rssConnected = rssBytes(server.pid)
    const sockets = await metricValue(server.url, METRICS_TOKEN, 'contentd_active_sockets')
    const before = await Promise.all(children.map(c => c.ask('report')))
    await Promise.all(children.map(c => c.ask('mark', 'marked')))
    const cpuBefore = cpuMs(server.pid)
    const { answeredAt } = await pacedIncrements(server.url, path, user.key, CHANGES, PACE_MS)
    await sleep(3000)
    const cpu = cpuMs(server.pid) - cpuBefore
    const after = await Promise.all(children.map(c => c.ask('report')))
    const arrivals = await Promise.all(children.map(c => c.ask('arrivals')))
    const counted = after.reduce((n, r) => n + r.messages, 0) - before.reduce((n, r) => n + r.messages, 0)
    const disconnected = after.reduce((n, r) => n + r.disconnected, 0)
    const dropped = await metricValue(server.url, METRICS_TOKEN, 'contentd_realtime_slow_consumers_total')
    const probed = receipts.filter(r => answeredAt.has(r.version))
    const atBroadcastEnd = probed.map(r => Math.max(0, r.at - r.committed)).sort((a, b) => a - b)
    const fromResponse = probed.map(r => Math.max(0, r.perf - answeredAt.get(r.version))).sort((a, b) => a - b)
    // The members' i-th message since the mark is the i-th change made (one message per
    // change, in order); its commit time is the entry's `at`, as the probes decoded it.
    const versions = [...answeredAt.keys()].sort((a, b) => a - b)
    const committedAt = new Map(probed.map(r => [r.version, r.committed]))
    const perChange = versions.map((version, i) => {
      const committed = committedAt.get(version)
      const delays = probed.filter(r => r.version === version).map(r => Math.max(0, r.at - r.committed))
      if (committed !== undefined) for (const child of arrivals) for (const at of child.arrivals[i] ?? []) delays.push(Math.max(0, at - committed))
      return delays.sort((a, b) => a - b)
    })
    const fromCommit = perChange.flat().sort((a, b) => a - b)
    // Each change's own p99 (of every subscriber), in the order the changes were made: the floor's goal row gives their spread.
    const perRoundP99 = perChange.map(delays => percentile(delays, 99))
    const expected = SUBSCRIBERS * CHANGES
    const delivered = counted + probed.length
    const lost = expected - delivered
    const perConnection = (rssConnected - rssBefore) / SUBSCRIBERS
    return {
      scenario: `fan-out: ${SUBSCRIBERS} subscribers, one node (${SUBSCRIBERS - PROBES} counting, ${PROBES} timing)`,
      kind: 'fanout-wide',
      subscribers: SUBSCRIBERS,
      changes: CHANGES,
      deliveries: delivered,
      lost,
      p50: percentile(fromCommit, 50),
      p99: percentile(fromCommit, 99),
      max: fromCommit.at(-1),
      perRoundP99,
      broadcastEndP99: percentile(atBroadcastEnd, 99),
      responseP99: percentile(fromResponse, 99),
      timed: fromCommit.length,
      cpuMicrosPerDelivery: cpu * 1000 / Math.max(1, delivered),
      rssBeforeMiB: rssBefore / 1024 / 1024,
      rssConnectedMiB: rssConnected / 1024 / 1024,
      bytesPerConnection: perConnection,
      connectSeconds,
      failed: lost !== 0 || disconnected > 0 || dropped > 0 || sockets < SUBSCRIBERS || fromCommit.length !== delivered,
      note: [
        lost === 0 ? 'none lost' : `${lost} of ${expected} deliveries missing`,
        dropped > 0 ? `${dropped} dropped as slow consumers` : null,
        disconnected > 0 ? `${disconnected} disconnected` : null,
        sockets < SUBSCRIBERS ? `${sockets} sockets of ${SUBSCRIBERS}` : null,
        fromCommit.length !== delivered ? `${fromCommit.length} of ${delivered} deliveries timed` : null,
        `${SUBSCRIBERS} connected and subscribed in ${connectSeconds.toFixed(0)} s`
      ].filter(Boolean).join('; ')
    }
  } finally {
    for (const socket of probes) socket.close()
    await Promise.all(children.map(child => child.stop()))
    await server.stop()
  }
}
