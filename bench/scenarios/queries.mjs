// Live queries (issue 30, docs/design.md §16), one node:
//  1. a top-10 query over an object of BENCH_QUERY_CHILDREN (default 50,000) children; each
//     change increments the leader's score (so every change alters the result and sends one
//     `query` event);
//  2. BENCH_QUERY_SUBSCRIBERS (default 1,000) subscribers to 10 distinct queries on one project.
// Delay after commit (the goal's measure): the server's contentd_query_event_delay_seconds
// histogram, read from /metrics before and after the timed changes: from the moment the
// store's commit returned (durable, CommitEmitter) to each `query` event handed to its
// subscriber's connection, one observation per event. Its p50 / p99 are interpolated within
// the buckets; the goal is judged exactly on the share of events at or below 5 ms / 50 ms
// (bucket bounds). The old, client-side measures are kept for comparison:
// a `query` event carries no commit time. The change's log entry does: its `at` is taken
// when the store's transaction starts (server/store/sqlite/content-writer.ts), before the
// operation is applied and committed and the batch synced. A path subscriber to the leader
// hears each change with its `at`, so each `query` event is timed from that moment (wall
// clocks of one machine, `at` in whole milliseconds): an upper bound on "after commit" that
// holds the apply, the commit and the fsync, but not the request's trip. Shown too: the delay
// from just before the write request was sent (a looser bound) and from the writer's response
// (a lower bound, as in fanout.mjs).
// CPU: for each case, the server's CPU per change (bench/lib/cpu-per-change.mjs, as the live
// paths scenario measures it) for BENCH_QUERY_CPU_CHANGES increments with the query subscribers,
// then for the same increments with as many plain path subscriptions to the same path
// (`board`) instead; the goal is a ratio ≤ 2×. Rows use the fan-out table's shape (kind
// 'fanout', `nodes` 1); the goals are in bench/lib/query-report.mjs.
import { io } from 'socket.io-client'
import { serverCpuPerChange } from '../lib/cpu-per-change.mjs'
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { percentile } from '../lib/percentiles.mjs'
import { histogramPercentile, histogramShareWithin } from '../lib/load.mjs'
import { histogramDelta, histogramOf } from '../lib/server-metrics.mjs'

const CHILDREN = Number(process.env.BENCH_QUERY_CHILDREN ?? 50_000)
const SUBSCRIBERS = Number(process.env.BENCH_QUERY_SUBSCRIBERS ?? 1000)
const CHANGES = Number(process.env.BENCH_QUERY_CHANGES ?? 50)
const CPU_CHANGES = Number(process.env.BENCH_QUERY_CPU_CHANGES ?? 300)
// Untimed changes first, as every HTTP scenario warms up: the first changes after the
// subscribers joined cost 2-4× the CPU of later ones (code not yet optimized, sockets' first
// writes; BENCHMARKS.md, 2026-11-27), and the first write copies the document a read lent.
const WARMUP_CHANGES = Number(process.env.BENCH_QUERY_WARMUP ?? 10)
const PACE_MS = 100
const METRICS_TOKEN = 'bench-metrics-token-queries'
const DELAY_METRIC = 'contentd_query_event_delay_seconds'
const settle = ms => new Promise(resolve => setTimeout(resolve, ms))

async function connect (url, token) {
  const socket = io(url, { auth: { token }, transports: ['websocket'], forceNew: true, reconnection: false })
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', e => reject(new Error(`connect: ${e.message}`)))
  })
  return socket
}

/** A socket subscribed with `request` (a live query, or a path), hearing `event`. */
async function subscriber (url, token, request, event, onEvent) {
  const socket = await connect(url, token)
  const ack = await socket.timeout(30_000).emitWithAck('subscribe', request)
  if (!ack.ok) throw new Error(`subscribe: ${ack.code} ${ack.message}`)
  socket.on(event, onEvent)
  return socket
}

/** `count` sockets made by `make(i)`, 50 at a time. */
async function many (count, make) {
  const sockets = []
  for (let i = 0; i < count; i += 50) {
    sockets.push(...await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => make(i + j))))
  }
  return sockets
}

