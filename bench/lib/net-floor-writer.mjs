// The writer of the plain-`net` floor (bench/scenarios/net-floor.mjs): one Node process, a
// loopback `net` server that does what contentd's fan-out must do at the least, without
// Socket.IO, Engine.IO or WebSocket code: the same bytes written once to every connected
// socket, one `write` each. Driven over IPC (bench/lib/ipc-child.mjs):
//   → { type: 'ready', port }        listening
//   ← 'connected' → { type: 'connected', sockets }   once `count` sockets are in
//   ← { type: 'run', rounds, paceMs } → { type: 'done', starts, loopMs, loopCpuMicros }
//      rounds of one write per socket, `paceMs` apart; `starts` the wall time (ms) of each
//      round's first write, `loopCpuMicros` this process's CPU inside the write loops
//   ← 'stop' → closes everything and exits
import { createServer } from 'node:net'

const { count, frame: frameBase64 } = JSON.parse(process.env.BENCH_NET_FLOOR ?? '{}')
const frame = Buffer.from(frameBase64, 'base64')
const wallNow = () => performance.timeOrigin + performance.now()
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

const sockets = []
let allIn
const connected = new Promise(resolve => { allIn = resolve })
const server = createServer(socket => {
  // As ws does for a WebSocket: no Nagle delay on small frames.
  socket.setNoDelay(true)
  socket.on('error', () => {})
  sockets.push(socket)
  if (sockets.length === count) allIn()
})
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => process.send({ type: 'ready', port: server.address().port }))

async function run (rounds, paceMs) {
  const starts = []
  const loopMs = []
  let loopCpuMicros = 0
  for (let r = 0; r < rounds; r++) {
    const cpu = process.cpuUsage()
    const started = performance.now()
    starts.push(wallNow())
    for (const socket of sockets) socket.write(frame)
    loopMs.push(performance.now() - started)
    const used = process.cpuUsage(cpu)
    loopCpuMicros += used.user + used.system
    await sleep(paceMs)
  }
  return { starts, loopMs, loopCpuMicros }
}

// The bench gone (a crash, Ctrl-C): nothing of this process is wanted any more.
process.on('disconnect', () => process.exit(0))
process.on('message', async message => {
  if (message === 'connected') {
    await connected
    process.send({ type: 'connected', sockets: sockets.length })
  } else if (message?.type === 'run') {
    process.send({ type: 'done', ...await run(message.rounds, message.paceMs) })
  } else if (message === 'stop') {
    for (const socket of sockets) socket.destroy()
    server.close()
    process.exit(0)
  }
})
