// A change to a project without webhooks costs the webhooks nothing (issue 35): it is not kept
// in RecentChanges and wakes no dispatcher, so no store query follows it. Only the projects with
// webhooks are (server/webhooks/hooked-projects.ts), a set kept current by creates and deletes
// here, by other nodes' (told through the change feed's relay), and by the dispatcher's poll.
// The app's own node, its dispatcher polling only once a minute, so every store read counted is
// one a write caused.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProjectRecord } from '../../server/store/types.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { until } from '../support/wait.js'
import { startReceiver, type Receiver } from './receiver.js'

let app: TestApp
let receiver: Receiver
/** Calls to the store's listDue: the dispatcher's scan, the query a wake costs. */
let scans = 0

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { webhooks: true, webhookPollIntervalMs: 60_000 })
  receiver = await startReceiver()
  const hooks = app.store.webhooks
  const listDue = hooks.listDue.bind(hooks)
  hooks.listDue = async (now, limit) => { scans += 1; return await listDue(now, limit) }
})
afterAll(async () => {
  await receiver?.stop()
  await app?.close()
})

let serial = 0
async function project () {
  serial += 1
  const owner = await ownerWithProject(app.url, `hooked${serial}`)
  const record = await app.store.findProject(`hooked${serial}`, 'demo') as ProjectRecord
  const write = async (value: number) => {
    const r = await call(app.url, 'POST', `${owner.path}/content/set`, { token: owner.key, body: { path: 'n', value } })
    expect(r.status, r.text).toBe(200)
  }
  const createHook = async () => {
    const r = await call(app.url, 'POST', `${owner.path}/webhooks`, { token: owner.session, body: { url: receiver.url } })
    expect(r.status, r.text).toBe(201)
    return r.body.id as string
  }
  return { ...owner, id: record.id, write, createHook }
}

/** Lets the feed hand the writes over (setImmediate) and a woken dispatcher scan. */
const settle = () => new Promise(resolve => setTimeout(resolve, 50))

/** The receiver's entries of that project, by version. */
const delivered = (ref: string) => receiver.entries().filter(e => e.project === ref).map(e => e.version)

describe('webhooks cost nothing per write to a project without any', () => {
  it('keeps no change of such a project and reads nothing from the store for its writes', async () => {
    const plain = await project()
    await until(() => app.node.hooked.loaded, 'the projects with webhooks read')
    await settle()
    const before = scans
    for (let i = 1; i <= 20; i++) await plain.write(i)
    await settle()
    expect(app.node.recent.size, 'nothing kept').toBe(0)
    expect(app.node.recent.get(plain.id, 2)).toBeUndefined()
    expect(scans - before, 'no scan').toBe(0)
  })

  it('keeps and delivers the changes of a project once it has a webhook, and stops when it has none', async () => {
    const hooked = await project()
    await hooked.write(1)
    const hookId = await hooked.createHook()
    expect(app.node.hooked.has(hooked.id), 'known at once after the create').toBe(true)
    const before = scans
    await hooked.write(2)
    await until(() => delivered('@hooked2/demo').includes(2), 'the delivery')
    expect(scans - before, 'woken by the write').toBeGreaterThan(0)
    expect(app.node.recent.get(hooked.id, 2), 'held for the dispatcher').toMatchObject({ version: 2, op: 'set', path: 'n', value: 2 })

    const deleted = await call(app.url, 'DELETE', `${hooked.path}/webhooks/${hookId}`, { token: hooked.session })
    expect(deleted.status, deleted.text).toBe(200)
    await until(() => !app.node.hooked.has(hooked.id), 'forgotten after its last webhook went')
    await settle()
    const size = app.node.recent.size
    const after = scans
    await hooked.write(3)
    await settle()
    expect(app.node.recent.size).toBe(size)
    expect(scans - after).toBe(0)
  })

  it('learns of a webhook created elsewhere: from another node through the feed, or from the poll', async () => {
    const elsewhere = await project()
    const record = (id: string) => ({
      id, projectId: elsewhere.id, url: receiver.url, paths: null, ops: null, description: null,
      // Never opened: only whether the project is known is looked at, not a delivery.
      secretCiphertext: 'v1.x', createdAt: new Date().toISOString(), cursor: 1_000_000, failures: 0,
      failingSince: null, nextAttemptAt: null, disabledAt: null, disabledReason: null, leaseOwner: null, leaseUntil: null
    })
    // Another node created it: this node hears only the relay's message, and asks the store.
    await app.store.webhooks.create(record('whk_' + randomUUID().replaceAll('-', '')))
    expect(app.node.hooked.has(elsewhere.id)).toBe(false)
    app.node.feed.publishWebhooks(elsewhere.id)
    await until(() => app.node.hooked.has(elsewhere.id), 'known after the relay\'s message')

    // The CLI created one (no message): the first poll that finds it due adds its project.
    const cli = await project()
    await cli.write(1)
    const id = 'whk_' + randomUUID().replaceAll('-', '')
    await app.store.webhooks.create({ ...record(id), projectId: cli.id, cursor: 1 })
    await cli.write(2)
    await settle()
    expect(app.node.hooked.has(cli.id), 'no write wakes anything for it yet').toBe(false)
    app.node.webhooks.dispatcher.wake()
    await until(() => app.node.hooked.has(cli.id), 'added by the poll')
  })
})
