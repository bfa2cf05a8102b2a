// Finding "a read key locks its owner out of realtime" (SECURITY.md): every connection that
// ends before its Socket.IO handshake finished must give its per-user slot back. Black-box,
// against the real server process, with hand-made frames over raw TCP: CONNECT with a valid
// read key, then in the SAME TCP write a packet that makes the server drop the connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, createKey, ownerWithProject } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { connect, subscribe } from './client.js'
import { connectPacket, RawWebSocket } from './raw-socket.js'

const LIMIT = 3
const ROUNDS = 40
const METRICS_TOKEN = 'metrics-token-for-the-slot-tests'

let server: ServerProcess

beforeAll(async () => {
  server = await startServerProcess({ env: { SOCKET_CONNECTIONS_PER_IDENTITY: String(LIMIT), METRICS_TOKEN } })
})

/** A fresh owner per test, so each abandon pattern is shown to leak (or not) on its own. */
async function ownerWithReadKey (username: string) {
  const { session } = await ownerWithProject(server.url, username)
  const { key } = await createKey(server.url, session, { name: 'embedded in a page', permission: 'read' })
  return { session, readKey: key }
}
afterAll(async () => { await server.stop() })

/** A gauge's value on /metrics. */
async function gauge (name: string): Promise<number> {
  const r = await call(server.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  const line = r.text.split('\n').find(l => l.startsWith(`${name} `))
  if (!line) throw new Error(`${name} is not on /metrics`)
  return Number(line.split(' ')[1])
}

/** Waits until the slot gauge reads `expected` (the server sees closes a moment later). */
async function slotsSettleAt (expected: number): Promise<number> {
  let value = NaN
  for (let i = 0; i < 100; i++) {
    value = await gauge('contentd_realtime_connection_slots')
    if (value === expected) break
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return value
}

const ABANDON_PATTERNS: Record<string, string[]> = {
  'a malformed packet (broken JSON)': ['42{"not json'],
  'a DISCONNECT (41) right after the CONNECT': ['41'],
  'an event with a reserved name': ['42["connect"]'],
  'an oversize frame (over the 16 KiB message limit)': [`42["subscribe",${JSON.stringify({ project: 'x'.repeat(20_000) })}]`]
}

describe('connection slots are released on every path out of the handshake', () => {
  for (const [index, [pattern, after]] of Object.entries(ABANDON_PATTERNS).entries()) {
    it(`${ROUNDS} connections abandoned with ${pattern}: the owner still connects and subscribes`, async () => {
      const username = `locked${index}`
      const { session, readKey } = await ownerWithReadKey(username)
      for (let round = 0; round < ROUNDS; round++) {
        const ws = await RawWebSocket.engineIo(server.port)
        ws.send(connectPacket(readKey), ...after)
        await ws.closed
      }
      const socket = await connect(server.url, session)
      try {
        expect(await subscribe(socket, `@${username}/demo`)).toMatchObject({ ok: true, version: 0 })
      } finally {
        socket.disconnect()
      }
      // Nothing is open any more, so nothing may hold a slot.
      expect(await slotsSettleAt(0)).toBe(0)
    })
  }

  it('counts live sockets only: the gauge follows connections, and the limit still holds', async () => {
    expect(await slotsSettleAt(0)).toBe(0)
    const { session, readKey } = await ownerWithReadKey('live-only')
    const sockets = await Promise.all(Array.from({ length: LIMIT }, () => connect(server.url, readKey)))
    expect(await gauge('contentd_realtime_connection_slots')).toBe(LIMIT)
    expect(await gauge('contentd_active_sockets')).toBe(LIMIT)
    const refused: any = await connect(server.url, session).then(s => { s.disconnect(); return null }, e => e)
    expect(refused?.data).toMatchObject({ code: 'TOO_MANY_CONNECTIONS' })
    for (const s of sockets) s.disconnect()
    expect(await slotsSettleAt(0)).toBe(0)
  })
})
