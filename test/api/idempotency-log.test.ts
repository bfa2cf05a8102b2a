// A retry after IDEMPOTENCY_TTL (docs/design.md §19): the key's stored answer has expired,
// but the change log remembers the key, so the retry answers as the first answer did —
// 200, Idempotent-Replayed, the change's version as ETag, the same body — and applies nothing.
// The same key with another request is still 422; another caller's same key string is another request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { expectErrorShape } from './scenario.js'

const TTL_MS = 1000
const expire = () => new Promise(resolve => setTimeout(resolve, TTL_MS + 200))

describe('Idempotency-Key after IDEMPOTENCY_TTL: replayed from the change log', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp({ IDEMPOTENCY_TTL: '1s' }) })
  afterAll(async () => { await app.close() })

  it('a path operation, a batch and a revert answer as at first and apply nothing', async () => {
    const { session, key, path } = await ownerWithProject(app.url, 'otto')
    const write = (suffix: string, body: unknown, idempotencyKey: string, token = session) =>
      call(app.url, 'POST', `${path}/content${suffix}`, { token, body, headers: { 'idempotency-key': idempotencyKey } })
    const content = async () => (await call(app.url, 'GET', `${path}/content`, { token: session })).body

    const first = await write('/increment', { path: 'n', value: 1 }, 'k-inc')
    const batch = await write('/batch', { operations: [{ op: 'push', path: 'l', value: 'x' }] }, 'k-batch')
    const revert = await write('/revert', { version: 1 }, 'k-revert')
    expect([first.status, batch.status, revert.status]).toEqual([200, 200, 200])
    await write('/increment', { path: 'n', value: 10 }, 'k-later')
    const before = await content()
    expect(before).toEqual({ n: 11 })

    await expire()
    for (const [suffix, body, k, original] of [
      ['/increment', { path: 'n', value: 1 }, 'k-inc', first],
      ['/batch', { operations: [{ op: 'push', path: 'l', value: 'x' }] }, 'k-batch', batch],
      ['/revert', { version: 1 }, 'k-revert', revert]
    ] as const) {
      const retry = await write(suffix, body, k)
      expect(retry.status, retry.text).toBe(200)
      expect(retry.headers.get('idempotent-replayed')).toBe('true')
      expect(retry.headers.get('etag')).toBe(original.headers.get('etag'))
      expect(retry.body).toEqual(original.body)
    }
    expect(await content()).toEqual(before)

    // Answered again from the stored answer (kept anew), and still nothing applied.
    const again = await write('/increment', { path: 'n', value: 1 }, 'k-inc')
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('etag')).toBe('"1"')

    // The same key with another request: 422, after the TTL too.
    await expire()
    const reused = await write('/increment', { path: 'n', value: 2 }, 'k-inc')
    expect(reused.status).toBe(422)
    expectErrorShape(reused, 'IDEMPOTENCY_KEY_REUSED')
    // Another caller (the user's API key) with the same key string: a request of its own.
    const other = await write('/increment', { path: 'n', value: 1 }, 'k-inc', key)
    expect(other.status).toBe(200)
    expect(other.headers.get('idempotent-replayed')).toBeNull()
    expect(await content()).toEqual({ n: 12 })
  })

  it('the change log entry never shows the key', async () => {
    const { session, path } = await ownerWithProject(app.url, 'pia')
    await call(app.url, 'POST', `${path}/content/set`, { token: session, body: { path: 'a', value: 1 }, headers: { 'idempotency-key': 'secret-idem-key' } })
    const changes = await call(app.url, 'GET', `${path}/content/changes`, { token: session })
    expect(changes.status).toBe(200)
    expect(changes.text).toContain('"op":"set"')
    expect(changes.text).not.toContain('secret-idem-key')
  })
})
