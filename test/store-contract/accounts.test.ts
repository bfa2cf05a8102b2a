// The store contract, accounts (AccountStorage, server/store/types.ts): users, sessions, API keys.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import type { ApiKeyRecord, Store, UserRecord } from '../../server/store/types.js'
import { storeFactories } from '../support/stores.js'
import { byId, contractStore, expectCode, keyRecord, readAllPages, unique, userRecord } from './contract.js'

describe.each(storeFactories)('store contract, accounts: $name', (factory) => {
  let store: Store
  const { newUser, newProject, allKeys, listed } = contractStore(factory, opened => { store = opened })

  it('reports its kind and answers ping', async () => {
    expect(store.kind).toBe(factory.kind)
    await expect(store.ping()).resolves.toBeUndefined()
  })


  describe('users', () => {
    it('creates a user and finds it by name and by id', async () => {
      const user = userRecord()
      await store.createUser(user)
      expect(await store.findUserByName(user.username)).toEqual(user)
      expect(await store.findUserById(user.id)).toEqual(user)
    })

    it('finds nothing for unknown names and ids', async () => {
      expect(await store.findUserByName(unique('nobody'))).toBeNull()
      expect(await store.findUserById(randomUUID())).toBeNull()
    })

    it('refuses a second user with a taken username: USERNAME_TAKEN, the first one kept', async () => {
      const first = await newUser()
      const second = userRecord(first.username)
      await expectCode(store.createUser(second), 'USERNAME_TAKEN', 'duplicate username')
      expect(await store.findUserByName(first.username)).toEqual(first)
      expect(await store.findUserById(second.id)).toBeNull()
    })
  })

  describe('sessions', () => {
    it('creates, finds and deletes a session by its token hash', async () => {
      const user = await newUser()
      const session = { tokenHash: randomUUID(), userId: user.id, createdAt: new Date().toISOString(), expiresAt: new Date(Date.now() + 60_000).toISOString() }
      await store.createSession(session)
      expect(await store.findSession(session.tokenHash)).toEqual(session)
      await store.deleteSession(session.tokenHash)
      expect(await store.findSession(session.tokenHash)).toBeNull()
      // Deleting again (logout twice) is harmless.
      await expect(store.deleteSession(session.tokenHash)).resolves.toBeUndefined()
    })

    it('finds nothing for an unknown hash', async () => {
      expect(await store.findSession(randomUUID())).toBeNull()
    })
  })

  describe('API keys', () => {
    it('creates keys, finds them by hash and lists them per user', async () => {
      const alice = await newUser()
      const bob = await newUser()
      const project = await newProject(alice)
      const scoped = keyRecord(alice.id, { permission: 'read', projectIds: [project.id], expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
      const unscoped = keyRecord(alice.id, { paths: ['votes', 'data.public'], ops: ['increment', 'decrement'] })
      const bobs = keyRecord(bob.id)
      for (const key of [scoped, unscoped, bobs]) await store.createApiKey(key)
      expect(await store.findApiKeyByHash(scoped.keyHash)).toEqual(scoped)
      expect(await store.findApiKeyByHash(unscoped.keyHash)).toEqual(unscoped)
      expect(await store.findApiKeyByHash(randomUUID())).toBeNull()
      expect(byId(await allKeys(alice.id))).toEqual(byId([listed(scoped, [project]), listed(unscoped)]))
      expect(await allKeys(bob.id)).toEqual([listed(bobs)])
      expect(await allKeys(randomUUID())).toEqual([])
    })

    it('lists keys a page at a time, oldest first, each once, with its scoped projects by name in the key\'s order', async () => {
      const alice = await newUser()
      const other = await newUser()
      const a = await newProject(alice)
      const b = await newProject(alice)
      const shared = await newProject(other)
      await store.setMember(shared.id, alice.id, 'viewer')
      const start = Date.parse('2030-01-01T00:00:00.000Z')
      // Two keys share a creation time: the id breaks the tie, and paging must not skip either.
      const times = [0, 1000, 1000, 2000, 3000, 4000, 5000].map(ms => new Date(start + ms).toISOString())
      const keys = times.map((createdAt, i) => keyRecord(alice.id, { createdAt, projectIds: i % 2 === 0 ? [shared.id, b.id, a.id] : null }))
      for (const key of [...keys].reverse()) await store.createApiKey(key)
      const expected = [...keys].sort((x, y) => x.createdAt.localeCompare(y.createdAt) || (x.id < y.id ? -1 : 1))
        .map(k => listed(k, k.projectIds === null ? null : [shared, b, a]))
      for (const pageSize of [1, 2, 3, 7, 100]) {
        expect(await allKeys(alice.id, pageSize), `pages of ${pageSize}`).toEqual(expected)
      }
      // A deleted project drops out of the names; the key keeps the rest, in order.
      await store.deleteProject(b.id)
      const [first] = await store.listApiKeys(alice.id, { after: null, limit: 1 })
      expect(first?.projectNames).toEqual([{ ownerName: other.username, slug: shared.slug }, { ownerName: alice.username, slug: a.slug }])
    })

    it('with a cost budget a page of keys may stop early, but only past the budget and never before the second key', async () => {
      const alice = await newUser()
      const projects = [await newProject(alice), await newProject(alice), await newProject(alice)]
      const start = Date.parse('2031-01-01T00:00:00.000Z')
      const scopes = [3, 3, 0, 3, 1, 3, 3, 0, 2]
      const keys = scopes.map((n, i) => keyRecord(alice.id, { createdAt: new Date(start + i * 1000).toISOString(), projectIds: n === 0 ? null : projects.slice(0, n).map(p => p.id) }))
      for (const key of keys) await store.createApiKey(key)
      const ids = keys.map(k => k.id)
      for (const budget of [0, 1, 4, 5, 6, 7, 100]) {
        for (const limit of [1, 2, 4, 10]) {
          const page = await store.listApiKeys(alice.id, { after: null, limit, costBudget: budget })
          const m = page.length
          expect(page.map(k => k.id), `budget ${budget}, limit ${limit}`).toEqual(ids.slice(0, m))
          if (m < Math.min(limit, ids.length)) {
            expect(m, `budget ${budget}, limit ${limit}`).toBeGreaterThanOrEqual(2)
            expect(scopes.slice(0, m).reduce((a, b) => a + b, 0), `budget ${budget}, limit ${limit}`).toBeGreaterThan(budget)
          }
        }
      }
    })

    it('refuses a key past the quota with QUOTA_EXCEEDED, adding nothing; a revoked key frees its place', async () => {
      const alice = await newUser()
      const bob = await newUser()
      const keys = [keyRecord(alice.id), keyRecord(alice.id), keyRecord(alice.id)]
      await store.createApiKey(keys[0] as ApiKeyRecord, 2)
      await store.createApiKey(keys[1] as ApiKeyRecord, 2)
      await expectCode(store.createApiKey(keys[2] as ApiKeyRecord, 2), 'QUOTA_EXCEEDED', 'third key with a quota of 2')
      expect(await store.findApiKeyByHash((keys[2] as ApiKeyRecord).keyHash)).toBeNull()
      expect(await allKeys(alice.id)).toHaveLength(2)
      // Per user: bob is not affected.
      await store.createApiKey(keyRecord(bob.id), 2)
      expect(await store.deleteApiKey(alice.id, (keys[0] as ApiKeyRecord).id)).toBe(true)
      await store.createApiKey(keys[2] as ApiKeyRecord, 2)
      expect(byId(await allKeys(alice.id))).toEqual(byId([listed(keys[1] as ApiKeyRecord), listed(keys[2] as ApiKeyRecord)]))
    })

    it('20 concurrent creates against a quota of 5: exactly 5 succeed, the rest are QUOTA_EXCEEDED', async () => {
      const alice = await newUser()
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => store.createApiKey(keyRecord(alice.id), 5)))
      expect(outcomes.filter(o => o.status === 'fulfilled')).toHaveLength(5)
      for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as ContentdError).code).toBe('QUOTA_EXCEEDED')
      expect(await allKeys(alice.id)).toHaveLength(5)
    })

    it('deletes only the owner\'s own key', async () => {
      const alice = await newUser()
      const bob = await newUser()
      const key = keyRecord(alice.id)
      await store.createApiKey(key)
      expect(await store.deleteApiKey(bob.id, key.id), 'someone else deleting it').toBe(false)
      expect(await store.findApiKeyByHash(key.keyHash)).toEqual(key)
      expect(await store.deleteApiKey(alice.id, key.id)).toBe(true)
      expect(await store.findApiKeyByHash(key.keyHash)).toBeNull()
      expect(await allKeys(alice.id)).toEqual([])
      expect(await store.deleteApiKey(alice.id, key.id), 'deleting twice').toBe(false)
    })
  })


  describe('users', () => {
    it('lists users a page at a time by username, each once', async () => {
      const made: UserRecord[] = []
      for (let i = 0; i < 5; i++) made.push(await newUser())
      const all = await readAllPages<UserRecord, string>(page => store.listUsers(page), u => u.username, 3)
      const names = all.map(u => u.username)
      expect(names).toEqual([...names].sort())
      expect(new Set(names).size).toBe(names.length)
      for (const user of made) expect(all).toContainEqual(user)
    })
  })

})
