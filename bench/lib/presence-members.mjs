// A child process of the presence scenario: `count` members of one project, each its own
// raw Socket.IO connection (raw-engine-io.mjs), each setting its presence state once a
// second at its own offset in the second, the state carrying the time it was sent. They
// receive every presence event of the project and only count them. Driven over IPC:
//   → { ready, members }           all joined
//   ← 'report' → { frames, bytes, sent }
//   ← 'stop'   → closes everything and exits
import { RawSocketIo } from './raw-engine-io.mjs'

const { port, token, project, first, count, total, intervalMs } = JSON.parse(process.env.BENCH_PRESENCE ?? '{}')
const now = () => performance.timeOrigin + performance.now()

const members = []
for (let i = 0; i < count; i += 25) {
  const group = []
  for (let j = i; j < Math.min(count, i + 25); j++) {
    group.push((async () => {
      const client = await RawSocketIo.open(port, token)
      const subscribed = await client.call(1, 'subscribe', { project })
      if (!subscribed.ok) throw new Error(`subscribe: ${subscribed.code}`)
      const index = first + j
      const joined = await client.call(2, 'presence:set', { project, state: stateOf(index, 0) })
      if (!joined.ok) throw new Error(`presence:set: ${joined.code}`)
      client.stopDecoding()
      return { client, index, seq: 0, next: 0 }
    })())
  }
  members.push(...await Promise.all(group))
}

let sent = 0
let timer = null
process.on('message', message => {
  if (message?.type === 'start') {
    // Every member sets once per interval, at its own offset: evenly spread over all children.
    for (const member of members) member.next = message.epoch + (member.index / total) * intervalMs
    timer = setInterval(tick, 2)
  } else if (message === 'report') {
    process.send({ type: 'report', frames: members.reduce((n, m) => n + m.client.frames, 0), bytes: members.reduce((n, m) => n + m.client.bytes, 0), sent })
  } else if (message === 'stop') {
    clearInterval(timer)
    for (const member of members) member.client.close()
    process.exit(0)
  }
})
process.send({ type: 'ready', members: members.length })

function tick () {
  const at = now()
  for (const member of members) {
    if (member.next > at) continue
    member.next += intervalMs
    member.seq++
    // No ack asked: the state's `t` says when it left, for the probes to time its delivery.
    member.client.send(`42${JSON.stringify(['presence:set', { project, state: stateOf(member.index, member.seq) }])}`)
    sent++
  }
}

function stateOf (index, seq) {
  return { t: now(), member: index, seq, path: `posts.${seq % 50}.title` }
}