/** One increment of the leader's score: the version it committed. */
async function incrementLeader (base, path, token, leader) {
  const r = await expectStatus(call(base, 'POST', `${path}/content/increment`, { token, body: { path: `board.${leader}.score` } }), 200, 'increment')
  return Number(JSON.parse(r.headers.get('etag')))
}

/** Increments the leader `count` times, PACE_MS apart: when each version's request was sent and its answer came. */
async function pacedLeaderIncrements (base, path, token, leader, count) {
  const answeredAt = new Map()
  const sentAt = new Map()
  for (let i = 0; i < count; i++) {
    // Taken just before the request goes out: the commit is later than this.
    const started = performance.now()
    const version = await incrementLeader(base, path, token, leader)
    sentAt.set(version, started)
    answeredAt.set(version, performance.now())
    await settle(PACE_MS)
  }
  return { sentAt, answeredAt }
}

/**
 * Server CPU per change with `subscribers` sockets subscribed by `request(i)`: CPU_CHANGES
 * increments of the leader, each of which every socket must hear as `event`.
 */
async function cpuWith (node, user, path, leader, subscribers, event, request) {
  let heard = 0
  const sockets = await many(subscribers, i => subscriber(node.url, user.key, request(i), event, () => { heard += 1 }))
  try {
    // Let the subscribes' own work (acks, joins) finish before counting.
    await settle(500)
    const msPerChange = await serverCpuPerChange(node.pid, CPU_CHANGES, () => incrementLeader(node.url, path, user.key, leader))
    return { msPerChange, complete: heard === subscribers * CPU_CHANGES, heard }
  } finally {
    for (const socket of sockets) socket.close()
    // The server drops the subscriptions (and the query's copy of the content) before the next measurement.
    await settle(1000)
  }
}

