// Live paths (docs/design.md §15, issue 29), on one node:
// - on a 1 MiB document, a subscriber to `votes` receives 0 events for 1,000 changes
//   elsewhere and every one of 100 changes to `votes` (counted, not timed);
// - resume after 1,000 missed changes of which 10 touch the path: `subscribe {project, path,
//   since}` timed from the emit to the ack holding exactly those 10 (goal: p50 ≤ 10 ms);
// - `GET …/content/changes?path=` on a 100,000-entry log where 1 % touch the path, timed per
//   request (goal: p50 ≤ 20 ms);
// - fan-out cost: the server's CPU per change (from /proc) with 1,000 path subscribers on 100
//   different paths, against 1,000 whole-project subscribers (goal: ≤ 1.2×).
import { io } from 'socket.io-client'
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { serverCpuPerChange } from '../lib/cpu-per-change.mjs'
import { summary } from '../lib/percentiles.mjs'

const ELSEWHERE = 1000
const ON_PATH = 100
const RESUMES = Number(process.env.BENCH_RESUMES ?? 30)
const LOG_ENTRIES = Number(process.env.BENCH_PATH_LOG ?? 100_000)
const HISTORY_READS = Number(process.env.BENCH_PATH_READS ?? 50)
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000)
const FANOUT_CHANGES = Number(process.env.BENCH_FANOUT_CHANGES ?? 200)

const increment = (base, path, key, at) => expectStatus(call(base, 'POST', `${path}/content/increment`, { token: key, body: { path: at } }), 200, `increment ${at}`)

/** `count` increments, `parallel` at a time, each at the path `pathOf(i)` names. */
async function writeMany (base, path, key, count, pathOf, parallel = 20) {
  for (let i = 0; i < count; i += parallel) {
    await Promise.all(Array.from({ length: Math.min(parallel, count - i) }, (_, j) => increment(base, path, key, pathOf(i + j))))
  }
}

async function connect (url, token) {
  const socket = io(url, { auth: { token }, transports: ['websocket'], forceNew: true, reconnection: false })
  await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('connect_error', reject) })
  return socket
}

/** About 1 MiB of content besides `votes`. */
function bigDocument () {
  const items = {}
  for (let i = 0; i < 4000; i++) items[`item${i}`] = { title: `item ${i} `.padEnd(200, '.'), count: i }
  return { votes: { up: 0 }, items }
}

async function quietPath (node, user) {
  const path = await user.project('big', bigDocument())
  const socket = await connect(node.url, user.key)
  const events = []
  socket.on('change', change => events.push(change))
  const ack = await socket.timeout(10_000).emitWithAck('subscribe', { project: `@${user.name}/big`, path: 'votes' })
  if (!ack.ok) throw new Error(`subscribe: ${JSON.stringify(ack)}`)
  await writeMany(node.url, path, user.key, ELSEWHERE, i => `items.item${i % 4000}.count`)
  await writeMany(node.url, path, user.key, ON_PATH, () => 'votes.up', 1)
  await new Promise(resolve => setTimeout(resolve, 1000))
  socket.close()
  const elsewhere = events.filter(change => change.path !== 'votes.up').length
  const onPath = events.filter(change => change.path === 'votes.up').length
  return { goal: 'quiet', elsewhere, onPath, changesElsewhere: ELSEWHERE, changesOnPath: ON_PATH, failed: elsewhere !== 0 || onPath !== ON_PATH, note: `${elsewhere} events for ${ELSEWHERE} changes elsewhere, ${onPath} of ${ON_PATH} changes to votes` }
}

async function resumeTimes (node, user) {
  const path = await user.project('resume', { votes: 0, n: 0 })
  const since = 1
  // 1,000 missed changes, every 100th at the path.
  await writeMany(node.url, path, user.key, ELSEWHERE, i => i % 100 === 99 ? 'votes' : 'n')
  const times = []
  for (let i = 0; i < RESUMES; i++) {
    const socket = await connect(node.url, user.key)
    const started = performance.now()
    const ack = await socket.timeout(10_000).emitWithAck('subscribe', { project: `@${user.name}/resume`, path: 'votes', since })
    times.push(performance.now() - started)
    socket.close()
    if (!ack.ok || !Array.isArray(ack.changes) || ack.changes.length !== 10) throw new Error(`resume: ${JSON.stringify(ack).slice(0, 200)}`)
  }
  return summary(times)
}

