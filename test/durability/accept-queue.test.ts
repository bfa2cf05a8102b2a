// SIGTERM while connections wait in the accept queue: a loaded server falls behind accepting
// (libuv takes one connection per event-loop turn), and a client whose connection the kernel
// completed has written its request. Closing the listener at the signal would reset those
// connections; they must be accepted and answered (docs/design.md §8: finish requests in
// flight). The server is frozen with SIGSTOP to hold every connection in the queue for sure.
import { rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { afterAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'

const CLIENTS = 16
const dataDir = makeDataDir()
let server: ServerProcess | undefined

afterAll(async () => {
  server?.child.kill('SIGCONT')
  await server?.stop('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

/** Sends an increment on its own new connection; resolves `written` once it is on the wire. */
function increment (url: string, token: string, path: string, agent: Agent): { written: Promise<void>, answer: Promise<number | string> } {
  let written: () => void = () => {}
  const onWire = new Promise<void>(resolve => { written = resolve })
  const answer = new Promise<number | string>(resolve => {
    const payload = JSON.stringify({ path: 'counter' })
    const req = request(`${url}${path}/content/increment`, {
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }
    }, res => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)) })
    req.on('finish', () => written())
    req.on('error', (e: NodeJS.ErrnoException) => { written(); resolve(e.code ?? e.message) })
    req.end(payload)
  })
  return { written: onWire, answer }
}

describe('SIGTERM with connections not yet accepted', () => {
  it(`answers all ${CLIENTS} requests written before the signal, exits 0 and keeps them`, { timeout: 60_000 }, async () => {
    server = await startServerProcess({ dataDir })
    const { key, path } = await ownerWithProject(server.url, 'queued')
    server.child.kill('SIGSTOP')
    // One connection per request; the kernel completes each handshake for the frozen server.
    const agent = new Agent({ keepAlive: false, maxSockets: CLIENTS })
    const requests = Array.from({ length: CLIENTS }, () => increment(server!.url, key, path, agent))
    await Promise.all(requests.map(r => r.written))
    const exit = server.stop('SIGTERM')
    server.child.kill('SIGCONT')
    expect(await Promise.all(requests.map(r => r.answer))).toEqual(Array.from({ length: CLIENTS }, () => 200))
    expect(await exit).toBe(0)
    agent.destroy()

    server = await startServerProcess({ dataDir })
    expect((await call(server.url, 'GET', `${path}/content`, { token: key })).body).toEqual({ counter: CLIENTS })
  })
})
