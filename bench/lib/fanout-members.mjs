// A child process of the wide fan-out scenario (bench/scenarios/fanout-wide.mjs): `count`
// raw Socket.IO connections (raw-engine-io.mjs) subscribed to one project, counting the
// messages they receive without decoding them, and noting the wall time (ms) each arrived at
// (as the plain-`net` floor's receivers do). Driven over IPC:
//   → { type: 'ready', members }   all subscribed
//   ← 'report' → { type: 'report', messages, disconnected }
//   ← 'mark'   → { type: 'marked' }   arrival times are noted from now on, by message number
//   ← 'arrivals' → { type: 'arrivals', arrivals }   arrivals[i]: when each member got its
//      i-th message since the mark (a fan-out sends one message per change, in order)
//   ← 'stop'   → closes everything and exits
import { RawSocketIo } from './raw-engine-io.mjs'

// The bench gone (a crash, Ctrl-C): nothing of this process is wanted any more.
process.on('disconnect', () => process.exit(0))

const { port, token, project, count } = JSON.parse(process.env.BENCH_FANOUT_MEMBERS ?? '{}')
const GROUP = 50
const wallNow = () => performance.timeOrigin + performance.now()

/** Null until 'mark': then arrivals[i] holds the arrival times of each member's i-th message. */
let arrivals = null

const members = []
let disconnected = 0
for (let i = 0; i < count; i += GROUP) {
  const group = []
  for (let j = i; j < Math.min(count, i + GROUP); j++) {
    group.push((async () => {
      const client = await RawSocketIo.open(port, token)
      const subscribed = await client.call(1, 'subscribe', { project })
      if (!subscribed.ok) throw new Error(`subscribe: ${subscribed.code}`)
      client.stopDecoding()
      client.messages = 0
      client.marked = 0
      client.onMessage = () => {
        if (arrivals === null) return
        const index = client.messages - client.marked - 1
        ;(arrivals[index] ??= []).push(wallNow())
      }
      client.closed.then(() => { disconnected++ })
      return client
    })())
  }
  members.push(...await Promise.all(group))
}

process.on('message', message => {
  if (message === 'report') {
    process.send({ type: 'report', messages: members.reduce((n, m) => n + m.messages, 0), disconnected })
  } else if (message === 'mark') {
    for (const member of members) member.marked = member.messages
    arrivals = []
    process.send({ type: 'marked' })
  } else if (message === 'arrivals') {
    process.send({ type: 'arrivals', arrivals: arrivals ?? [] })
  } else if (message === 'stop') {
    for (const member of members) member.close()
    process.exit(0)
  }
})
process.send({ type: 'ready', members: members.length })
