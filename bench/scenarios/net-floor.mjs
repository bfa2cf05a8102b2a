// The plain-`net` floor of the wide fan-out (issue 35): what one Node process needs to put the
// bytes of one change event, as Socket.IO sends it, on as many loopback sockets as the wide
// fan-out has subscribers, without Socket.IO, Engine.IO or WebSocket code. The same sizes,
// processes and pace as bench/scenarios/fanout-wide.mjs (BENCH_WIDE_SUBSCRIBERS sockets,
// BENCH_WIDE_CHANGES rounds 250 ms apart, receivers in as many child processes as its members),
// so that the goal's ratio compares two measurements of one run:
// - the bytes: a contentd server is started, a raw Socket.IO subscriber (raw-engine-io.mjs)
//   of a project like the wide scenario's hears ten increments, and the last change event's
//   WebSocket frame (header and text, unmasked as a server sends it) is what the floor writes;
// - the writer (bench/lib/net-floor-writer.mjs) writes it once to every socket per round, one
//   `write` each; the receivers (bench/lib/net-floor-receivers.mjs) note when each socket has
//   the whole frame. Delay: from the round's first write (the writer's wall clock; one machine);
// - server CPU per delivery: the writer's CPU from /proc over the rounds and a settle time,
//   as the wide scenario measures contentd's, and its CPU inside the write loops alone.
// None lost: every socket must get every round's bytes, and no more.
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { forkChild } from '../lib/ipc-child.mjs'
import { percentile } from '../lib/percentiles.mjs'
import { cpuMs } from '../lib/processes.mjs'
import { RawSocketIo } from '../lib/raw-engine-io.mjs'
import { CHANGES, MEMBER_PROCESSES, PACE_MS, PROJECT, SUBSCRIBERS, splitAmong } from './fanout-wide.mjs'

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

/** A WebSocket text frame as a server sends it (FIN, no mask). */
function serverFrame (text) {
  const payload = Buffer.from(text)
  const length = payload.length
  const header = length < 126 ? Buffer.from([0x81, length])
    : length < 65536 ? Buffer.from([0x81, 126, length >> 8, length & 0xff])
      : Buffer.concat([Buffer.from([0x81, 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(length)); return b })()])
  return Buffer.concat([header, payload])
}

/** The frame of one change event of an increment, captured from contentd (the wide scenario's project and content). */
async function changeEventFrame () {
  const server = await startContentd()
  let client
  try {
    const user = await owner(server.url, 'bench')
    const path = await user.project('demo', { counter: 0 })
    client = await RawSocketIo.open(server.port, user.key)
    const subscribed = await client.call(1, 'subscribe', { project: PROJECT })
    if (!subscribed.ok) throw new Error(`subscribe: ${subscribed.code}`)
    let text
    // Ten changes, so the version has the digits most of the wide scenario's changes have.
    for (let i = 0; i < 10; i++) {
      await expectStatus(call(server.url, 'POST', `${path}/content/increment`, { token: user.key, body: { path: 'counter' } }), 200, 'increment')
      text = await client.next(t => t.startsWith('42["change"'))
    }
    return serverFrame(text)
  } finally {
    client?.close()
    await server.stop()
  }
}

export async function netFloor () {
  const frame = await changeEventFrame()
  const writer = forkChild('bench/lib/net-floor-writer.mjs', { BENCH_NET_FLOOR: JSON.stringify({ count: SUBSCRIBERS, frame: frame.toString('base64') }) })
  const receivers = []
  try {
    const { port } = await writer.ready
    for (const count of splitAmong(SUBSCRIBERS, MEMBER_PROCESSES)) {
      if (count > 0) receivers.push(forkChild('bench/lib/net-floor-receivers.mjs', { BENCH_NET_FLOOR_RECEIVERS: JSON.stringify({ port, count, frameLength: frame.length, rounds: CHANGES }) }))
    }
    await Promise.all(receivers.map(r => r.ready))
    await writer.ask('connected')
    // As the wide scenario waits after its subscribers are in.
    await sleep(2000)
    const cpuBefore = cpuMs(writer.pid)
    const done = await writer.ask({ type: 'run', rounds: CHANGES, paceMs: PACE_MS }, 'done')
    await sleep(3000)
    const cpu = cpuMs(writer.pid) - cpuBefore
    const reports = await Promise.all(receivers.map(r => r.ask('report')))
    const delays = []
    for (const { arrivals } of reports) arrivals.forEach((times, round) => { for (const at of times) delays.push(Math.max(0, at - done.starts[round])) })
    delays.sort((a, b) => a - b)
    const expected = SUBSCRIBERS * CHANGES
    const lost = expected - delays.length
    const wrongBytes = reports.reduce((n, r) => n + r.received.filter(bytes => bytes !== CHANGES * frame.length).length, 0)
    const loops = [...done.loopMs].sort((a, b) => a - b)
    const perRoundP99 = done.starts.map((start, round) => percentile(reports.flatMap(r => r.arrivals[round].map(at => Math.max(0, at - start))).sort((a, b) => a - b), 99))
    return {
      scenario: `plain \`net\` floor: ${SUBSCRIBERS} loopback sockets, one writer process, ${MEMBER_PROCESSES} receiver processes`,
      kind: 'net-floor',
      sockets: SUBSCRIBERS,
      rounds: CHANGES,
      frameBytes: frame.length,
      deliveries: delays.length,
      lost,
      p50: percentile(delays, 50),
      p99: percentile(delays, 99),
      max: delays.at(-1),
      perRoundP99,
      loopP50: percentile(loops, 50),
      loopMax: loops.at(-1),
      cpuMicrosPerDelivery: cpu * 1000 / Math.max(1, delays.length),
      loopCpuMicrosPerDelivery: done.loopCpuMicros / Math.max(1, SUBSCRIBERS * CHANGES),
      failed: lost !== 0 || wrongBytes !== 0,
      note: [
        lost === 0 ? 'none lost' : `${lost} of ${expected} deliveries missing`,
        wrongBytes > 0 ? `${wrongBytes} sockets got other than ${CHANGES} × ${frame.length} bytes` : null,
        `${frame.length}-byte frame of a change event`
      ].filter(Boolean).join('; ')
    }
  } finally {
    await Promise.all(receivers.map(r => r.stop()))
    await writer.stop()
  }
}
