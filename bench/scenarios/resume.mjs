// Resume and Server-Sent Events (docs/design.md §9), on one node:
// - resume after 1,000 missed changes: a client that has version V while the project is at
//   V + 1,000 asks for what it missed, over Socket.IO (`subscribe {project, since: V}`, timed
//   from the emit to the ack holding the 1,000 changes) and over SSE (`Last-Event-ID: V`,
//   timed from the request to the 1,000th change event). Connections are opened untimed.
// - SSE fan-out: 1,000 streams on one project; changes made over HTTP one at a time at a
//   steady pace, each stream's receipt timed against the HTTP response, as the Socket.IO
//   fan-out scenario does. Every stream must receive every change.
import { io } from 'socket.io-client'
import { call, expectStatus, owner, pacedIncrements, startContentd } from '../lib/contentd.mjs'
import { summary } from '../lib/percentiles.mjs'
import { openStream } from '../lib/sse-stream.mjs'

const MISSED = 1000
const RESUMES = Number(process.env.BENCH_RESUMES ?? 30)
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000)
const CHANGES = Number(process.env.BENCH_FANOUT_CHANGES ?? 50)
const PACE_MS = 100

async function writeMany (base, path, key, count) {
  for (let i = 0; i < count; i += 20) {
    await Promise.all(Array.from({ length: Math.min(20, count - i) }, () =>
      expectStatus(call(base, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } }), 200, 'increment')))
  }
}

async function resumeTimes (node, key, path, project, since) {
  const socketTimes = []
  const sseTimes = []
  const target = since + MISSED
  for (let i = 0; i < RESUMES; i++) {
    const socket = io(node.url, { auth: { token: key }, transports: ['websocket'], forceNew: true, reconnection: false })
    await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('connect_error', reject) })
    const started = performance.now()
    const ack = await socket.timeout(10_000).emitWithAck('subscribe', { project, since })
    socketTimes.push(performance.now() - started)
    socket.close()
    if (!ack.ok || ack.changes.length !== MISSED) throw new Error(`resume over Socket.IO: ${JSON.stringify(ack).slice(0, 200)}`)

    const sseStarted = performance.now()
    let done
    const finished = new Promise(resolve => { done = resolve })
    const stream = await openStream(node.url, `${path}/content/events`, key, since, (id, at) => { if (id === target) done(at) })
    const at = await Promise.race([finished, new Promise((_resolve, reject) => setTimeout(() => reject(new Error('resume over SSE timed out')), 10_000))])
    sseTimes.push(at - sseStarted)
    stream.close()
  }
  return { socket: summary(socketTimes), sse: summary(sseTimes) }
}

async function sseFanout (node, key, path) {
  let timings
  const receipts = []
  const streams = []
  try {
    for (let i = 0; i < SUBSCRIBERS; i += 50) {
      const group = []
      for (let j = i; j < Math.min(SUBSCRIBERS, i + 50); j++) group.push(openStream(node.url, `${path}/content/events`, key, undefined, (version, at) => receipts.push({ version, at })))
      streams.push(...await Promise.all(group))
    }
    await new Promise(resolve => setTimeout(resolve, 500))
    receipts.length = 0 // the snapshots
    timings = await pacedIncrements(node.url, path, key, CHANGES, PACE_MS)
    await new Promise(resolve => setTimeout(resolve, 2000))
  } finally {
    for (const stream of streams) stream.close()
  }
  const { sentAt, answeredAt } = timings
  const counted = receipts.filter(r => answeredAt.has(r.version))
  const fromResponse = counted.map(r => Math.max(0, r.at - answeredAt.get(r.version)))
  // As in the Socket.IO fan-out: the server writes to the streams right after the commit,
  // before it answers the HTTP request, so a change usually arrives before its response
  // (a delay of 0 from the response). The delay from sending the request, which includes
  // the commit (fsync), is in the note.
  const fromRequest = summary(counted.map(r => r.at - sentAt.get(r.version)))
  const expected = SUBSCRIBERS * CHANGES
  const fmt = v => v === undefined ? '—' : v.toFixed(1)
  return { subscribers: SUBSCRIBERS, changes: CHANGES, deliveries: counted.length, ...summary(fromResponse), failed: counted.length !== expected, note: counted.length !== expected ? `${expected - counted.length} deliveries missing` : `from the request being sent: p50 ${fmt(fromRequest.p50)} ms, p99 ${fmt(fromRequest.p99)} ms` }
}

export async function resume () {
  const results = []
  // Limits off, as for every bench server (RATE_LIMIT=0 in startContentd): the re-subscribe
  // budget (1 MiB per user and project per 2 s, issue 12) counts a resume's changes like a
  // snapshot's bytes, and RESUMES back-to-back resumes of ~170 KB each would be refused after
  // the sixth in a window. The scenario measures one resume's latency, not that budget.
  const node = await startContentd({ SOCKET_CONNECTIONS_PER_IDENTITY: String(SUBSCRIBERS * 2), SOCKET_RESUBSCRIBE_BYTES: String(2 ** 40) })
  try {
    const user = await owner(node.url, 'bench')
    const path = await user.project('demo', { n: 0, title: 'a project of about a hundred bytes of content, for scale' })
    const since = 1
    await writeMany(node.url, path, user.key, MISSED)
    const times = await resumeTimes(node, user.key, path, '@bench/demo', since)
    results.push({ scenario: `resume after ${MISSED} missed changes, Socket.IO (subscribe with since)`, kind: 'stream', ...times.socket })
    results.push({ scenario: `resume after ${MISSED} missed changes, SSE (Last-Event-ID)`, kind: 'stream', ...times.sse })
  } catch (error) {
    results.push({ scenario: 'resume', kind: 'stream', failed: true, error: error.message })
  }
  try {
    const user = await owner(node.url, 'fan')
    const path = await user.project('demo', { counter: 0 })
    results.push({ scenario: `SSE fan-out: ${SUBSCRIBERS} streams, one node (after the HTTP response)`, kind: 'stream', ...await sseFanout(node, user.key, path) })
  } catch (error) {
    results.push({ scenario: 'SSE fan-out', kind: 'stream', failed: true, error: error.message })
  } finally {
    await node.stop()
  }
  return results
}
