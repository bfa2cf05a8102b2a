// Continuous concurrent writes against a server, counting what was sent and what was
// acknowledged (a 200). Each worker alternates an increment of `counter` with a push of a
// unique tag onto `log`, so afterwards we know exactly which changes the server promised.
import { Agent, request } from 'node:http'

export interface LoadTally {
  incrementsSent: number
  incrementsAcked: number
  /** Tags of every push sent / acknowledged. */
  pushesSent: Set<string>
  pushesAcked: Set<string>
  /** Requests that got neither a response nor a network error yet. */
  inFlight: number
  /** Requests that failed without a response (connection refused or reset). */
  failures: number
  /** Of the requests written to the server before markSignal(), how many got no response. */
  failuresStartedBeforeSignal: number
}

export interface Load {
  tally: LoadTally
  /** Call right before signalling the server: later failures are told apart by start time. */
  markSignal (): void
  /** Stop starting new requests; resolves when every started one has settled. */
  stop (): Promise<void>
}

export function startLoad (url: string, token: string, projectPath: string, tagPrefix: string, concurrency = 16): Load {
  const tally: LoadTally = { incrementsSent: 0, incrementsAcked: 0, pushesSent: new Set(), pushesAcked: new Set(), inFlight: 0, failures: 0, failuresStartedBeforeSignal: 0 }
  let signalled = false
  let running = true
  let sequence = 0
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  // node:http rather than fetch: its 'finish' event says the request was written to the
  // socket, which is what "sent before the signal" means (a request still waiting for a
  // connection when the listener closes is refused, and that is fine).
  const post = (op: string, body: unknown): Promise<boolean> => new Promise(resolve => {
    tally.inFlight++
    let writtenBeforeSignal = false
    let settled = false
    const payload = JSON.stringify(body)
    const req = request(`${url}${projectPath}/content/${op}`, {
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }
    }, res => {
      res.resume()
      res.on('end', () => {
        if (settled) return
        settled = true
        tally.inFlight--
        resolve(res.statusCode === 200)
      })
      res.on('error', fail)
    })
    function fail () {
      if (settled) return
      settled = true
      tally.inFlight--
      tally.failures++
      if (writtenBeforeSignal) tally.failuresStartedBeforeSignal++
      running = false // the server is gone; stop hammering a closed port
      resolve(false)
    }
    req.on('finish', () => { writtenBeforeSignal = !signalled })
    req.on('error', fail)
    req.end(payload)
  })
  const worker = async (id: number) => {
    for (let turn = 0; running; turn++) {
      if (turn % 2 === 0) {
        tally.incrementsSent++
        if (await post('increment', { path: 'counter' })) tally.incrementsAcked++
      } else {
        const tag = `${tagPrefix}-${id}-${sequence++}`
        tally.pushesSent.add(tag)
        if (await post('push', { path: 'log', value: tag })) tally.pushesAcked.add(tag)
      }
    }
  }
  const workers = Array.from({ length: concurrency }, (_, id) => worker(id))
  return {
    tally,
    markSignal () { signalled = true },
    async stop () {
      running = false
      await Promise.all(workers)
      agent.destroy()
    }
  }
}