async function run (node, label, slug, queries, subscribers) {
  const user = await owner(node.url, slug)
  const board = {}
  for (let i = 0; i < CHILDREN; i++) board[`p${i}`] = { score: i % 1000, name: `player ${i}` }
  const leader = `p${CHILDREN > 999 ? 999 : CHILDREN - 1}`
  board[leader].score = 1_000_000
  const path = await user.project(slug, { board })
  const project = `@${slug}/${slug}`
  const receipts = []
  const wallNow = () => performance.timeOrigin + performance.now()
  const sockets = await many(subscribers, i => subscriber(node.url, user.key, { project, path: 'board', query: queries[i % queries.length] }, 'query', e => receipts.push({ version: e.version, at: performance.now(), wall: wallNow() })))
  // The probe: the leader's path, whose changes carry their entries' `at`.
  const startedAt = new Map()
  sockets.push(await subscriber(node.url, user.key, { project, path: `board.${leader}` }, 'change', e => { if (typeof e.at === 'string') startedAt.set(e.version, Date.parse(e.at)) }))
  let timed
  let afterCommit
  try {
    await pacedLeaderIncrements(node.url, path, user.key, leader, WARMUP_CHANGES)
    await settle(1000)
    receipts.length = 0
    startedAt.clear()
    const before = await histogramOf(node.url, METRICS_TOKEN, DELAY_METRIC)
    timed = await pacedLeaderIncrements(node.url, path, user.key, leader, CHANGES)
    await settle(2000)
    afterCommit = histogramDelta(await histogramOf(node.url, METRICS_TOKEN, DELAY_METRIC), before)
  } finally {
    for (const socket of sockets) socket.close()
    await settle(1000)
  }
  const { sentAt, answeredAt } = timed
  const fromResponse = receipts.filter(r => answeredAt.has(r.version)).map(r => Math.max(0, r.at - answeredAt.get(r.version))).sort((a, b) => a - b)
  const fromRequest = receipts.filter(r => sentAt.has(r.version)).map(r => r.at - sentAt.get(r.version)).sort((a, b) => a - b)
  const fromStart = receipts.filter(r => startedAt.has(r.version)).map(r => r.wall - startedAt.get(r.version)).sort((a, b) => a - b)
  const expected = subscribers * CHANGES

  // The same increments, heard by the query subscribers, then by path subscribers to `board`
  // (each resumes from the current version, so that its ack is not a snapshot of every child).
  const cpuQuery = await cpuWith(node, user, path, leader, subscribers, 'query', i => ({ project, path: 'board', query: queries[i % queries.length] }))
  const since = await incrementLeader(node.url, path, user.key, leader)
  const cpuPath = await cpuWith(node, user, path, leader, subscribers, 'change', () => ({ project, path: 'board', since }))
  const cpuComplete = cpuQuery.complete && cpuPath.complete
  const cpuRatio = cpuComplete ? cpuQuery.msPerChange / cpuPath.msPerChange : undefined
  const cpuNote = cpuComplete
    ? `server CPU per change ${cpuQuery.msPerChange.toFixed(2)} ms with the queries, ${cpuPath.msPerChange.toFixed(2)} ms with as many path subscriptions to board: ${cpuRatio.toFixed(2)}× (${CPU_CHANGES} changes)`
    : `CPU not compared: ${cpuQuery.heard} of ${subscribers * CPU_CHANGES} query events, ${cpuPath.heard} path changes heard`
  return {
    scenario: `${label} (delay after commit, server-side: ${DELAY_METRIC})`,
    kind: 'fanout',
    query: subscribers === 1 ? 'one' : 'many',
    nodes: 1,
    children: CHILDREN,
    subscribers,
    changes: CHANGES,
    deliveries: receipts.length,
    commitP50: histogramPercentile(afterCommit, 50),
    commitP99: histogramPercentile(afterCommit, 99),
    commitTimed: afterCommit.counts.at(-1),
    within5: histogramShareWithin(afterCommit, 0.005),
    within50: histogramShareWithin(afterCommit, 0.05),
    p50: percentile(fromResponse, 50),
    p99: percentile(fromResponse, 99),
    requestP50: percentile(fromRequest, 50),
    requestP99: percentile(fromRequest, 99),
    transactionP50: percentile(fromStart, 50),
    transactionP99: percentile(fromStart, 99),
    timedFromTransaction: fromStart.length,
    cpuQueryMs: cpuQuery.msPerChange,
    cpuPathMs: cpuPath.msPerChange,
    cpuRatio,
    cpuChanges: CPU_CHANGES,
    failed: receipts.length !== expected || fromStart.length !== expected || afterCommit.counts.at(-1) !== expected,
    note: `${receipts.length !== expected ? `${expected - receipts.length} query events missing` : `${CHILDREN} children; ${queries.length} distinct queries`}; after commit (server, ${DELAY_METRIC}, ${afterCommit.counts.at(-1)} events) p50 ${histogramPercentile(afterCommit, 50)?.toFixed(1)} / p99 ${histogramPercentile(afterCommit, 99)?.toFixed(1)} ms, ${(100 * histogramShareWithin(afterCommit, 0.005)).toFixed(1)}% ≤ 5 ms, ${(100 * histogramShareWithin(afterCommit, 0.05)).toFixed(1)}% ≤ 50 ms; from the transaction's start p50 ${percentile(fromStart, 50)?.toFixed(1)} / p99 ${percentile(fromStart, 99)?.toFixed(1)} ms (${fromStart.length} events timed); from just before the request p50 ${percentile(fromRequest, 50)?.toFixed(1)} / p99 ${percentile(fromRequest, 99)?.toFixed(1)} ms; ${cpuNote}`
  }
}

export async function queries () {
  const node = await startContentd({ METRICS_TOKEN, SOCKET_CONNECTIONS_PER_IDENTITY: String(SUBSCRIBERS * 2), CONTENT_LIMIT: String(16 * 1024 * 1024), BODY_LIMIT: String(16 * 1024 * 1024) })
  const results = []
  try {
    const top10 = { orderBy: 'score', direction: 'desc', limit: 10 }
    results.push(await run(node, `live query: top 10 of ${CHILDREN}, one subscriber`, 'qone', [top10], 1))
    // Ten distinct queries, all including the leader, so that every change alters every result.
    const ten = Array.from({ length: 10 }, (_, i) => ({ orderBy: 'score', direction: 'desc', limit: 10 + i }))
    results.push(await run(node, `live query: ${SUBSCRIBERS} subscribers, 10 distinct queries`, 'qmany', ten, SUBSCRIBERS))
  } catch (error) {
    results.push({ scenario: 'live queries', kind: 'fanout', nodes: 1, failed: true, error: error.message })
  } finally {
    await node.stop()
  }
  return results
}
