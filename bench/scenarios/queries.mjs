// Live queries (issue 30, docs/design.md §16), one node:
//  1. a top-10 query over an object of BENCH_QUERY_CHILDREN (default 50,000) children; each
//     change increments the leader's score (so every change alters the result and sends one
//     `query` event); the event's arrival is timed against the HTTP response, as in fanout.mjs;
//  2. BENCH_QUERY_SUBSCRIBERS (default 1,000) subscribers to 10 distinct queries on one project.
// Rows use the fan-out table's shape (kind 'fanout', `nodes` 1). The server's CPU per change
// compared with a plain path subscription is not measured here yet.
import { io } from 'socket.io-client'
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { percentile } from '../lib/percentiles.mjs'

const CHILDREN = Number(process.env.BENCH_QUERY_CHILDREN ?? 50_000)
const SUBSCRIBERS = Number(process.env.BENCH_QUERY_SUBSCRIBERS ?? 1000)
const CHANGES = Number(process.env.BENCH_QUERY_CHANGES ?? 50)
const PACE_MS = 100

async function subscriber (url, token, project, query, onEvent) {
  const socket = io(url, { auth: { token }, transports: ['websocket'], forceNew: true, reconnection: false })
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', e => reject(new Error(`connect: ${e.message}`)))
  })
  const ack = await socket.timeout(30_000).emitWithAck('subscribe', { project, path: 'board', query })
  if (!ack.ok) throw new Error(`subscribe: ${ack.code} ${ack.message}`)
  socket.on('query', onEvent)
  return socket
}

/** Increments the leader `count` times, `paceMs` apart; when each version's answer came. */
async function pacedLeaderIncrements (base, path, token, leader, count) {
  const answeredAt = new Map()
  const sentAt = new Map()
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    const r = await expectStatus(call(base, 'POST', `${path}/content/increment`, { token, body: { path: `board.${leader}.score` } }), 200, 'increment')
    const version = Number(JSON.parse(r.headers.get('etag')))
    sentAt.set(version, started)
    answeredAt.set(version, performance.now())
    await new Promise(resolve => setTimeout(resolve, PACE_MS))
  }
  return { sentAt, answeredAt }
}

async function run (node, label, slug, queries, subscribers) {
  const user = await owner(node.url, slug)
  const board = {}
  for (let i = 0; i < CHILDREN; i++) board[`p${i}`] = { score: i % 1000, name: `player ${i}` }
  const leader = `p${CHILDREN > 999 ? 999 : CHILDREN - 1}`
  board[leader].score = 1_000_000
  const path = await user.project(slug, { board })
  const receipts = []
  const sockets = []
  try {
    for (let i = 0; i < subscribers; i += 50) {
      const group = []
      for (let j = i; j < Math.min(subscribers, i + 50); j++) {
        group.push(subscriber(node.url, user.key, `@${slug}/${slug}`, queries[j % queries.length], e => receipts.push({ version: e.version, at: performance.now() })))
      }
      sockets.push(...await Promise.all(group))
    }
    const { sentAt, answeredAt } = await pacedLeaderIncrements(node.url, path, user.key, leader, CHANGES)
    await new Promise(resolve => setTimeout(resolve, 2000))
    const fromResponse = receipts.filter(r => answeredAt.has(r.version)).map(r => Math.max(0, r.at - answeredAt.get(r.version))).sort((a, b) => a - b)
    const fromRequest = receipts.filter(r => sentAt.has(r.version)).map(r => r.at - sentAt.get(r.version)).sort((a, b) => a - b)
    const expected = subscribers * CHANGES
    return {
      scenario: label,
      kind: 'fanout',
      nodes: 1,
      subscribers,
      changes: CHANGES,
      deliveries: receipts.length,
      p50: percentile(fromResponse, 50),
      p99: percentile(fromResponse, 99),
      requestP50: percentile(fromRequest, 50),
      requestP99: percentile(fromRequest, 99),
      failed: receipts.length !== expected,
      note: receipts.length !== expected ? `${expected - receipts.length} query events missing` : `${CHILDREN} children; ${queries.length} distinct queries`
    }
  } finally {
    for (const socket of sockets) socket.close()
  }
}

export async function queries () {
  const node = await startContentd({ SOCKET_CONNECTIONS_PER_IDENTITY: String(SUBSCRIBERS * 2), CONTENT_LIMIT: String(16 * 1024 * 1024), BODY_LIMIT: String(16 * 1024 * 1024) })
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
