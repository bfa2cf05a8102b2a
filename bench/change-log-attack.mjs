// The change-log attack of issue 26 (finding 3), run by hand: `node bench/change-log-attack.mjs
// [reverts]`. A user grows a document to about 7 MB, then sends `reverts` (default 110)
// 13-byte revert requests, each storing the whole document in its log entry. A read key then
// reads the whole log through each door once — `GET …/content/changes?limit=1000` following
// `more`, an SSE stream from `?since=0`, Socket.IO `subscribe`s from `since: 0` following
// `more`; each reader in a child process — while another user increments their own
// project every 20 ms (DOORS=none,sse,… picks doors; `none` is the baseline without a
// reader). Prints, per door, the server's peak RSS, the other user's increment
// latencies and statuses, and what the reader got. docs/design.md §13b wants the other user
// answered within 1 s, and the process up (SECURITY.md has the numbers before and after).
import { spawn } from 'node:child_process'
import { call, expectStatus, owner, startContentd } from './lib/contentd.mjs'
import { rssBytes, stopAll } from './lib/processes.mjs'

const reverts = Number(process.argv[2] ?? 110)
const MiB = 1024 * 1024
const mib = bytes => `${(bytes / MiB).toFixed(0)} MiB`

// PROFILE=dir writes the server's CPU profile there (node --cpu-prof).
const server = await startContentd({ SOCKET_RESUBSCRIBE_BYTES: String(2048 * MiB) }, process.env.PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE}`] : [])
try {
  const attacker = await owner(server.url, 'attacker')
  const path = await attacker.project('big', {})
  // About 7 MB in 1 MB writes (BODY_LIMIT), then the reverts to it.
  for (let i = 0; i < 7; i++) await expectStatus(call(server.url, 'POST', `${path}/content/set`, { token: attacker.key, body: { path: `part${i}`, value: 'x'.repeat(1_000_000 - 100) } }), 200, 'set')
  const full = 8 // version 1 is the empty document
  const started = performance.now()
  for (let i = 0; i < reverts; i++) await expectStatus(call(server.url, 'POST', `${path}/content/revert`, { token: attacker.key, body: { version: full } }), 200, 'revert')
  console.log(`${reverts} reverts of a ${mib(7_000_000)} document written in ${((performance.now() - started) / 1000).toFixed(1)} s; RSS now ${mib(rssBytes(server.pid))}`)
  const readerKey = (await expectStatus(call(server.url, 'POST', '/api/keys', { token: attacker.session, body: { name: 'reader', permission: 'read' } }), 201, 'read key')).body.key
  const other = await owner(server.url, 'other')
  const otherPath = await other.project('small', { n: 0 })

  /** Runs a reader in a child process (reading 700 MB here would delay the measured requests); its last line is JSON. */
  async function inChild (code, args) {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code, ...args], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() })
    let out = ''
    child.stdout.on('data', chunk => { out += chunk })
    await new Promise(resolve => child.on('exit', resolve))
    return JSON.parse(out.trim().split('\n').at(-1) || '{}')
  }

  const doors = {
    // The baseline: the other user's increments with no reader at all.
    async none () {
      await new Promise(resolve => setTimeout(resolve, 10_000))
      return 'nothing (10 s without a reader)'
    },
    // Follows `more` through the whole log, as a reader wanting all of it would.
    async changes () {
      const { status, bytes, pages, entries } = await inChild(`
        let since = 0, pages = 0, entries = 0, bytes = 0, status = 200
        for (;;) {
          const r = await fetch(process.argv[1] + '?since=' + since + '&limit=1000', { headers: { authorization: 'Bearer ' + process.argv[2] } })
          const text = await r.text()
          status = r.status
          if (r.status !== 200) break
          const page = JSON.parse(text)
          pages += 1; entries += page.changes.length; bytes += Buffer.byteLength(text)
          if (!page.more) break
          since = page.changes.at(-1).version
        }
        console.log(JSON.stringify({ status, bytes, pages, entries }))`, [`${server.url}${path}/content/changes`, readerKey])
      return `${status}, ${mib(bytes)} in ${pages} pages, ${entries} entries`
    },
    // Read in a child process: a reader taking 700 MB as fast as it comes would otherwise
    // starve this process's own event loop, and with it the other user's measured requests.
    async sse () {
      const reader = `
        const marker = Buffer.from('event: change\\n')
        let bytes = 0, events = 0, tail = Buffer.alloc(0)
        const r = await fetch(process.argv[1], { headers: { authorization: 'Bearer ' + process.argv[2] }, signal: AbortSignal.timeout(60_000) })
        try {
          for await (const chunk of r.body) {
            bytes += chunk.length
            const data = Buffer.concat([tail, chunk])
            for (let at = data.indexOf(marker); at >= 0; at = data.indexOf(marker, at + marker.length)) events += 1
            tail = data.subarray(Math.max(0, data.length - marker.length + 1))
            if (events >= Number(process.argv[3])) break
          }
        } catch {}
        console.log(JSON.stringify({ status: r.status, bytes, events }))
        process.exit(0)`
      const child = spawn(process.execPath, ['--input-type=module', '-e', reader, `${server.url}${path}/content/events?since=0`, readerKey, String(full + reverts)], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      child.stdout.on('data', chunk => { out += chunk })
      await new Promise(resolve => child.on('exit', resolve))
      const { status, bytes, events } = JSON.parse(out || '{"status":0,"bytes":0,"events":0}')
      return `${status}, ${mib(bytes)} in ${events} change events`
    },
    // Subscribes again from the last version while the ack says `more`, as the SDK does.
    async socket () {
      const { outcome } = await inChild(`
        const { io } = await import('socket.io-client')
        const socket = io(process.argv[1], { auth: { token: process.argv[2] }, transports: ['websocket'], reconnection: false, forceNew: true })
        let since = 0, acks = 0, entries = 0, outcome
        try {
          for (;;) {
            const ack = await socket.timeout(120_000).emitWithAck('subscribe', { project: '@attacker/big', since })
            if (!ack.ok) { outcome = ack.code + ' after ' + acks + ' acks'; break }
            acks += 1; entries += ack.changes.length
            if (ack.more !== true) { outcome = 'ok, ' + acks + ' acks, ' + entries + ' entries'; break }
            since = ack.version
          }
        } catch (e) { outcome = 'no ack: ' + e.message + ' after ' + acks + ' acks' }
        socket.disconnect()
        console.log(JSON.stringify({ outcome }))
        process.exit(0)`, [server.url, readerKey])
      return outcome
    }
  }

  // DOORS=none,sse runs only those, in that order.
  const chosen = process.env.DOORS?.split(',') ?? Object.keys(doors)
  for (const door of chosen) {
    const read = doors[door]
    await new Promise(resolve => setTimeout(resolve, 2000))
    const before = rssBytes(server.pid)
    let peak = before
    const sampler = setInterval(() => { try { peak = Math.max(peak, rssBytes(server.pid)) } catch { /* exited */ } }, 20)
    const latencies = []
    const statuses = new Map()
    let reading = true
    const victim = (async () => {
      while (reading) {
        const t = performance.now()
        const r = await call(server.url, 'POST', `${otherPath}/content/increment`, { token: other.key, body: { path: 'n' } }).catch(() => ({ status: 'error' }))
        latencies.push(performance.now() - t)
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
        await new Promise(resolve => setTimeout(resolve, 20))
      }
    })()
    const t = performance.now()
    const outcome = await read()
    const took = performance.now() - t
    reading = false
    await victim
    clearInterval(sampler)
    latencies.sort((a, b) => a - b)
    const p50 = latencies[Math.floor(latencies.length / 2)]
    const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]
    if (process.env.VERBOSE) console.log(latencies.map(l => l.toFixed(0)).join(' '))
    console.log(`${door}: reader got ${outcome} in ${(took / 1000).toFixed(1)} s; RSS ${mib(before)} -> peak ${mib(peak)}; other user's increments: ${latencies.length}, p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${latencies.at(-1).toFixed(0)} ms, statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  }
} finally {
  await server.stop()
  await stopAll()
}
