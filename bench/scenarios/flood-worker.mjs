// The abusive account of the fairness scenario, in a process of its own (a session of its
// own too, so the kernel shares the CPU between it and the server as between two users'
// machines' worth of work) or, with BENCH_FAIRNESS_FLOODER=thread, in a worker thread of the
// bench process; either way its own work never shares the event loop that times the other
// user's requests. Until told to stop it keeps
// three floods going against one contentd: walking every page of its 1,000 keys (each scoped
// to 100 projects), re-subscribing sockets to its ~1 MiB project, and opening Engine.IO
// handshakes. It counts what the server answered and posts the counts back.
import { parentPort, workerData } from 'node:worker_threads'
import { io } from 'socket.io-client'

// A worker thread gets its orders as workerData; a child process, as its first message.
const parent = parentPort ?? process
const orders = parentPort ? workerData : await new Promise(resolve => process.once('message', resolve))
const { url, session, project, keyWalkers, resubscribers, handshakers } = orders
let running = true
const counts = { keyPages: 0, keyPagesLimited: 0, snapshots: 0, subscribesLimited: 0, handshakes: 0, handshakesLimited: 0, errors: 0 }

parent.on('message', message => { if (message === 'stop') running = false })

async function walkKeys () {
  let cursor = null
  while (running) {
    try {
      const response = await fetch(`${url}/api/keys?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${session}` } })
      const body = await response.json()
      if (response.status === 200) { counts.keyPages++; cursor = body.nextCursor } else if (response.status === 429) counts.keyPagesLimited++
      else counts.errors++
    } catch { counts.errors++ }
  }
}

async function resubscribe () {
  const socket = io(url, { auth: { token: session }, transports: ['websocket'], forceNew: true, reconnection: false })
  try {
    await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('connect_error', reject) })
  } catch { counts.errors++; return }
  while (running) {
    try {
      const ack = await socket.timeout(10_000).emitWithAck('subscribe', { project })
      if (ack.ok) counts.snapshots++
      else if (ack.code === 'RATE_LIMITED') counts.subscribesLimited++
      else counts.errors++
    } catch { counts.errors++ }
  }
  socket.close()
}

/** An Engine.IO handshake over long-polling, left unfinished: what a script opening sockets sends. */
async function handshake () {
  while (running) {
    try {
      const response = await fetch(`${url}/socket.io/?EIO=4&transport=polling`)
      await response.arrayBuffer()
      if (response.status === 200) counts.handshakes++
      else if (response.status === 429) counts.handshakesLimited++
      else counts.errors++
    } catch { counts.errors++ }
  }
}

await Promise.all([
  ...Array.from({ length: keyWalkers }, walkKeys),
  ...Array.from({ length: resubscribers }, resubscribe),
  ...Array.from({ length: handshakers }, handshake)
])
if (parentPort) parentPort.postMessage(counts)
else { process.send(counts); process.disconnect() }
