// Continuous concurrent writes against a server, counting what was sent and what was
// acknowledged (a 200). Each worker alternates an increment of `counter` with a push of a
// unique tag onto `log`, so afterwards we know exactly which changes the server promised.
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
  /** Of the requests started before markSignal(), how many failed without a response. */
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
  const post = async (op: string, body: unknown): Promise<boolean> => {
    tally.inFlight++
    const startedBeforeSignal = !signalled
    try {
      const response = await fetch(`${url}${projectPath}/content/${op}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body)
      })
      await response.arrayBuffer()
      return response.status === 200
    } catch {
      tally.failures++
      if (startedBeforeSignal) tally.failuresStartedBeforeSignal++
      running = false // the server is gone; stop hammering a closed port
      return false
    } finally {
      tally.inFlight--
    }
  }
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
    }
  }
}