async function historyTimes (node, user) {
  const path = await user.project('history', { votes: 0, n: 0 })
  await writeMany(node.url, path, user.key, LOG_ENTRIES, i => i % 100 === 99 ? 'votes' : 'n', 50)
  const times = []
  for (let i = 0; i < HISTORY_READS; i++) {
    const started = performance.now()
    const page = await expectStatus(call(node.url, 'GET', `${path}/content/changes?path=votes&since=0&limit=1000`, { token: user.key }), 200, 'changes?path=')
    times.push(performance.now() - started)
    // Every 100th write, and the project's first content (an update, which touches every path):
    // one page of at most 1,000 of them.
    const expected = Math.min(1000, LOG_ENTRIES / 100 + 1)
    if (page.body.changes.length !== expected) throw new Error(`changes?path=: ${page.body.changes.length} changes, not ${expected}`)
  }
  return summary(times)
}

/** Server CPU ms per change with `subscribe(i)` for each of SUBSCRIBERS sockets. */
async function cpuPerChange (node, user, slug, request) {
  const path = await user.project(slug, { n: 0, paths: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, 0])) })
  const sockets = []
  let received = 0
  try {
    for (let i = 0; i < SUBSCRIBERS; i += 50) {
      sockets.push(...await Promise.all(Array.from({ length: Math.min(50, SUBSCRIBERS - i) }, async (_, j) => {
        const socket = await connect(node.url, user.key)
        socket.on('change', () => { received += 1 })
        const ack = await socket.timeout(10_000).emitWithAck('subscribe', request(`@${user.name}/${slug}`, i + j))
        if (!ack.ok) throw new Error(`subscribe: ${JSON.stringify(ack).slice(0, 200)}`)
        return socket
      })))
    }
    // Each change touches one of the 100 paths: 10 of the path subscribers get it, all whole-project ones.
    const msPerChange = await serverCpuPerChange(node.pid, FANOUT_CHANGES, i => increment(node.url, path, user.key, `paths.p${i % 100}`))
    return { msPerChange, received }
  } finally {
    for (const socket of sockets) socket.close()
  }
}

export async function livePaths () {
  const results = []
  const node = await startContentd({ HISTORY_LIMIT: '0', SOCKET_CONNECTIONS_PER_IDENTITY: String(SUBSCRIBERS * 3), SOCKET_RESUBSCRIBE_BYTES: String(2 ** 40) })
  try {
    const user = { name: 'paths', ...await owner(node.url, 'paths') }
    const quiet = await quietPath(node, user)
    results.push({ scenario: `live paths: a subscriber to votes on a 1 MiB document (${ELSEWHERE} changes elsewhere, ${ON_PATH} to votes)`, kind: 'paths', ...quiet })
    results.push({ scenario: `live paths: resume after ${ELSEWHERE} missed changes, 10 on the path (goal p50 ≤ 10 ms)`, kind: 'paths', goal: 'resume', ...await resumeTimes(node, user) })
    results.push({ scenario: `live paths: changes?path= on a ${LOG_ENTRIES}-entry log, 1 % on the path (goal p50 ≤ 20 ms)`, kind: 'paths', goal: 'history', logEntries: LOG_ENTRIES, ...await historyTimes(node, user) })
    const whole = await cpuPerChange(node, user, 'fanwhole', project => ({ project }))
    const paths = await cpuPerChange(node, user, 'fanpaths', (project, i) => ({ project, path: `paths.p${i % 100}` }))
    const ratio = paths.msPerChange / whole.msPerChange
    results.push({ scenario: `live paths: fan-out CPU per change, ${SUBSCRIBERS} path subscribers on 100 paths vs ${SUBSCRIBERS} whole-project (goal ≤ 1.2×)`, kind: 'paths', goal: 'fanout', ratio, pathMsPerChange: paths.msPerChange, wholeMsPerChange: whole.msPerChange, subscribers: SUBSCRIBERS, failed: ratio > 1.2, note: `${paths.msPerChange.toFixed(2)} ms vs ${whole.msPerChange.toFixed(2)} ms per change: ${ratio.toFixed(2)}×` })
  } catch (error) {
    results.push({ scenario: 'live paths', kind: 'paths', failed: true, error: error.message })
  } finally {
    await node.stop()
  }
  return results
}
