// Receivers of the plain-`net` floor (bench/scenarios/net-floor.mjs): `count` loopback `net`
// connections to the writer, each counting the bytes it receives and noting the wall time
// (ms) at which each whole frame of `frameLength` bytes has arrived. Driven over IPC:
//   → { type: 'ready', sockets }     all connected
//   ← 'report' → { type: 'report', arrivals, received }
//      arrivals[round]: the arrival times of that round's frame, one per socket that got it;
//      received: the bytes each socket got in all (to tell a lost write)
//   ← 'stop' → closes everything and exits
import { connect } from 'node:net'

// The bench gone (a crash, Ctrl-C): nothing of this process is wanted any more.
process.on('disconnect', () => process.exit(0))

const { port, count, frameLength, rounds } = JSON.parse(process.env.BENCH_NET_FLOOR_RECEIVERS ?? '{}')
const GROUP = 50
const wallNow = () => performance.timeOrigin + performance.now()

const arrivals = Array.from({ length: rounds }, () => [])
const sockets = []
const received = []

function open (index) {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' })
    received[index] = 0
    socket.setNoDelay(true)
    socket.on('data', chunk => {
      const before = Math.floor(received[index] / frameLength)
      received[index] += chunk.length
      const after = Math.min(rounds, Math.floor(received[index] / frameLength))
      if (after > before) {
        const at = wallNow()
        for (let r = before; r < after; r++) arrivals[r].push(at)
      }
    })
    socket.once('connect', () => resolve(socket))
    socket.once('error', reject)
  })
}

for (let i = 0; i < count; i += GROUP) {
  sockets.push(...await Promise.all(Array.from({ length: Math.min(GROUP, count - i) }, (_, j) => open(i + j))))
}
for (const socket of sockets) socket.on('error', () => {})

process.on('message', message => {
  if (message === 'report') {
    process.send({ type: 'report', arrivals, received })
  } else if (message === 'stop') {
    for (const socket of sockets) socket.destroy()
    process.exit(0)
  }
})
process.send({ type: 'ready', sockets: sockets.length })
