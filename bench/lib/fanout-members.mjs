// A child process of the wide fan-out scenario (bench/scenarios/fanout-wide.mjs): `count`
// raw Socket.IO connections (raw-engine-io.mjs) subscribed to one project, counting the
// messages they receive without decoding them. Driven over IPC:
//   → { type: 'ready', members }   all subscribed
//   ← 'report' → { type: 'report', messages, disconnected }
//   ← 'stop'   → closes everything and exits
import { RawSocketIo } from './raw-engine-io.mjs'

// The bench gone (a crash, Ctrl-C): nothing of this process is wanted any more.
process.on('disconnect', () => process.exit(0))

const { port, token, project, count } = JSON.parse(process.env.BENCH_FANOUT_MEMBERS ?? '{}')
const GROUP = 50

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
      client.closed.then(() => { disconnected++ })
      return client
    })())
  }
  members.push(...await Promise.all(group))
}

process.on('message', message => {
  if (message === 'report') {
    process.send({ type: 'report', messages: members.reduce((n, m) => n + m.messages, 0), disconnected })
  } else if (message === 'stop') {
    for (const member of members) member.close()
    process.exit(0)
  }
})
process.send({ type: 'ready', members: members.length })
