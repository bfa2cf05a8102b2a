// GET /api/keys sends each page as text built from per-key JSON that is kept with the
// store's remembered listed keys (server/services/keys.ts listJson, SqliteRecords.listApiKeys).
// These tests hold the kept text to what a fresh build gives: for random keys (names with
// quotes and any unicode, scopes, narrowing, expiry, ties in creation time), walked page by
// page with warm and cold caches, and after keys and projects change in between, the text
// must equal, byte for byte, JSON.stringify({keys, nextCursor}) of the page built afresh by a
// store that has remembered nothing.
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createServices, type Services } from '../../server/services/index.js'
import type { PageQuery } from '../../server/services/pagination.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import type { ApiKeyRecord } from '../../server/store/types.js'
import { NARROWABLE_OPERATIONS } from '../../shared/key-scope.js'
import { openSqliteStore } from '../support/stores.js'
import { openTempServices, type TempServices } from '../support/temp-services.js'

let temp: TempServices
let store: SqliteStore
let services: Services

beforeEach(async () => {
  temp = await openTempServices('contentd-key-json-')
  ;({ store, services } = temp)
})
afterEach(async () => { await temp.close() })

/** The services over a store opened now on the same file: nothing remembered yet. */
async function freshServices (): Promise<{ services: Services, close: () => Promise<void> }> {
  const fresh = openSqliteStore({ dataDir: temp.dataDir, contentLimitBytes: 1 << 20, cacheBytes: 1 << 20 })
  await fresh.init()
  const built = createServices({ store: fresh, sessionTtlMs: 60_000, quotas: { keysPerUser: 1000, projectsPerUser: 1000, webhooksPerProject: 20, idempotencyKeysPerUser: 100_000 }, schemaLimitBytes: 65_536, now: () => Date.now() })
  return { services: built, close: () => fresh.close() }
}

/** Every page's text, walked with `limit`. */
async function walkJson (of: Services, userId: string, limit: number): Promise<string[]> {
  const texts: string[] = []
  let query: PageQuery = { limit }
  for (;;) {
    const page = await of.keys.listJson(userId, query)
    texts.push(page.json)
    const next = (JSON.parse(page.json) as { nextCursor: string | null }).nextCursor
    if (next === null) return texts
    query = { limit, cursor: next }
  }
}

/** Every page as res.json would have sent `list`'s page, built by `of`. */
async function walkStringified (of: Services, userId: string, limit: number): Promise<string[]> {
  const texts: string[] = []
  let query: PageQuery = { limit }
  for (;;) {
    const page = await of.keys.list(userId, query)
    texts.push(JSON.stringify({ keys: page.items, nextCursor: page.nextCursor }))
    if (page.nextCursor === null) return texts
    query = { limit, cursor: page.nextCursor }
  }
}

const PROJECTS = ['p0', 'p1', 'p2', 'p3', 'p4']
const TIMES = ['2030-01-01T00:00:00.000Z', '2030-01-01T00:00:01.000Z', '2030-01-01T00:00:02.000Z']

const keyArbitrary = fc.record({
  name: fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
  permission: fc.constantFrom('read' as const, 'write' as const),
  // Scoped keys weigh 1-5 against a budget of 200: pages here are cut by `limit`; the
  // budget's cut is the contract suite's (test/store-contract/accounts.test.ts).
  projectIds: fc.option(fc.subarray(PROJECTS, { minLength: 1 }), { nil: null }),
  paths: fc.option(fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}(\.[a-z]{1,6})?$/), { minLength: 1, maxLength: 3 }), { nil: null }),
  ops: fc.option(fc.subarray([...NARROWABLE_OPERATIONS], { minLength: 1 }), { nil: null }),
  expiresAt: fc.option(fc.constant('2099-12-31T23:59:59.000Z'), { nil: null }),
  createdAt: fc.constantFrom(...TIMES)
})

let made = 0
async function seedUser (username: string): Promise<string> {
  const id = `u_${username}`
  await store.createUser({ id, username, passwordHash: 'x', createdAt: TIMES[0] as string })
  for (const slug of PROJECTS) await store.createProject({ id: `${username}-${slug}`, ownerId: id, ownerName: username, slug, name: slug, createdAt: TIMES[0] as string }, 1000)
  return id
}

