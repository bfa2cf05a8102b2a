// Webhooks across real server processes (docs/design.md §11): a node killed with SIGKILL
// while the receiver is down delivers everything after restart (the cursor is durable), and
// two nodes on one SQLite file deliver each change once (the lease is in the store).
// Receivers are real loopback HTTP servers.
import { rmSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'
import { eventually, Receiver, startReceiver } from './receiver.js'

const env = { WEBHOOK_ALLOW_PRIVATE: 'true' }
const servers: ServerProcess[] = []
const receivers: Receiver[] = []
const dataDirs: string[] = []

afterAll(async () => {
  for (const s of servers) await s.stop('SIGKILL')
  for (const r of receivers) await r.stop()
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true })
})

async function start (dataDir: string, extraEnv: Record<string, string> = {}): Promise<ServerProcess> {
  const server = await startServerProcess({ dataDir, env: { ...env, ...extraEnv } })
  servers.push(server)
  return server
}

describe('webhooks across processes', () => {
  it('kill -9 while the receiver is down: after restart every change arrives, in order, once', async () => {
    const dataDir = makeDataDir()
    dataDirs.push(dataDir)
    const receiver = await startReceiver()
    receivers.push(receiver)
    await receiver.stop() // down: connections to its port are refused
    // Everything logged, to show the secret never is.
    let server = await start(dataDir, { LOG_LEVEL: 'trace' })
    const owner = await ownerWithProject(server.url, 'kim')
    const created = await call(server.url, 'POST', `${owner.path}/webhooks`, { token: owner.session, body: { url: receiver.url } })
    expect(created.status).toBe(201)
    const deliveries = async (url: string) => (await call(url, 'GET', `${owner.path}/webhooks/${created.body.id}/deliveries`, { token: owner.session })).body.deliveries as Array<{ outcome: string, error?: string }>
    for (let i = 0; i < 10; i++) expect((await call(server.url, 'POST', `${owner.path}/content/increment`, { token: owner.key, body: { path: 'n' } })).status).toBe(200)
    await eventually(async () => (await deliveries(server.url)).length >= 2, 'two failed attempts')
    expect((await deliveries(server.url)).every(d => d.outcome === 'failed' && /ECONNREFUSED/.test(d.error ?? ''))).toBe(true)
    for (let i = 0; i < 5; i++) expect((await call(server.url, 'POST', `${owner.path}/content/push`, { token: owner.key, body: { path: 'list', value: i } })).status).toBe(200)
    const firstOutput = server.output()
    expect(await server.stop('SIGKILL')).toBeNull()

    await receiver.start()
    server = await start(dataDir, { LOG_LEVEL: 'trace' })
    await until(() => receiver.received.length >= 15, 'all 15 changes after the restart', 40_000)
    await new Promise(resolve => setTimeout(resolve, 1500))
    expect(receiver.entries().map(e => e.version)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1))
    receiver.verifyAll(created.body.secret)
    const log = await call(server.url, 'GET', `${owner.path}/content/changes`, { token: owner.key })
    expect(receiver.entries()).toEqual(log.body.changes)
    const secretBody = (created.body.secret as string).slice('whsec_'.length)
    expect(firstOutput.length).toBeGreaterThan(0)
    expect(firstOutput + server.output(), 'the secret is never logged').not.toContain(secretBody)
  }, 90_000)

  it('two nodes on one store: each change of each webhook is delivered once, in order', async () => {
    const dataDir = makeDataDir()
    dataDirs.push(dataDir)
    // A little latency, so both nodes are often busy at once.
    const receiver = await startReceiver(async () => { await new Promise(resolve => setTimeout(resolve, Math.random() * 20)); return 204 })
    receivers.push(receiver)
    const a = await start(dataDir)
    const b = await start(dataDir)
    const owner = await ownerWithProject(a.url, 'lee')
    const projects = ['one', 'two', 'three']
    const secrets = new Map<string, string>()
    for (const slug of projects) {
      expect((await call(a.url, 'POST', '/api/projects', { token: owner.session, body: { slug } })).status).toBe(201)
      const hook = await call(b.url, 'POST', `/api/@lee/${slug}/webhooks`, { token: owner.session, body: { url: `${receiver.url}?project=${slug}` } })
      expect(hook.status).toBe(201)
      secrets.set(slug, hook.body.secret)
    }
    const PER_PROJECT = 20
    await Promise.all(projects.map(async slug => {
      for (let i = 0; i < PER_PROJECT; i++) {
        const node = i % 2 === 0 ? a : b
        expect((await call(node.url, 'POST', `/api/@lee/${slug}/content/increment`, { token: owner.key, body: { path: 'n' } })).status).toBe(200)
      }
    }))
    await until(() => receiver.received.length >= PER_PROJECT * projects.length, 'every change delivered', 30_000)
    await new Promise(resolve => setTimeout(resolve, 2500))
    expect(receiver.received).toHaveLength(PER_PROJECT * projects.length)
    for (const slug of projects) {
      const mine = receiver.received.filter(r => JSON.parse(r.body).project === `@lee/${slug}`)
      expect(mine.map(r => JSON.parse(r.body).version), slug).toEqual(Array.from({ length: PER_PROJECT }, (_, i) => i + 1))
    }
    for (const slug of projects) {
      const one = new Receiver()
      one.received.push(...receiver.received.filter(r => JSON.parse(r.body).project === `@lee/${slug}`))
      one.verifyAll(secrets.get(slug) as string)
    }
  }, 90_000)
})
