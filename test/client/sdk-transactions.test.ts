// The SDK's batch, patch and idempotencyKey (docs/design.md §10) against a real server: atomic
// batches and patches with the failing operation's index, and writes with a key retried after
// a lost answer (a fetch that delivers the request but drops the response) applying once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, ContentdError } from '../../shared/client/index.js'
import type { FetchLike } from '../../shared/client/http.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
let key: string
let path: string
beforeAll(async () => {
  app = await startTestApp()
  ;({ key, path } = await ownerWithProject(app.url, 'sdk'))
})
afterAll(async () => { await app.close() })

const content = async () => (await call(app.url, 'GET', `${path}/content`, { token: key })).body

describe('SDK transactions', () => {
  it('batch and patch: atomic, one version each; failures name the operation', async () => {
    const demo = createClient({ baseUrl: app.url, token: key }).project('@sdk/demo')
    await demo.update({ stock: 2, price: 10, log: [] })
    const batched = await demo.batch([{ op: 'test', path: 'price', value: 10 }, { op: 'decrement', path: 'stock' }, { op: 'push', path: 'log', value: 'sold' }])
    expect(batched).toEqual({ message: 'Batch applied successfully', version: 2, replayed: false })
    const patched = await demo.patch([{ op: 'replace', path: '/price', value: 12 }, { op: 'add', path: '/log/-', value: 'repriced' }])
    expect(patched).toEqual({ message: 'Patch applied successfully', version: 3, replayed: false })
    const failure = await demo.batch([{ op: 'decrement', path: 'stock' }, { op: 'test', path: 'price', value: 10 }]).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(ContentdError)
    expect([(failure as ContentdError).status, (failure as ContentdError).code, (failure as ContentdError).operation]).toEqual([409, 'TEST_FAILED', 1])
    expect(await content()).toEqual({ stock: 1, price: 12, log: ['sold', 'repriced'] })
  })

  it('retries a write with an idempotencyKey after a lost answer; it applies once', async () => {
    let calls = 0
    // Delivers the request, then loses the first answer, as a dropped connection would.
    const lossy: FetchLike = async (input, init) => {
      calls += 1
      const response = await fetch(input, init)
      if (calls === 1) { await response.text(); throw new TypeError('fetch failed: connection reset') }
      return response
    }
    const demo = createClient({ baseUrl: app.url, token: key, fetch: lossy }).project('@sdk/demo')
    const result = await demo.increment('orders', 1, { idempotencyKey: 'order-1' })
    expect(result).toEqual({ message: 'Value incremented successfully', version: 4, replayed: true })
    expect(calls).toBe(2)
    expect((await content()).orders).toBe(1)
  })

  it('does not retry a write without a key (it could apply twice)', async () => {
    let calls = 0
    const failing: FetchLike = async () => { calls += 1; throw new TypeError('fetch failed') }
    const demo = createClient({ baseUrl: app.url, token: key, fetch: failing }).project('@sdk/demo')
    await expect(demo.increment('orders')).rejects.toMatchObject({ code: 'NETWORK_ERROR' })
    expect(calls).toBe(1)
  })
})
