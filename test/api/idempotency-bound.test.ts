// Idempotency-Key records are bounded per user (docs/design.md §13b,
// MAX_IDEMPOTENCY_KEYS_PER_USER, 2 here): all of a user's sessions and keys share the bound;
// past it a new keyed write is 429 RATE_LIMITED with Retry-After and is not applied, while a
// retry of a key already stored still replays and unkeyed writes go on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, createProject, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { expectErrorShape } from './scenario.js'

const increment = (base: string, token: string, project: string, idempotencyKey: string | null) => call(base, 'POST', `${project}/content/increment`, {
  token, body: { path: 'n', value: 1 }, ...(idempotencyKey !== null ? { headers: { 'idempotency-key': idempotencyKey } } : {})
})

describe('Idempotency-Key records per user (MAX_IDEMPOTENCY_KEYS_PER_USER)', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp({ MAX_IDEMPOTENCY_KEYS_PER_USER: '2', IDEMPOTENCY_TTL: '1h' }) })
  afterAll(async () => { await app.close() })

  it('429 with Retry-After past the bound, nothing applied; stored keys replay; other users and unkeyed writes go on', async () => {
    const { session, key, path } = await ownerWithProject(app.url, 'ivy')
    await createProject(app.url, session, 'second')
    const second = '/api/@ivy/second'
    const content = async (project: string) => (await call(app.url, 'GET', `${project}/content`, { token: session })).body

    const first = await increment(app.url, session, path, 'a')
    expect(first.status).toBe(200)
    // The user's API key, on another project, counts against the same user.
    expect((await increment(app.url, key, second, 'b')).status).toBe(200)

    for (const [token, project] of [[session, path], [key, second], [key, path]] as const) {
      const refused = await increment(app.url, token, project, 'c')
      expect(refused.status, refused.text).toBe(429)
      expectErrorShape(refused, 'RATE_LIMITED')
      const retryAfter = Number(refused.headers.get('retry-after'))
      // The oldest record stops counting in about an hour (IDEMPOTENCY_TTL, rounded up to the
      // end of its 150 s usage bucket), not sooner.
      expect(retryAfter).toBeGreaterThan(3500)
      expect(retryAfter).toBeLessThanOrEqual(3600 + 150)
    }
    expect(await content(path)).toEqual({ n: 1 })
    expect(await content(second)).toEqual({ n: 1 })

    // A retry of a stored key still replays, and changes nothing.
    const replay = await increment(app.url, session, path, 'a')
    expect(replay.status).toBe(200)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.text).toBe(first.text)
    expect(await content(path)).toEqual({ n: 1 })

    // Writes without a key are not held; nor is another user.
    expect((await increment(app.url, session, path, null)).status).toBe(200)
    const other = await ownerWithProject(app.url, 'jay')
    expect((await increment(app.url, other.session, other.path, 'c')).status).toBe(200)
  })
})

describe('Idempotency-Key records per user: the slot comes back', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp({ MAX_IDEMPOTENCY_KEYS_PER_USER: '1', IDEMPOTENCY_TTL: '2s' }) })
  afterAll(async () => { await app.close() })

  it('after Retry-After a new key is accepted', async () => {
    const { session, path } = await ownerWithProject(app.url, 'kim')
    expect((await increment(app.url, session, path, 'a')).status).toBe(200)
    const refused = await increment(app.url, session, path, 'b')
    expect(refused.status).toBe(429)
    const retryAfter = Number(refused.headers.get('retry-after'))
    // 2 s, rounded up to the end of its 1 s usage bucket.
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(3)
    await new Promise(resolve => setTimeout(resolve, retryAfter * 1000 + 100))
    expect((await increment(app.url, session, path, 'b')).status).toBe(200)
    expect((await call(app.url, 'GET', `${path}/content`, { token: session })).body).toEqual({ n: 2 })
  })
})
