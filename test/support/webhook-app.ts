// An app whose webhooks are delivered: the dispatcher polling every 20 ms, and a receiver on
// loopback (allowed by WEBHOOK_ALLOW_PRIVATE, docs/webhooks.md "Where webhooks may point").
import { createLogger } from '../../server/logger.js'
import { createWebhooks, type Webhooks } from '../../server/webhooks/index.js'
import { startReceiver, type Receiver } from '../webhooks/receiver.js'
import { startTestApp, type TestApp } from './temp-app.js'

export interface WebhookApp {
  app: TestApp
  webhooks: Webhooks
  receiver: Receiver
  close (): Promise<void>
}

export async function startWebhookApp (): Promise<WebhookApp> {
  const app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' })
  const webhooks = createWebhooks({ config: app.config, store: app.store, logger: createLogger('silent'), pollIntervalMs: 20 })
  webhooks.dispatcher.start()
  const receiver = await startReceiver()
  return {
    app,
    webhooks,
    receiver,
    async close () {
      await webhooks.dispatcher.stop()
      await receiver.stop()
      await app.close()
    }
  }
}
