// Durability: a real server process under continuous concurrent increments and pushes is
// killed with SIGKILL at a random moment and restarted on the same DATA_DIR. Every
// acknowledged change must be there, and nothing that was never sent; and the change log
// and the content must agree exactly (docs/design.md §9): one entry per version, and the
// entries replayed over {} give the content, so nothing is in one only. Then a SIGTERM
// round: requests sent before the signal all get answers, the process exits 0 within 10 s,
// and again nothing acknowledged is lost.
import { rmSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { expectLogAgrees } from '../support/log-agrees.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { startLoad, type LoadTally } from './load.js'

const KILL_ROUNDS = 4
const dataDir = makeDataDir()
// The whole log is kept, so it can be replayed from {} (retention has its own tests).
const env = { HISTORY_LIMIT: '0' }
let server: ServerProcess | undefined

afterAll(async () => {
  await server?.stop('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

interface Stored { counter: number, log: string[] }

async function readStored (url: string, token: string, path: string): Promise<Stored> {
  const r = await call(url, 'GET', `${path}/content`, { token })
  expect(r.status).toBe(200)
  return { counter: r.body.counter ?? 0, log: r.body.log ?? [] }
}

/** What a round may have changed: at least everything acknowledged, at most everything sent. */
function checkRound (before: Stored, after: Stored, tally: LoadTally, label: string): void {
  const counted = after.counter - before.counter
  const newTags = after.log.slice(before.log.length)
  console.log(`${label}: increments acked ${tally.incrementsAcked} / stored ${counted} / sent ${tally.incrementsSent}; ` +
    `pushes acked ${tally.pushesAcked.size} / stored ${newTags.length} / sent ${tally.pushesSent.size}`)
  expect(after.log.slice(0, before.log.length), 'earlier elements unchanged').toEqual(before.log)
  expect(counted).toBeGreaterThanOrEqual(tally.incrementsAcked)
  expect(counted).toBeLessThanOrEqual(tally.incrementsSent)
  const stored = new Set(newTags)
  expect(stored.size, 'no element stored twice').toBe(newTags.length)
  const lost = [...tally.pushesAcked].filter(tag => !stored.has(tag))
  expect(lost, 'acknowledged pushes missing').toEqual([])
  const invented = newTags.filter(tag => !tally.pushesSent.has(tag))
  expect(invented, 'stored elements never sent').toEqual([])
}

const randomBetween = (min: number, max: number) => min + Math.floor(Math.random() * (max - min))

describe('crash durability', () => {
  it(`keeps every acknowledged change through ${KILL_ROUNDS} rounds of SIGKILL`, { timeout: 120_000 }, async () => {
    server = await startServerProcess({ dataDir, env })
    const { key, path } = await ownerWithProject(server.url, 'durable')
    let before = await readStored(server.url, key, path)
    for (let round = 1; round <= KILL_ROUNDS; round++) {
      const load = startLoad(server.url, key, path, `k${round}`)
      await new Promise(r => setTimeout(r, randomBetween(300, 1200)))
      await server.stop('SIGKILL')
      await load.stop()
      expect(load.tally.inFlight).toBe(0)
      expect(load.tally.incrementsAcked, 'the load did real work before the kill').toBeGreaterThan(0)
      server = await startServerProcess({ dataDir, env })
      const after = await readStored(server.url, key, path)
      checkRound(before, after, load.tally, `SIGKILL round ${round}`)
      await expectLogAgrees(server.url, key, path, `SIGKILL round ${round}`)
      before = after
    }
  })

  it('finishes in-flight requests on SIGTERM, exits 0 within 10 s and loses nothing', { timeout: 60_000 }, async () => {
    server ??= await startServerProcess({ dataDir, env })
    const { session } = await (async () => {
      const r = await call(server!.url, 'POST', '/api/auth/login', { body: { username: 'durable', password: 'correct horse battery staple' } })
      expect(r.status).toBe(200)
      return { session: r.body.token as string }
    })()
    const path = '/api/@durable/demo'
    const before = await readStored(server.url, session, path)
    const load = startLoad(server.url, session, path, 'term')
    await new Promise(r => setTimeout(r, randomBetween(300, 1000)))
    const inFlightAtSignal = load.tally.inFlight
    load.markSignal()
    const signalledAt = Date.now()
    const exit = server.stop('SIGTERM')
    await load.stop()
    const code = await exit
    const tookMs = Date.now() - signalledAt
    console.log(`SIGTERM: ${inFlightAtSignal} requests in flight at the signal; exit code ${code} after ${tookMs} ms; ` +
      `${load.tally.failures} requests not yet sent at the signal were refused`)
    expect(code).toBe(0)
    expect(tookMs).toBeLessThan(10_000)
    expect(inFlightAtSignal, 'the signal came under load').toBeGreaterThan(0)
    // Every request written before the signal was answered; only requests not yet on the
    // wire may be refused (the listener is closed), at most one per worker.
    expect(load.tally.failuresStartedBeforeSignal).toBe(0)
    expect(load.tally.failures).toBeLessThanOrEqual(16)
    const acked = load.tally.incrementsAcked + load.tally.pushesAcked.size
    const sent = load.tally.incrementsSent + load.tally.pushesSent.size
    expect(acked + load.tally.failures, 'every request got an answer or was refused').toBe(sent)
    server = await startServerProcess({ dataDir, env })
    checkRound(before, await readStored(server.url, session, path), load.tally, 'SIGTERM round')
    await expectLogAgrees(server.url, session, path, 'SIGTERM round')
  })
})