async function createKeys (userId: string, username: string, keys: Array<Omit<ApiKeyRecord, 'id' | 'userId' | 'prefix' | 'keyHash'>>): Promise<void> {
  for (const k of keys) {
    made++
    await store.createApiKey({ ...k, projectIds: k.projectIds?.map(slug => `${username}-${slug}`) ?? null, id: `key_${String(made).padStart(6, '0')}`, userId, prefix: `cdk_${made}`, keyHash: `hash-${made}` })
  }
}

describe('a page of keys as text equals the page built afresh, stringified', () => {
  it('for random keys, any page size, warm and cold, and after changes between walks', async () => {
    let round = 0
    await fc.assert(fc.asyncProperty(
      fc.array(keyArbitrary, { minLength: 0, maxLength: 12 }),
      fc.array(keyArbitrary, { maxLength: 3 }),
      fc.integer({ min: 1, max: 5 }),
      fc.subarray(PROJECTS, { maxLength: 2 }),
      async (keys, added, limit, deleted) => {
        const username = `user${round++}`
        const userId = await seedUser(username)
        await createKeys(userId, username, keys)
        const fresh = await freshServices()
        try {
          const expected = await walkStringified(fresh.services, userId, limit)
          // Cold, then warm (every key remembered), then with another page size (some remembered).
          expect(await walkJson(services, userId, limit)).toEqual(expected)
          expect(await walkJson(services, userId, limit)).toEqual(expected)
          expect(await walkJson(services, userId, limit + 1)).toEqual(await walkStringified(fresh.services, userId, limit + 1))
        } finally {
          await fresh.close()
        }
        // Changes through the warm store: projects deleted, a key revoked, keys added.
        for (const slug of deleted) await store.deleteProject(`${username}-${slug}`)
        const listed = JSON.parse((await services.keys.listJson(userId, { limit: 100 })).json) as { keys: Array<{ id: string }> }
        if (listed.keys[0]) await services.keys.revoke(userId, listed.keys[0].id)
        await createKeys(userId, username, added)
        const after = await freshServices()
        try {
          expect(await walkJson(services, userId, limit)).toEqual(await walkStringified(after.services, userId, limit))
        } finally {
          await after.close()
        }
      }
    ), { numRuns: 40 })
  })

  it('the page text parses back to the page list gives', async () => {
    const userId = await seedUser('alice')
    await createKeys(userId, 'alice', [
      { name: 'quote " and \\ and \u2028', permission: 'read', projectIds: ['p1', 'p0'], paths: ['a.b'], ops: ['set'], expiresAt: null, createdAt: TIMES[1] as string },
      { name: 'plain', permission: 'write', projectIds: null, paths: null, ops: null, expiresAt: '2099-12-31T23:59:59.000Z', createdAt: TIMES[0] as string }
    ])
    const page = await services.keys.listJson(userId, { limit: 1 })
    const listed = await services.keys.list(userId, { limit: 1 })
    expect(JSON.parse(page.json)).toEqual({ keys: listed.items, nextCursor: listed.nextCursor })
    expect(listed.items.map(k => k.name)).toEqual(['plain'])
    expect(listed.nextCursor).not.toBeNull()
    const second = await services.keys.listJson(userId, { limit: 1, cursor: listed.nextCursor as string })
    expect(JSON.parse(second.json).keys[0].projects).toEqual(['@alice/p1', '@alice/p0'])
    expect(second.scopedProjects).toBe(2)
  })
})

describe('the SQLite store hands out the same listed key while nothing changed', () => {
  // What makes the kept JSON pay: if the store built new objects on every page, every page
  // would serialize again (and this test would fail before any timing showed it).
  it('the same object on a second walk; a new one after a scoped project is deleted', async () => {
    const userId = await seedUser('bob')
    await createKeys(userId, 'bob', [{ name: 'k', permission: 'read', projectIds: ['p0', 'p1'], paths: null, ops: null, expiresAt: null, createdAt: TIMES[0] as string }])
    const first = await store.listApiKeys(userId, { after: null, limit: 2 })
    const second = await store.listApiKeys(userId, { after: null, limit: 2 })
    expect(second[0]).toBe(first[0])
    await store.deleteProject('bob-p0')
    const third = await store.listApiKeys(userId, { after: null, limit: 2 })
    expect(third[0]).not.toBe(first[0])
    expect(third[0]?.projectNames).toEqual([{ ownerName: 'bob', slug: 'p1' }])
  })
})
