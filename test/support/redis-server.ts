// A throwaway redis-server on a free loopback port, for tests of what Redis shares between
// nodes. Missing binary: the caller skips loudly, except in CI where it must be present.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createConnection } from 'node:net'
import { freePort } from './server-process.js'

export const redisAvailable = spawnSync('redis-server', ['--version']).status === 0

export function requireRedisUnlessAbsentLocally (): boolean {
  if (redisAvailable) return true
  if (process.env.CI === 'true') throw new Error('redis-server is required in CI (apt-get install -y redis-server)')
  console.warn('SKIPPING Redis tests: redis-server is not installed (apt-get install -y redis-server)')
  return false
}

export interface RedisServer {
  url: string
  port: number
  stop (): Promise<void>
}

/** `port` restarts a Redis where an earlier one (now stopped) listened, to test outages. */
export async function startRedisServer (port?: number): Promise<RedisServer> {
  port ??= await freePort()
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  const deadline = Date.now() + 10_000
  for (;;) {
    const up = await new Promise<boolean>(resolve => {
      const socket = createConnection({ port, host: '127.0.0.1' })
      socket.once('connect', () => { socket.destroy(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (up) break
    if (Date.now() > deadline || child.exitCode !== null) { child.kill('SIGKILL'); throw new Error('redis-server did not start') }
    await new Promise(r => setTimeout(r, 50))
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop () {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    }
  }
}
