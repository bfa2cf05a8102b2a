// The store contract, webhooks (WebhookStore, server/store/webhook-types.ts; the cases are
// test/store/webhook-contract.ts).
import { describe } from 'vitest'
import { webhookContract } from '../store/webhook-contract.js'
import { storeFactories } from '../support/stores.js'
import { contractStore } from './contract.js'

describe.each(storeFactories)('store contract, webhooks: $name', (factory) => {
  const suite = contractStore(factory)
  webhookContract({ store: () => suite.store, newProject: () => suite.newProject() })
})
