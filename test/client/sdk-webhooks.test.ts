// The SDK's webhook methods against a real server and a real receiver: add one (its secret
// once), list it, ping it (signed with that secret), see a change delivered in its
// deliveries, delete it; and the owner-only and not-found refusals as ContentdError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, ContentdError, type ContentdClient } from '../../shared/client/index.js'
import { ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { startWebhookApp, type WebhookApp } from '../support/webhook-app.js'
import { eventually, type Receiver } from '../webhooks/receiver.js'

let webhookApp: WebhookApp
let app: TestApp
let receiver: Receiver
let owner: ContentdClient
let writer: ContentdClient

beforeAll(async () => {
  webhookApp = await startWebhookApp()
  ;({ app, receiver } = webhookApp)
  const { key, session } = await ownerWithProject(app.url, 'alice')
  owner = createClient({ baseUrl: app.url, token: session })
  writer = createClient({ baseUrl: app.url, token: key })
})

afterAll(async () => {
  owner?.close()
  writer?.close()
  await webhookApp?.close()
})

describe('webhooks through the SDK', () => {
  it('adds, lists, pings, shows deliveries and deletes a webhook', async () => {
    const demo = owner.project('@alice/demo')
    const made = await demo.createWebhook({ url: receiver.url, paths: ['stock'], ops: ['set'], description: 'restock' })
    expect(made).toEqual({ id: expect.any(String), url: receiver.url, paths: ['stock'], ops: ['set'], secret: expect.stringMatching(/^whsec_/), createdAt: expect.any(String) })
    const listed = await demo.webhooks()
    expect(listed).toEqual([expect.objectContaining({ id: made.id, url: receiver.url, paths: ['stock'], ops: ['set'], description: 'restock', enabled: true })])
    expect(JSON.stringify(listed)).not.toContain(made.secret)

    expect(await demo.pingWebhook(made.id)).toMatchObject({ delivered: true, status: 204 })
    expect(receiver.received.map(r => JSON.parse(r.body).type)).toEqual(['ping'])
    receiver.verifyAll(made.secret)

    const { version } = await writer.project('@alice/demo').set('stock.apples', 3)
    await eventually(async () => (await demo.webhookDeliveries(made.id)).length === 1, 'the delivery of the change')
    expect(await demo.webhookDeliveries(made.id)).toEqual([expect.objectContaining({ version, outcome: 'delivered', status: 204, attempt: 1 })])
    receiver.verifyAll(made.secret)

    await demo.deleteWebhook(made.id)
    expect(await demo.webhooks()).toEqual([])
    await expect(demo.deleteWebhook(made.id)).rejects.toMatchObject({ status: 404, code: 'WEBHOOK_NOT_FOUND' })
  })

  it('refuses anyone but the owner\'s session, as ContentdError', async () => {
    const refused = await writer.project('@alice/demo').webhooks().catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ContentdError)
    expect(refused).toMatchObject({ status: 403 })
    await expect(owner.project('@alice/demo').createWebhook({ url: 'not a url' })).rejects.toMatchObject({ status: 400 })
  })
})

// docs/design.md §13b: GET …/webhooks is paginated; webhooks() gathers every page.
describe('webhooks() across pages', () => {
  it('returns all 105 webhooks of a project, each once, oldest first', async () => {
    const many = await startTestApp({ MAX_WEBHOOKS_PER_PROJECT: '110' })
    const c = createClient({ baseUrl: many.url, token: (await ownerWithProject(many.url, 'pat')).session })
    try {
      const demo = c.project('@pat/demo')
      const urls: string[] = []
      for (let i = 0; i < 105; i++) urls.push((await demo.createWebhook({ url: `https://93.184.215.14/${i}` })).url)
      const listed = await demo.webhooks()
      // Each once (two made in one millisecond are ordered by id, not by making).
      expect(listed.map(w => w.url).sort()).toEqual([...urls].sort())
      expect(listed.map(w => w.createdAt)).toEqual(listed.map(w => w.createdAt).sort())
    } finally {
      c.close()
      await many.close()
    }
  }, 60_000)
})
