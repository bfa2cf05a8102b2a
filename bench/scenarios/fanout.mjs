// Fan-out: N Socket.IO subscribers (default 1,000, each its own connection) on one project;
// changes are made over HTTP one at a time at a steady pace, and each subscriber's receipt is
// timed against the moment the HTTP response arrived. Once on one node, once on two nodes
// sharing the SQLite file and one Redis (subscribers split across both, changes sent
// to the first). Every subscriber must receive every change.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { io } from 'socket.io-client'
import { owner, pacedIncrements, startContentd } from '../lib/contentd.mjs'
import { percentile } from '../lib/percentiles.mjs'
import { PROJECT_ROOT, freePort, startChild, tempDir } from '../lib/processes.mjs'

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000)
const CHANGES = Number(process.env.BENCH_FANOUT_CHANGES ?? 50)
const PACE_MS = 100
const NODE_ENV = { SOCKET_CONNECTIONS_PER_IDENTITY: String(SUBSCRIBERS * 2) }

async function connect (url, token, project, onChange) {
  const socket = io(url, { auth: { token }, transports: ['websocket'], forceNew: true, reconnection: false })
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', e => reject(new Error(`connect: ${e.message}`)))
  })
  const ack = await socket.timeout(10_000).emitWithAck('subscribe', { project })
  if (!ack.ok) throw new Error(`subscribe: ${ack.code} ${ack.message}`)
  socket.on('change', onChange)
  return socket
}

async function runFanout (nodes, writer, key, path, project) {
  let timings
  const receipts = []
  const onChange = change => { receipts.push({ version: change.version, at: performance.now() }) }
  const sockets = []
  try {
    for (let i = 0; i < SUBSCRIBERS; i += 50) {
      const group = []
      for (let j = i; j < Math.min(SUBSCRIBERS, i + 50); j++) group.push(connect(nodes[j % nodes.length].url, key, project, onChange))
      sockets.push(...await Promise.all(group))
    }
    timings = await pacedIncrements(writer.url, path, key, CHANGES, PACE_MS)
    await new Promise(resolve => setTimeout(resolve, 2000))
  } finally {
    for (const socket of sockets) socket.close()
  }
  const { sentAt, answeredAt } = timings
  // The server emits right after the commit, before it answers the HTTP request, so a change
  // often arrives before its response: that counts as a delay of 0 from the response. The
  // delay from the request being sent is also shown; it includes the commit (fsync).
  const fromResponse = receipts.filter(r => answeredAt.has(r.version)).map(r => Math.max(0, r.at - answeredAt.get(r.version))).sort((a, b) => a - b)
  const fromRequest = receipts.filter(r => sentAt.has(r.version)).map(r => r.at - sentAt.get(r.version)).sort((a, b) => a - b)
  const expected = SUBSCRIBERS * CHANGES
  const early = receipts.filter(r => r.at < (answeredAt.get(r.version) ?? Infinity)).length
  return {
    kind: 'fanout',
    nodes: nodes.length,
    subscribers: SUBSCRIBERS,
    changes: CHANGES,
    deliveries: receipts.length,
    p50: percentile(fromResponse, 50),
    p99: percentile(fromResponse, 99),
    requestP50: percentile(fromRequest, 50),
    requestP99: percentile(fromRequest, 99),
    failed: receipts.length !== expected,
    note: receipts.length !== expected ? `${expected - receipts.length} deliveries missing` : `${early} of ${expected} arrived before the HTTP response`
  }
}

async function startRedis () {
  const port = await freePort()
  const dir = tempDir('redis')
  const redis = await startChild({
    name: 'redis-server',
    command: 'redis-server',
    args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    port,
    readyPath: null,
    cleanup: [dir]
  })
  return { ...redis, redisUrl: `redis://127.0.0.1:${port}` }
}

export async function fanout () {
  if (!existsSync(join(PROJECT_ROOT, 'dist/server/realtime/index.js'))) {
    return [{ scenario: 'fan-out', kind: 'fanout', pending: true, failed: true, note: 'server/realtime is not built yet' }]
  }
  const results = []
  const one = await startContentd(NODE_ENV)
  try {
    const user = await owner(one.url, 'bench')
    const path = await user.project('demo', { counter: 0 })
    results.push({ scenario: `fan-out: ${SUBSCRIBERS} subscribers, one node`, ...await runFanout([one], one, user.key, path, '@bench/demo') })
  } catch (error) {
    results.push({ scenario: 'fan-out: one node', kind: 'fanout', nodes: 1, failed: true, error: error.message })
  } finally {
    await one.stop()
  }
  let redis
  const nodes = []
  try {
    redis = await startRedis()
    const first = await startContentd({ ...NODE_ENV, REDIS_URL: redis.redisUrl })
    nodes.push(first)
    nodes.push(await startContentd({ ...NODE_ENV, REDIS_URL: redis.redisUrl }, [], { dataDir: first.dataDir }))
    const user = await owner(first.url, 'bench')
    const path = await user.project('demo', { counter: 0 })
    results.push({ scenario: `fan-out: ${SUBSCRIBERS} subscribers, two nodes + Redis`, ...await runFanout(nodes, first, user.key, path, '@bench/demo') })
  } catch (error) {
    results.push({ scenario: 'fan-out: two nodes + Redis', kind: 'fanout', nodes: 2, failed: true, error: error.message })
  } finally {
    // The second node shares the first one's directory: stop it first.
    for (const node of nodes.reverse()) await node.stop()
    await redis?.stop()
  }
  return results
}
