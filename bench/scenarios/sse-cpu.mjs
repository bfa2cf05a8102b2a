// SSE against Socket.IO, server CPU per change (issue 35), on one node and one project:
// BENCH_SSE_CPU_SUBSCRIBERS (1,000) Server-Sent Events streams of the project hear
// BENCH_SSE_CPU_CHANGES (100) increments made one at a time; then, with the streams closed,
// as many Socket.IO subscribers (raw WebSocket clients in a child process that count without
// decoding, bench/lib/fanout-members.mjs) hear as many increments of the same counter. The
// server's CPU per change is measured the one way every scenario does
// (bench/lib/cpu-per-change.mjs: /proc around the writes, plus a settle time). Both sides run
// in each of BENCH_SSE_CPU_ROUNDS (3) rounds, the order alternating, so the machine's drift
// falls on both; the goal's ratio is over all rounds, with each round's beside it. Every
// stream and subscriber must hear every change, or the round is FAILED.
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { serverCpuPerChange } from '../lib/cpu-per-change.mjs'
import { forkChild } from '../lib/ipc-child.mjs'
import { openStream } from '../lib/sse-stream.mjs'

const SUBSCRIBERS = Number(process.env.BENCH_SSE_CPU_SUBSCRIBERS ?? 1000)
const CHANGES = Number(process.env.BENCH_SSE_CPU_CHANGES ?? 100)
const ROUNDS = Number(process.env.BENCH_SSE_CPU_ROUNDS ?? 3)
const GROUP = 50
const settle = ms => new Promise(resolve => setTimeout(resolve, ms))

const increment = (node, ctx) => expectStatus(call(node.url, 'POST', `${ctx.path}/content/increment`, { token: ctx.key, body: { path: 'counter' } }), 200, 'increment')

/** Server CPU ms per change with SUBSCRIBERS SSE streams, and the events they heard. */
async function sseSide (node, ctx) {
  let heard = 0
  const streams = []
  try {
    for (let i = 0; i < SUBSCRIBERS; i += GROUP) {
      streams.push(...await Promise.all(Array.from({ length: Math.min(GROUP, SUBSCRIBERS - i) }, () =>
        openStream(node.url, `${ctx.path}/content/events`, ctx.key, undefined, () => { heard += 1 }))))
    }
    // The streams' first events (the snapshots) are not the changes counted.
    await settle(500)
    heard = 0
    const ms = await serverCpuPerChange(node.pid, CHANGES, () => increment(node, ctx))
    return { ms, heard }
  } finally {
    for (const stream of streams) stream.close()
    // The server lets the streams go before the other side is measured.
    await settle(1000)
  }
}

/** Server CPU ms per change with SUBSCRIBERS Socket.IO subscribers, and the changes they heard. */
async function socketSide (node, ctx) {
  const members = forkChild('bench/lib/fanout-members.mjs', { BENCH_FANOUT_MEMBERS: JSON.stringify({ port: node.port, token: ctx.key, project: ctx.project, count: SUBSCRIBERS }) })
  try {
    await members.ready
    await settle(500)
    const before = await members.ask('report')
    const ms = await serverCpuPerChange(node.pid, CHANGES, () => increment(node, ctx))
    const after = await members.ask('report')
    return { ms, heard: after.messages - before.messages, disconnected: after.disconnected }
  } finally {
    await members.stop()
    await settle(1000)
  }
}

export async function sseCpu () {
  const node = await startContentd({ SOCKET_CONNECTIONS_PER_IDENTITY: String(SUBSCRIBERS * 2) })
  try {
    const user = await owner(node.url, 'ssecpu')
    const ctx = { key: user.key, project: '@ssecpu/demo', path: await user.project('demo', { counter: 0 }) }
    const expected = SUBSCRIBERS * CHANGES
    const rounds = []
    for (let round = 0; round < ROUNDS; round++) {
      const sseFirst = round % 2 === 0
      const sse = sseFirst ? await sseSide(node, ctx) : undefined
      const socket = await socketSide(node, ctx)
      const sseAfter = sseFirst ? sse : await sseSide(node, ctx)
      const complete = sseAfter.heard === expected && socket.heard === expected && !socket.disconnected
      rounds.push({
        order: sseFirst ? 'SSE, then Socket.IO' : 'Socket.IO, then SSE',
        sseMs: sseAfter.ms,
        socketMs: socket.ms,
        complete,
        note: `heard ${sseAfter.heard} SSE events and ${socket.heard} Socket.IO changes of ${expected} each${socket.disconnected ? `; ${socket.disconnected} disconnected` : ''}`
      })
    }
    const mean = key => rounds.reduce((n, r) => n + r[key], 0) / rounds.length
    const sseMs = mean('sseMs')
    const socketMs = mean('socketMs')
    const failed = rounds.some(r => !r.complete)
    return {
      scenario: `SSE ÷ Socket.IO server CPU per change, ${SUBSCRIBERS} each`,
      kind: 'sse-cpu',
      subscribers: SUBSCRIBERS,
      changes: CHANGES,
      rounds,
      sseMs,
      socketMs,
      ratio: sseMs / socketMs,
      failed,
      note: failed ? 'a round missed deliveries' : `${ROUNDS} rounds of ${CHANGES} changes a side, every delivery heard`
    }
  } finally {
    await node.stop()
  }
}
