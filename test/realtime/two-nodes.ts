// Two real server processes on one SQLite data directory with a real redis-server between
// them, started before a describe block's tests and stopped after: the setup of the
// multi-node tests of live paths and live queries (multi-node.test.ts keeps its own, as it
// stops and restarts Redis).
import { rmSync } from 'node:fs'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll } from 'vitest'
import { requireRedisUnlessAbsentLocally, startRedisServer, type RedisServer } from '../support/redis-server.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { connect, Recorder } from './client.js'

/** Whether the tests can run (they skip, loudly, only off CI without redis-server). */
export const hasRedis = requireRedisUnlessAbsentLocally()

export interface TwoNodes {
  readonly node1: ServerProcess
  readonly node2: ServerProcess
  /** A Socket.IO connection to `url`, disconnected after the tests. */
  connect (url: string, token: string): Promise<Socket>
  /** The same, with a Recorder of what it receives. */
  open (url: string, token: string): Promise<Recorder>
  /** Something else to close after the tests (an event stream). */
  closeAfter (closable: { close (): void }): void
}

/** Call inside a describe block. */
export function twoNodesWithRedis (): TwoNodes {
  let redis: RedisServer | undefined
  const nodes: ServerProcess[] = []
  const dataDir = makeDataDir()
  const closables: Array<{ close (): void }> = []
  beforeAll(async () => {
    redis = await startRedisServer()
    const env = { REDIS_URL: redis.url }
    nodes.push(await startServerProcess({ dataDir, env }), await startServerProcess({ dataDir, env }))
  })
  afterAll(async () => {
    for (const closable of closables) closable.close()
    await Promise.all(nodes.map(node => node.stop()))
    await redis?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  const started = (index: number): ServerProcess => {
    const node = nodes[index]
    if (!node) throw new Error('the nodes are not started yet (use them inside a test)')
    return node
  }
  const connectTo = async (url: string, token: string): Promise<Socket> => {
    const socket = await connect(url, token)
    closables.push({ close: () => socket.disconnect() })
    return socket
  }
  return {
    get node1 () { return started(0) },
    get node2 () { return started(1) },
    connect: connectTo,
    open: async (url, token) => new Recorder(await connectTo(url, token)),
    closeAfter: closable => { closables.push(closable) }
  }
}
