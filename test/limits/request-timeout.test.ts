// REQUEST_TIMEOUT against slow clients (slowloris): a request that arrives in full within
// the timeout is served; one that stalls past it is answered 408 and its connection closed.
// Uses the real server process, where the timeout is wired onto the HTTP server.
import { connect, type Socket } from 'node:net'
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

const TIMEOUT_MS = 1500
let server: ServerProcess

beforeAll(async () => { server = await startServerProcess({ env: { REQUEST_TIMEOUT: `${TIMEOUT_MS}ms` } }) })
afterAll(async () => {
  await server?.stop('SIGKILL')
  if (server) rmSync(server.dataDir, { recursive: true, force: true })
})

/** Opens a raw connection; resolves with everything the server sent once it closes. */
function rawExchange (write: (socket: Socket) => Promise<void>): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1')
    let received = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { received += chunk })
    socket.on('close', () => resolve(received))
    socket.on('error', reject)
    socket.once('connect', () => { write(socket).catch(reject) })
  })
}

const pause = (ms: number) => new Promise(r => setTimeout(r, ms))

describe('REQUEST_TIMEOUT', () => {
  it('serves a slow request that completes within the timeout', async () => {
    const reply = await rawExchange(async socket => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n')
      await pause(TIMEOUT_MS / 3)
      socket.write('Connection: close\r\n\r\n')
    })
    expect(reply).toMatch(/^HTTP\/1\.1 200/)
  })

  it('answers 408 and closes a request still incomplete after the timeout', async () => {
    const started = Date.now()
    const reply = await rawExchange(async socket => {
      socket.write('POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user')
    })
    const took = Date.now() - started
    expect(reply).toMatch(/^HTTP\/1\.1 408/)
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 100)
  })
})
