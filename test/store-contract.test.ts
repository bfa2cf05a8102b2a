// The ONE store conformance suite: the same tests, through the Store interface only, against
// every available store (test/support/stores.ts). A store that passes behaves like the
// others for the HTTP layer, the realtime layer and the operation semantics.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseBatch } from '../shared/batch-request.js'
import { ContentdError, OperationError, type ErrorCode } from '../shared/errors.js'
import { parsePatch } from '../shared/json-patch.js'
import type { JsonObject } from '../shared/json.js'
import { applyOperation, type Operation } from '../shared/operations.js'
import { applyContentOperation } from '../shared/compound.js'
import { operationOfChange, type ChangeEntry } from '../shared/events.js'
import { CommitCounter } from '../server/store/sqlite/lookup-cache.js'
import { SqliteStore } from '../server/store/sqlite/sqlite-store.js'
import type {
  ApiKeyRecord, ApplyOptions, CommittedChange, KeyPosition, ListedApiKey, MemberRecord, PageRequest, ProjectRecord, ProjectRole, SchemaRecord, Store,
  StoreOperation, UserRecord
} from '../server/store/types.js'
import { webhookContract } from './store/webhook-contract.js'
import { isSameJson, OPERATION_CASES, toOperation, type OperationCase } from './cases/operation-cases.js'
import { CONTRACT_CONTENT_LIMIT, DEFAULT_HISTORY, storeFactories, type StoreUnderTest } from './support/stores.js'

let serial = 0
/** A name no other test in this run uses: tests share one store per factory. */
function unique (prefix: string): string {
  serial += 1
  return `${prefix}-${serial}-${randomUUID().slice(0, 8)}`
}

function userRecord (username = unique('u')): UserRecord {
  return { id: randomUUID(), username, passwordHash: `hash-of-${username}`, createdAt: new Date().toISOString() }
}

function keyRecord (userId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const id = randomUUID()
  return {
    id,
    userId,
    name: unique('key'),
    prefix: 'cdk_' + id.slice(0, 6),
    keyHash: randomUUID() + randomUUID(),
    permission: 'write',
    projectIds: null,
    paths: null,
    ops: null,
    expiresAt: null,
    createdAt: new Date().toISOString(),
    ...overrides
  }
}

/** Rejects with a ContentdError of exactly this code (the message names the case on failure). */
async function expectCode (promise: Promise<unknown>, code: ErrorCode, what = ''): Promise<void> {
  let outcome: unknown
  try {
    outcome = { resolved: await promise }
  } catch (error) {
    outcome = error
  }
  expect(outcome, `${what}: expected a ContentdError ${code}`).toBeInstanceOf(ContentdError)
  expect((outcome as ContentdError).code, what).toBe(code)
}

/** The actor of this suite's writes (a user's, as over HTTP with a session). */
const AS_TEST: ApplyOptions = { actor: { type: 'user', name: '@contract-suite' } }

/**
 * Every item of a store list, read `pageSize` at a time as the services do (each page after
 * the last item of the one before); checks no page is longer than asked for.
 */
async function readAllPages<T, P> (read: (page: PageRequest<P>) => Promise<T[]>, positionOf: (item: T) => P, pageSize = 2): Promise<T[]> {
  const all: T[] = []
  let after: P | null = null
  for (let pages = 0; pages < 1000; pages++) {
    const page = await read({ after, limit: pageSize })
    expect(page.length).toBeLessThanOrEqual(pageSize)
    all.push(...page)
    if (page.length < pageSize) return all
    after = positionOf(page[page.length - 1] as T)
  }
  throw new Error('more than 1000 pages: the position does not advance')
}

const keyPosition = (k: ApiKeyRecord): KeyPosition => ({ createdAt: k.createdAt, id: k.id })
const projectPosition = (p: ProjectRecord) => ({ ownerName: p.ownerName, slug: p.slug })
const FIRST = { after: null, limit: 100 }

const byId = <T extends { id: string }>(items: T[]): T[] => [...items].sort((a, b) => a.id.localeCompare(b.id))

const inc = (path: string, value = 1): Operation => ({ op: 'increment', path: path.split('.'), value })
const push = (path: string, value: JsonObject[string]): Operation => ({ op: 'push', path: path.split('.'), value })
const set = (path: string, value: JsonObject[string]): Operation => ({ op: 'set', path: path.split('.'), value })

/** Cases the request layer already rejects (bad path, body or amount) never reach a store. */
function rejectedBeforeStore (c: OperationCase): boolean {
  try {
    toOperation(c)
    return false
  } catch {
    return true
  }
}
const STORE_CASES = OPERATION_CASES.filter(c => !rejectedBeforeStore(c))
const REQUEST_CASES = OPERATION_CASES.filter(rejectedBeforeStore)

describe('operation cases that never reach a store', () => {
  it.each(REQUEST_CASES)('$name: rejected while building the operation, as the table expects', (c) => {
    expect('code' in c.expect, 'a case the request layer refuses must expect an error').toBe(true)
    expect(() => toOperation(c)).toThrow(ContentdError)
    try { toOperation(c) } catch (error) { expect((error as ContentdError).code).toBe((c.expect as { code: ErrorCode }).code) }
  })
})

describe.each(storeFactories)('store contract: $name', (factory) => {
  let sut: StoreUnderTest
  let store: Store
  /** Every change every test committed, in the order the store reported them. */
  const committed: CommittedChange[] = []
  const changesOf = (projectId: string): CommittedChange[] => committed.filter(c => c.project.id === projectId)

  beforeAll(async () => {
    sut = await factory.create()
    store = sut.store
    store.onCommit(change => committed.push(change))
  })
  afterAll(async () => { await sut?.cleanup() })

  /** Every write of this suite, as a test user unless a test names another actor. */
  const apply = (project: ProjectRecord, operation: StoreOperation, options: Partial<ApplyOptions> = {}) =>
    store.applyOperation(project, operation, { ...AS_TEST, ...options })

  async function newUser (): Promise<UserRecord> {
    const user = userRecord()
    await store.createUser(user)
    return user
  }

  async function newProject (owner?: UserRecord): Promise<ProjectRecord> {
    const user = owner ?? await newUser()
    return store.createProject({ id: randomUUID(), ownerId: user.id, ownerName: user.username, slug: unique('p'), name: 'A project', createdAt: new Date().toISOString() })
  }

  const allKeys = (userId: string, pageSize?: number): Promise<ListedApiKey[]> =>
    readAllPages(page => store.listApiKeys(userId, page), keyPosition, pageSize)
  const allProjects = (userId: string, scope: string[] | null = null, pageSize?: number): Promise<Array<ProjectRecord & { role: ProjectRole }>> =>
    readAllPages(page => store.listProjectsForUser(userId, page, scope), projectPosition, pageSize)
  const allMembers = (projectId: string, pageSize?: number): Promise<MemberRecord[]> =>
    readAllPages<MemberRecord, string>(page => store.listMembers(projectId, page), m => m.username, pageSize)
  /** A key as listed: with the names of its scoped projects. */
  const listed = (key: ApiKeyRecord, projects: ProjectRecord[] | null = null): ListedApiKey =>
    ({ ...key, projectNames: projects === null ? null : projects.map(p => ({ ownerName: p.ownerName, slug: p.slug })) })

  async function content (project: ProjectRecord): Promise<{ version: number, content: JsonObject }> {
    const snapshot = await store.readContent(project.id)
    expect(snapshot, `content of ${project.slug}`).not.toBeNull()
    return { version: snapshot!.version, content: structuredClone(snapshot!.content) }
  }

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

  describe('projects', () => {
    it('creates a project at version 0 with content {} and finds it by owner and slug', async () => {
      const owner = await newUser()
      const input = { id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: unique('p'), name: 'Demo', createdAt: new Date().toISOString() }
      const created = await store.createProject(input)
      expect(created).toEqual({ ...input, version: 0 })
      expect(await store.findProject(owner.username, input.slug)).toEqual(created)
      expect(await store.readContent(created.id)).toMatchObject({ version: 0, content: {} })
      expect(await store.findProject(owner.username, unique('missing'))).toBeNull()
      expect(await store.findProject(unique('nobody'), input.slug)).toBeNull()
    })

    it('refuses a second project with the same slug for the same owner, but two owners may share a slug', async () => {
      const alice = await newUser()
      const bob = await newUser()
      const first = await newProject(alice)
      const again = { id: randomUUID(), ownerId: alice.id, ownerName: alice.username, slug: first.slug, name: 'Other', createdAt: new Date().toISOString() }
      await expectCode(store.createProject(again), 'PROJECT_EXISTS', 'same owner, same slug')
      expect(await store.findProject(alice.username, first.slug)).toEqual(first)
      const bobs = await store.createProject({ ...again, id: randomUUID(), ownerId: bob.id, ownerName: bob.username })
      expect(await store.findProject(bob.username, first.slug)).toEqual(bobs)
      expect(await store.findProject(alice.username, first.slug)).toEqual(first)
    })

    it('finds projects by ids in the order asked for, skipping unknown ones, with their current versions', async () => {
      const a = await newProject()
      const b = await newProject()
      await apply(b, inc('n'))
      expect(await store.findProjectsByIds([b.id, randomUUID(), a.id])).toEqual([{ ...b, version: 1 }, a])
      expect(await store.findProjectsByIds([a.id, b.id])).toEqual([a, { ...b, version: 1 }])
      expect(await store.findProjectsByIds([])).toEqual([])
    })

    it('refuses a project past the quota with QUOTA_EXCEEDED; memberships do not count, a deleted project frees its place', async () => {
      const owner = await newUser()
      const other = await newUser()
      const shared = await newProject(other)
      await store.setMember(shared.id, owner.id, 'editor')
      const make = (slug: string) => store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug, name: slug, createdAt: new Date().toISOString() }, 2)
      const first = await make('one')
      await make('two')
      await expectCode(make('three'), 'QUOTA_EXCEEDED', 'third project with a quota of 2')
      expect(await store.findProject(owner.username, 'three')).toBeNull()
      await store.deleteProject(first.id)
      await make('three')
      expect((await allProjects(owner.id)).map(p => p.slug).sort()).toEqual([shared.slug, 'three', 'two'].sort())
    })

    it('20 concurrent project creates against a quota of 5: exactly 5 succeed', async () => {
      const owner = await newUser()
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) =>
        store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: `race-${i}`, name: 'r', createdAt: new Date().toISOString() }, 5)))
      expect(outcomes.filter(o => o.status === 'fulfilled')).toHaveLength(5)
      for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as ContentdError).code).toBe('QUOTA_EXCEEDED')
      expect(await allProjects(owner.id)).toHaveLength(5)
    })

    it('lists the projects a user owns or is a member of, with the role in each', async () => {
      const me = await newUser()
      const other = await newUser()
      const mine = await newProject(me)
      const viewed = await newProject(other)
      const edited = await newProject(other)
      const unrelated = await newProject(other)
      await store.setMember(viewed.id, me.id, 'viewer')
      await store.setMember(edited.id, me.id, 'editor')
      const projects = await allProjects(me.id)
      expect(byId(projects)).toEqual(byId([
        { ...mine, role: 'owner' },
        { ...viewed, role: 'viewer' },
        { ...edited, role: 'editor' }
      ]))
      expect(projects.map(p => p.id)).not.toContain(unrelated.id)
      expect(await allProjects((await newUser()).id)).toEqual([])
    })

    it('lists projects a page at a time by owner then slug, owned and shared interleaved, each once', async () => {
      // Names chosen so that owned and shared projects interleave in the order.
      const tag = unique('o').replace(/[^a-z0-9]/g, '')
      const names = ['a', 'm', 'z'].map(letter => `${letter}${tag}`)
      const users: UserRecord[] = []
      for (const username of names) { const user = userRecord(username); await store.createUser(user); users.push(user) }
      const [ann, me, zed] = users as [UserRecord, UserRecord, UserRecord]
      const make = (owner: UserRecord, slug: string) => store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug, name: slug, createdAt: new Date().toISOString() })
      const expected: Array<ProjectRecord & { role: ProjectRole }> = []
      for (const slug of ['b', 'a-1', 'c']) expected.push({ ...(await make(me, slug)), role: 'owner' })
      for (const [owner, slug, role] of [[ann, 'x', 'viewer'], [ann, 'a', 'editor'], [zed, 'q', 'viewer'], [zed, 'b', 'editor']] as const) {
        const project = await make(owner, slug)
        await store.setMember(project.id, me.id, role)
        expected.push({ ...project, role })
      }
      await make(ann, 'not-mine')
      expected.sort((x, y) => (x.ownerName < y.ownerName ? -1 : x.ownerName > y.ownerName ? 1 : x.slug < y.slug ? -1 : x.slug > y.slug ? 1 : 0))
      for (const pageSize of [1, 2, 3, 7, 100]) {
        expect(await allProjects(me.id, null, pageSize), `pages of ${pageSize}`).toEqual(expected)
      }
      // With a key's scope: only those, and only while the user can still reach them.
      const scope = [expected[5]!.id, expected[0]!.id, expected[3]!.id, randomUUID()]
      const scoped = expected.filter(p => scope.includes(p.id))
      for (const pageSize of [1, 2, 100]) {
        expect(await allProjects(me.id, scope, pageSize), `scoped, pages of ${pageSize}`).toEqual(scoped)
      }
      await store.removeMember(expected[0]!.id, me.id)
      expect(await allProjects(me.id, scope)).toEqual(scoped.slice(1))
      expect(await store.listProjectsForUser(me.id, { after: null, limit: 3 }, null)).toHaveLength(3)
    })

    it('deleting a project removes it, its content and its members; the slug can be used again from scratch', async () => {
      const owner = await newUser()
      const member = await newUser()
      const project = await newProject(owner)
      await store.setMember(project.id, member.id, 'editor')
      await apply(project, set('secret', 'old data'))
      await store.deleteProject(project.id)
      expect(await store.findProject(owner.username, project.slug)).toBeNull()
      expect(await store.findProjectsByIds([project.id])).toEqual([])
      expect(await store.readContent(project.id)).toBeNull()
      expect(await store.findMemberRole(project.id, member.id)).toBeNull()
      expect(await store.listMembers(project.id, FIRST)).toEqual([])
      expect(await allProjects(member.id)).toEqual([])
      expect(await allProjects(owner.id)).toEqual([])
      const reborn = await store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: project.slug, name: 'Again', createdAt: new Date().toISOString() })
      expect(await store.readContent(reborn.id)).toMatchObject({ version: 0, content: {} })
      expect(await store.listMembers(reborn.id, FIRST)).toEqual([])
    })
  })

  describe('members', () => {
    it('sets, updates, finds, lists and removes members', async () => {
      const project = await newProject()
      const ann = await newUser()
      const ben = await newUser()
      await store.setMember(project.id, ann.id, 'viewer')
      expect(await store.findMemberRole(project.id, ann.id)).toBe('viewer')
      await store.setMember(project.id, ann.id, 'editor')
      expect(await store.findMemberRole(project.id, ann.id), 'role updated in place').toBe('editor')
      await store.setMember(project.id, ben.id, 'viewer')
      const members = await allMembers(project.id)
      expect([...members].sort((a, b) => a.userId.localeCompare(b.userId))).toEqual([
        { userId: ann.id, username: ann.username, role: 'editor' },
        { userId: ben.id, username: ben.username, role: 'viewer' }
      ].sort((a, b) => a.userId.localeCompare(b.userId)))
      expect(await store.removeMember(project.id, ann.id)).toBe(true)
      expect(await store.removeMember(project.id, ann.id), 'removing twice').toBe(false)
      expect(await store.findMemberRole(project.id, ann.id)).toBeNull()
      expect(await allMembers(project.id)).toEqual([{ userId: ben.id, username: ben.username, role: 'viewer' }])
      expect(await store.findMemberRole(project.id, (await newUser()).id)).toBeNull()
    })

    it('lists members a page at a time by username, each once', async () => {
      const project = await newProject()
      const users: UserRecord[] = []
      for (let i = 0; i < 7; i++) users.push(await newUser())
      for (const [i, user] of users.entries()) await store.setMember(project.id, user.id, i % 2 === 0 ? 'viewer' : 'editor')
      const expected = users.map((u, i) => ({ userId: u.id, username: u.username, role: i % 2 === 0 ? 'viewer' : 'editor' }))
        .sort((a, b) => (a.username < b.username ? -1 : 1))
      for (const pageSize of [1, 3, 100]) expect(await allMembers(project.id, pageSize), `pages of ${pageSize}`).toEqual(expected)
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

  describe('operation cases (test/cases/operation-cases.ts)', () => {
    it.each(STORE_CASES)('$name', async (c) => {
      const project = await newProject()
      // The starting content goes in as an update, so it is version 1 on every store.
      await apply(project, { op: 'update', value: structuredClone(c.before) })
      const operation = toOperation(c)
      const notifiedBefore = changesOf(project.id).length
      if ('content' in c.expect) {
        expect(await apply(project, operation)).toEqual({ version: 2 })
        const after = await content(project)
        expect(after.content).toEqual(c.expect.content)
        expect(isSameJson(after.content, c.expect.content), 'same JSON types and own keys').toBe(true)
        expect(after.version).toBe(2)
        expect(changesOf(project.id).length - notifiedBefore, 'one notification').toBe(1)
      } else {
        await expectCode(apply(project, operation), c.expect.code, c.name)
        const after = await content(project)
        expect(after.content, 'a failed operation changes nothing').toEqual(c.before)
        expect(isSameJson(after.content, c.before)).toBe(true)
        expect(after.version).toBe(1)
        expect(changesOf(project.id).length - notifiedBefore, 'no notification').toBe(0)
      }
    })
  })

  describe('versions and conditions', () => {
    it('adds exactly 1 to the version per successful operation and nothing per failed one', async () => {
      const project = await newProject()
      expect(await apply(project, set('a', 'text'))).toEqual({ version: 1 })
      expect(await apply(project, inc('n'))).toEqual({ version: 2 })
      await expectCode(apply(project, inc('a')), 'NOT_A_NUMBER', 'increment a string')
      await expectCode(apply(project, push('a', 1)), 'NOT_AN_ARRAY', 'push onto a string')
      expect(await content(project)).toEqual({ version: 2, content: { a: 'text', n: 1 } })
      expect(await apply(project, { op: 'delete', path: ['missing'] }), 'a delete of nothing still commits').toEqual({ version: 3 })
      expect((await store.findProject(project.ownerName, project.slug))?.version).toBe(3)
    })

    it('honours ifMatch: "*" and the current version pass, a stale one is PRECONDITION_FAILED and changes nothing', async () => {
      const project = await newProject()
      expect(await apply(project, inc('n'), { ifMatch: '*' })).toEqual({ version: 1 })
      expect(await apply(project, inc('n'), { ifMatch: [1] })).toEqual({ version: 2 })
      expect(await apply(project, inc('n'), { ifMatch: [7, 2] }), 'one of several listed').toEqual({ version: 3 })
      await expectCode(apply(project, inc('n'), { ifMatch: [2] }), 'PRECONDITION_FAILED', 'stale version')
      await expectCode(apply(project, inc('n'), { ifMatch: [] }), 'PRECONDITION_FAILED', 'no version listed')
      expect(await content(project)).toEqual({ version: 3, content: { n: 3 } })
    })

    it('honours ifNoneMatch (docs/design.md §13b): a matching version or "*" is PRECONDITION_FAILED after ifMatch, and changes nothing', async () => {
      const project = await newProject()
      expect(await apply(project, inc('n'), { ifNoneMatch: [5] }), 'another version').toEqual({ version: 1 })
      await expectCode(apply(project, inc('n'), { ifNoneMatch: [7, 1] }), 'PRECONDITION_FAILED', 'the current version listed')
      await expectCode(apply(project, inc('n'), { ifNoneMatch: '*' }), 'PRECONDITION_FAILED', '* (the content exists)')
      await expectCode(apply(project, { op: 'update', value: {} }, { ifNoneMatch: '*' }), 'PRECONDITION_FAILED', 'an update')
      await expectCode(apply(project, { op: 'revert', version: 0 }, { ifNoneMatch: [1] }), 'PRECONDITION_FAILED', 'a revert')
      await expectCode(apply(project, { op: 'batch', operations: parseBatch({ operations: [{ op: 'increment', path: 'n' }] }, 100) }, { ifNoneMatch: [1] }), 'PRECONDITION_FAILED', 'a batch')
      await expectCode(apply(project, inc('n'), { ifMatch: [1], ifNoneMatch: [1] }), 'PRECONDITION_FAILED', 'ifMatch passes, ifNoneMatch matches')
      await expectCode(apply(project, push('n', 1), { ifNoneMatch: [1] }), 'PRECONDITION_FAILED', 'before the operation\'s own errors')
      expect(await content(project)).toEqual({ version: 1, content: { n: 1 } })
    })

    it('checks ifMatch before the operation itself: a stale condition wins over an operation error', async () => {
      const project = await newProject()
      await apply(project, set('a', 'text'))
      await expectCode(apply(project, inc('a'), { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale + wrong type')
    })

    it('answers PROJECT_NOT_FOUND once the project is deleted', async () => {
      const project = await newProject()
      await apply(project, inc('n'))
      await store.deleteProject(project.id)
      await expectCode(apply(project, inc('n')), 'PROJECT_NOT_FOUND', 'after delete')
      await expectCode(apply(project, set('x', 1), { ifMatch: '*' }), 'PROJECT_NOT_FOUND', 'after delete, with ifMatch')
      expect(await store.readContent(project.id)).toBeNull()
    })

    it('gives out snapshots that later operations do not change', async () => {
      const project = await newProject()
      await apply(project, set('list', [1]))
      const before = await store.readContent(project.id)
      await apply(project, push('list', 2))
      await apply(project, set('other', true))
      expect(before?.version).toBe(1)
      expect(before?.content).toEqual({ list: [1] })
      if (before?.json !== undefined) expect(JSON.parse(before.json)).toEqual({ list: [1] })
      expect(await content(project)).toEqual({ version: 3, content: { list: [1, 2], other: true } })
    })
  })

  describe('content limit', () => {
    const big = (bytes: number): string => 'x'.repeat(bytes)

    it('refuses a set that would outgrow the limit: CONTENT_TOO_LARGE, nothing changed', async () => {
      const project = await newProject()
      await apply(project, set('small', 'ok'))
      await expectCode(apply(project, set('huge', big(CONTRACT_CONTENT_LIMIT + 1024))), 'CONTENT_TOO_LARGE', 'one huge set')
      expect(await content(project)).toEqual({ version: 1, content: { small: 'ok' } })
    })

    it('refuses growth past the limit step by step, and still allows shrinking near it', async () => {
      const project = await newProject()
      const chunk = big(Math.floor(CONTRACT_CONTENT_LIMIT / 4))
      await apply(project, set('a', chunk))
      await apply(project, set('b', chunk))
      await apply(project, push('list', chunk))
      await expectCode(apply(project, push('list', chunk)), 'CONTENT_TOO_LARGE', 'the fourth quarter plus keys')
      await expectCode(apply(project, set('c', chunk)), 'CONTENT_TOO_LARGE', 'another quarter')
      let after = await content(project)
      expect(after.version).toBe(3)
      expect(after.content).toEqual({ a: chunk, b: chunk, list: [chunk] })
      await apply(project, { op: 'delete', path: ['a'] })
      await apply(project, set('b', 'short'))
      await apply(project, inc('count'))
      after = await content(project)
      expect(after).toEqual({ version: 6, content: { b: 'short', list: [chunk], count: 1 } })
      await apply(project, set('c', chunk))
      expect((await content(project)).version).toBe(7)
    })

    it('refuses an update (whole-content replacement) over the limit', async () => {
      const project = await newProject()
      await apply(project, { op: 'update', value: { keep: 'me' } })
      await expectCode(apply(project, { op: 'update', value: { huge: big(CONTRACT_CONTENT_LIMIT + 1024) } }), 'CONTENT_TOO_LARGE', 'huge update')
      expect(await content(project)).toEqual({ version: 1, content: { keep: 'me' } })
      await apply(project, { op: 'update', value: { replaced: [1, 2] } })
      expect(await content(project)).toEqual({ version: 2, content: { replaced: [1, 2] } })
    })
  })

  describe('commit notifications', () => {
    it('emits exactly one change per success, in version order, as its log entry with project and actor; none for failures', async () => {
      const project = await newProject()
      const operations: Operation[] = [set('a', { b: [1] }), inc('n', 5), push('a.b', 2), { op: 'delete', path: ['n'] }, { op: 'insert', path: ['a', 'b'], index: 0, value: 0 }]
      await apply(project, operations[0]!)
      await apply(project, operations[1]!)
      await expectCode(apply(project, inc('a')), 'NOT_A_NUMBER', 'failure in between')
      await expectCode(apply(project, inc('n'), { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale in between')
      for (const operation of operations.slice(2)) await apply(project, operation)
      const changes = changesOf(project.id)
      const ref = `@${project.ownerName}/${project.slug}`
      const actor = AS_TEST.actor
      // Values as they were applied: later operations must not reach back into values already notified.
      expect(changes.map(c => ({ ...c.entry, at: 'at' }))).toEqual([
        { project: ref, version: 1, op: 'set', path: 'a', value: { b: [1] }, at: 'at', actor },
        { project: ref, version: 2, op: 'increment', path: 'n', value: 5, at: 'at', actor },
        { project: ref, version: 3, op: 'push', path: 'a.b', value: 2, at: 'at', actor },
        { project: ref, version: 4, op: 'delete', path: 'n', at: 'at', actor },
        { project: ref, version: 5, op: 'insert', path: 'a.b', value: 0, index: 0, at: 'at', actor }
      ])
      for (const change of changes) {
        expect(change.project.id).toBe(project.id)
        expect(change.project.slug).toBe(project.slug)
        expect(change.project.ownerName).toBe(project.ownerName)
        expect(Number.isNaN(Date.parse(change.entry.at)), `at = ${change.entry.at}`).toBe(false)
      }
      // What listeners heard is exactly what the log keeps.
      expect((await store.readChanges(project, 0, 100)).changes).toEqual(changes.map(c => c.entry))
      expect(await content(project)).toEqual({ version: 5, content: { a: { b: [0, 1, 2] } } })
    })

    it('emits nothing for a deleted project or an oversized change', async () => {
      const project = await newProject()
      await expectCode(apply(project, set('huge', 'x'.repeat(CONTRACT_CONTENT_LIMIT * 2))), 'CONTENT_TOO_LARGE', 'oversized')
      await store.deleteProject(project.id)
      await expectCode(apply(project, inc('n')), 'PROJECT_NOT_FOUND', 'deleted')
      expect(changesOf(project.id)).toEqual([])
    })
  })

  describe('content schema (docs/design.md §12)', () => {
    const INVENTORY = {
      type: 'object',
      properties: {
        stock: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
        title: { type: 'string' }
      },
      required: ['stock']
    }
    const schemaRecord = (schema: unknown, revision = randomUUID()): SchemaRecord =>
      ({ revision, schema: schema as SchemaRecord['schema'], setBy: '@alice', setAt: new Date().toISOString() })

    /** Rejects with SCHEMA_VIOLATION, returning its status and errors. */
    async function violation (promise: Promise<unknown>, what: string): Promise<{ status: number, errors: unknown }> {
      let outcome: unknown
      try { outcome = { resolved: await promise } } catch (error) { outcome = error }
      expect(outcome, `${what}: expected SCHEMA_VIOLATION`).toBeInstanceOf(ContentdError)
      const error = outcome as ContentdError
      expect(error.code, what).toBe('SCHEMA_VIOLATION')
      return { status: error.status, errors: error.errors }
    }

    async function inventoryProject (): Promise<ProjectRecord> {
      const project = await newProject()
      await apply(project, { op: 'update', value: { stock: { apples: 3 }, tags: ['fruit'] } })
      await store.putSchema(project.id, schemaRecord(INVENTORY))
      return project
    }

    it('stores, returns, replaces and removes a schema without touching content or version', async () => {
      const project = await newProject()
      await apply(project, set('stock', { apples: 1 }))
      expect(await store.getSchema(project.id)).toBeNull()
      const first = schemaRecord(INVENTORY)
      await store.putSchema(project.id, first)
      expect(await store.getSchema(project.id)).toEqual(first)
      const second = schemaRecord({ type: 'object', $defs: { n: { type: 'number' } } })
      await store.putSchema(project.id, second)
      expect(await store.getSchema(project.id)).toEqual(second)
      expect(await content(project)).toEqual({ version: 1, content: { stock: { apples: 1 } } })
      expect(await store.deleteSchema(project.id)).toBe(true)
      expect(await store.getSchema(project.id)).toBeNull()
      expect(await store.deleteSchema(project.id), 'deleting twice').toBe(false)
      expect(changesOf(project.id).map(c => c.entry.version)).toEqual([1])
    })

    it('refuses a schema the current content breaks: SCHEMA_VIOLATION 409 with the errors, nothing stored', async () => {
      const project = await newProject()
      await apply(project, set('stock', { apples: 'lots' }))
      const refused = await violation(store.putSchema(project.id, schemaRecord(INVENTORY)), 'breaking schema')
      expect(refused).toEqual({ status: 409, errors: [{ path: 'stock.apples', message: 'must be integer' }] })
      expect(await store.getSchema(project.id)).toBeNull()
      const empty = await newProject()
      const missing = await violation(store.putSchema(empty.id, schemaRecord(INVENTORY)), 'missing required member')
      expect(missing.errors).toEqual([{ path: '', message: "must have required property 'stock'" }])
    })

    it('refuses a schema that is not one (INVALID_SCHEMA) and a missing project (PROJECT_NOT_FOUND)', async () => {
      const project = await newProject()
      await expectCode(store.putSchema(project.id, schemaRecord({ type: 'nonsense' })), 'INVALID_SCHEMA', 'bad type')
      await expectCode(store.putSchema(project.id, schemaRecord({ $ref: 'https://example.com/remote.json' })), 'INVALID_SCHEMA', 'remote $ref')
      expect(await store.getSchema(project.id)).toBeNull()
      await expectCode(store.putSchema(randomUUID(), schemaRecord(true)), 'PROJECT_NOT_FOUND', 'missing project')
    })

    it.each<[string, Operation, string]>([
      ['set', set('stock.apples', 'lots'), 'stock.apples'],
      ['increment', inc('title'), 'title'],
      ['decrement below the minimum', { op: 'decrement', path: ['stock', 'apples'], value: 4 }, 'stock.apples'],
      ['push', push('tags', 7), 'tags.1'],
      ['insert', { op: 'insert', path: ['tags'], index: 0, value: false }, 'tags.0'],
      ['delete of a required member', { op: 'delete', path: ['stock'] }, ''],
      ['update', { op: 'update', value: { stock: { pears: -1 } } }, 'stock.pears']
    ])('refuses a %s whose result breaks the schema: 422, nothing changed, nothing notified', async (_what, operation, path) => {
      const project = await inventoryProject()
      const before = await content(project)
      const refused = await violation(apply(project, operation), operation.op)
      expect(refused.status).toBe(422)
      expect(refused.errors).toEqual([{ path, message: expect.any(String) }])
      expect(await content(project)).toEqual(before)
      expect(changesOf(project.id).map(c => c.entry.version)).toEqual([1])
      // The document is intact for the next write (the refused one was undone, not half-applied).
      expect(await apply(project, inc('stock.apples'))).toEqual({ version: 2 })
      expect((await content(project)).content).toEqual({ ...before.content, stock: { ...before.content.stock as object, apples: 4 } })
    })

    it('accepts writes that keep the content valid, and checks nothing once the schema is removed', async () => {
      const project = await inventoryProject()
      await apply(project, set('stock.pears', 2))
      await apply(project, push('tags', 'red'))
      await apply(project, { op: 'delete', path: ['tags', '0'] })
      await apply(project, { op: 'update', value: { stock: {}, title: 'Shop' } })
      expect(await content(project)).toEqual({ version: 5, content: { stock: {}, title: 'Shop' } })
      await store.deleteSchema(project.id)
      await apply(project, set('stock', 'anything'))
      expect((await content(project)).content).toEqual({ stock: 'anything', title: 'Shop' })
    })

    it('applies a replaced schema from the next write on', async () => {
      const project = await inventoryProject()
      await apply(project, set('title', 'x'.repeat(10)))
      await store.putSchema(project.id, schemaRecord({ ...INVENTORY, properties: { ...INVENTORY.properties, title: { type: 'string', maxLength: 10 } } }))
      await violation(apply(project, set('title', 'x'.repeat(11))), 'longer title')
      await apply(project, set('title', 'short'))
      expect((await content(project)).content.title).toBe('short')
    })

    it('checks each of many simultaneous writes on its own: exactly those within the schema commit', async () => {
      const project = await newProject()
      await apply(project, set('votes', 0))
      await store.putSchema(project.id, schemaRecord({ properties: { votes: { type: 'integer', maximum: 25 } } }))
      const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => apply(project, inc('votes'))))
      const refused = outcomes.filter(o => o.status === 'rejected').map(o => (o.reason as ContentdError).code)
      expect(outcomes.filter(o => o.status === 'fulfilled')).toHaveLength(25)
      expect(refused).toEqual(Array.from({ length: 15 }, () => 'SCHEMA_VIOLATION'))
      expect(await content(project)).toEqual({ version: 26, content: { votes: 25 } })
    })

    describe('batches, patches and reverts (docs/design.md §10, §9)', () => {
      const batchOf = (...operations: unknown[]): StoreOperation => ({ op: 'batch', operations: parseBatch({ operations }, 100) })
      const patchOf = (...operations: unknown[]): StoreOperation => ({ op: 'patch', operations: parsePatch(operations, 100) })

      /** Refused with 422 for the write as a whole (no `operation`), content, version and log unchanged. */
      async function expectRefusedWhole (project: ProjectRecord, operation: StoreOperation, path: string): Promise<void> {
        const before = await content(project)
        const logged = (await store.readChanges(project, 0, 1000)).changes.length
        const refused = await violation(apply(project, operation), operation.op)
        expect(refused).toEqual({ status: 422, errors: [{ path, message: expect.any(String) }] })
        const error = await apply(project, operation).catch((e: unknown) => e)
        expect(error, 'a schema violation is not one operation\'s failure').not.toBeInstanceOf(OperationError)
        expect(await content(project)).toEqual(before)
        expect((await store.readChanges(project, 0, 1000)).changes).toHaveLength(logged)
      }

      it('refuses a batch whose result breaks the schema, and accepts one that passes through an invalid state', async () => {
        const project = await inventoryProject()
        await expectRefusedWhole(project, batchOf({ op: 'increment', path: 'stock.apples' }, { op: 'set', path: 'stock.pears', value: 'many' }), 'stock.pears')
        await expectRefusedWhole(project, batchOf({ op: 'delete', path: 'stock' }), '')
        // Only the result counts: -1 on the way is fine when the batch ends at 0 or above.
        expect(await apply(project, batchOf({ op: 'decrement', path: 'stock.apples', value: 10 }, { op: 'increment', path: 'stock.apples', value: 7 }))).toEqual({ version: 2 })
        expect((await content(project)).content.stock).toEqual({ apples: 0 })
        expect(changesOf(project.id).map(c => c.entry.op)).toEqual(['update', 'batch'])
      })

      it('refuses a JSON Patch whose result breaks the schema', async () => {
        const project = await inventoryProject()
        await expectRefusedWhole(project, patchOf({ op: 'add', path: '/tags/-', value: 1 }), 'tags.1')
        await expectRefusedWhole(project, patchOf({ op: 'copy', from: '/tags', path: '/title' }), 'title')
        expect(await apply(project, patchOf({ op: 'replace', path: '/stock/apples', value: 9 }, { op: 'add', path: '/title', value: 'Shop' }))).toEqual({ version: 2 })
        expect((await content(project)).content).toEqual({ stock: { apples: 9 }, tags: ['fruit'], title: 'Shop' })
      })

      it('refuses a revert to content the schema set since then breaks', async () => {
        const project = await newProject()
        await apply(project, { op: 'update', value: { stock: { apples: 'lots' } } })
        await apply(project, { op: 'update', value: { stock: { apples: 3 } } })
        await store.putSchema(project.id, schemaRecord(INVENTORY))
        await expectRefusedWhole(project, { op: 'revert', version: 1 }, 'stock.apples')
        await expectRefusedWhole(project, { op: 'revert', version: 0 }, '')
        expect(await apply(project, { op: 'revert', version: 2 })).toEqual({ version: 3 })
        expect(await content(project)).toEqual({ version: 3, content: { stock: { apples: 3 } } })
      })

      it('checks each of simultaneous batches on its own result', async () => {
        const project = await newProject()
        await apply(project, set('votes', 0))
        await store.putSchema(project.id, schemaRecord({ properties: { votes: { type: 'integer', maximum: 20 } } }))
        const batch = batchOf({ op: 'increment', path: 'votes' }, { op: 'increment', path: 'votes' })
        const outcomes = await Promise.allSettled(Array.from({ length: 15 }, () => apply(project, structuredClone(batch))))
        expect(outcomes.filter(o => o.status === 'fulfilled')).toHaveLength(10)
        expect(outcomes.flatMap(o => o.status === 'rejected' ? [(o.reason as ContentdError).code] : [])).toEqual(Array.from({ length: 5 }, () => 'SCHEMA_VIOLATION'))
        expect(await content(project)).toEqual({ version: 11, content: { votes: 20 } })
      })
    })

    it('forgets the schema of a deleted project', async () => {
      const project = await inventoryProject()
      await store.deleteProject(project.id)
      expect(await store.getSchema(project.id)).toBeNull()
    })
  })

  describe('change log (docs/design.md §9)', () => {
    const refOf = (p: ProjectRecord) => `@${p.ownerName}/${p.slug}`
    const KEY_ACTOR = { type: 'key', id: 'key_contract', name: 'deploy bot' } as const
    /** Entries as compared here: `at` checked to be a time, then set aside. */
    const withoutAt = (entries: ChangeEntry[]) => entries.map(({ at, ...rest }) => {
      expect(Number.isNaN(Date.parse(at)), `at = ${at}`).toBe(false)
      return rest
    })

    /** Every entry after `since`, paging through readChanges. */
    async function allChanges (project: ProjectRecord, since = 0, pageSize = 1000): Promise<ChangeEntry[]> {
      const all: ChangeEntry[] = []
      for (let from = since; ;) {
        const page = await store.readChanges(project, from, pageSize)
        all.push(...page.changes)
        if (!page.more) return all
        from = page.changes.at(-1)!.version
      }
    }

    /** The content after each entry, replayed over `start` with the shared applyOperation. */
    function replay (start: JsonObject, entries: ChangeEntry[]): JsonObject[] {
      const contents: JsonObject[] = []
      let doc = structuredClone(start)
      for (const entry of entries) {
        doc = applyContentOperation(doc, operationOfChange(structuredClone(entry)))
        contents.push(structuredClone(doc))
      }
      return contents
    }

    it('keeps one entry per committed version, in §9\'s shape for every operation, with its actor; none for failures', async () => {
      const project = await newProject()
      const ref = refOf(project)
      const user = AS_TEST.actor
      await apply(project, { op: 'update', value: { a: 1, list: [1] } })
      await apply(project, inc('a', 2), { actor: KEY_ACTOR })
      await apply(project, { op: 'decrement', path: ['a'], value: 1 })
      await expectCode(apply(project, inc('list')), 'NOT_A_NUMBER', 'increment an array')
      await apply(project, set('x.y', { z: null }))
      await expectCode(apply(project, push('a', 1)), 'NOT_AN_ARRAY', 'push onto a number')
      await apply(project, push('list', [2]))
      await expectCode(apply(project, inc('a'), { ifMatch: [1] }), 'PRECONDITION_FAILED', 'stale If-Match')
      await apply(project, { op: 'insert', path: ['list'], index: 0, value: 'first' }, { actor: KEY_ACTOR })
      await expectCode(apply(project, set('huge', 'x'.repeat(CONTRACT_CONTENT_LIMIT * 2))), 'CONTENT_TOO_LARGE', 'oversized')
      await apply(project, { op: 'delete', path: ['x'] })
      await apply(project, { op: 'delete', path: ['nothing', 'here'] })
      const page = await store.readChanges(project, 0, 100)
      expect(page.version).toBe(8)
      expect(page.more).toBe(false)
      expect(withoutAt(page.changes)).toEqual([
        { project: ref, version: 1, op: 'update', value: { a: 1, list: [1] }, actor: user },
        { project: ref, version: 2, op: 'increment', path: 'a', value: 2, actor: KEY_ACTOR },
        { project: ref, version: 3, op: 'decrement', path: 'a', value: 1, actor: user },
        { project: ref, version: 4, op: 'set', path: 'x.y', value: { z: null }, actor: user },
        { project: ref, version: 5, op: 'push', path: 'list', value: [2], actor: user },
        { project: ref, version: 6, op: 'insert', path: 'list', value: 'first', index: 0, actor: KEY_ACTOR },
        { project: ref, version: 7, op: 'delete', path: 'x', actor: user },
        { project: ref, version: 8, op: 'delete', path: 'nothing.here', actor: user }
      ])
      // The order of members too: JSON clients see them as §9 lists them.
      expect(Object.keys(page.changes[5]!)).toEqual(['project', 'version', 'op', 'path', 'value', 'index', 'at', 'actor'])
      // A change is in the content exactly when it is in the log.
      expect(replay({}, page.changes).at(-1)).toEqual((await content(project)).content)
      expect((await content(project)).content).toEqual({ a: 2, list: ['first', 1, [2]] })
    })

    it('replaying the log over {} gives the content of every version, and readContentAt agrees', async () => {
      const project = await newProject()
      const operations: Operation[] = [
        set('doc', { title: 'a', tags: [] }), push('doc.tags', 'x'), inc('doc.views'), push('doc.tags', { deep: [1] }),
        set('doc.tags.1.deep.1', 2), { op: 'delete', path: ['doc', 'tags', '0'] }, { op: 'update', value: { fresh: true } },
        inc('n', 0.5), { op: 'insert', path: ['arr'], index: 0, value: null }, set('fresh', false)
      ]
      // In one burst as well as one by one: the embedded store commits a burst together.
      await Promise.all(operations.slice(0, 5).map(operation => apply(project, operation)))
      for (const operation of operations.slice(5)) await apply(project, operation)
      const entries = await allChanges(project)
      expect(entries.map(e => e.version)).toEqual(operations.map((_, i) => i + 1))
      const contents = replay({}, entries)
      expect(contents.at(-1)).toEqual((await content(project)).content)
      expect(await store.readContentAt(project.id, 0)).toMatchObject({ version: 0, content: {} })
      for (let v = 1; v <= operations.length; v++) {
        const snapshot = await store.readContentAt(project.id, v)
        expect(snapshot.version).toBe(v)
        expect(snapshot.content, `content at version ${v}`).toEqual(contents[v - 1])
        if (snapshot.json !== undefined) expect(JSON.parse(snapshot.json)).toEqual(contents[v - 1])
      }
    })

    it('pages with since and limit: ascending, `more` while entries follow; since = current gives none', async () => {
      const project = await newProject()
      for (let i = 0; i < 7; i++) await apply(project, inc('n'))
      const first = await store.readChanges(project, 0, 3)
      expect(first.changes.map(c => c.version)).toEqual([1, 2, 3])
      expect(first).toMatchObject({ version: 7, more: true })
      expect((await store.readChanges(project, 3, 3)).changes.map(c => c.version)).toEqual([4, 5, 6])
      const last = await store.readChanges(project, 6, 3)
      expect(last.changes.map(c => c.version)).toEqual([7])
      expect(last.more).toBe(false)
      // Exactly `limit` left: no more after them.
      expect(await store.readChanges(project, 4, 3)).toMatchObject({ more: false })
      expect((await store.readChanges(project, 4, 3)).changes.map(c => c.version)).toEqual([5, 6, 7])
      expect(await store.readChanges(project, 7, 100)).toEqual({ version: 7, changes: [], more: false })
    })

    it('refuses since above the current version (INVALID_VERSION) and a version above it (VERSION_NOT_FOUND)', async () => {
      const project = await newProject()
      await apply(project, inc('n'))
      await expectCode(store.readChanges(project, 2, 10), 'INVALID_VERSION', 'since 2 at version 1')
      await expectCode(store.readContentAt(project.id, 2), 'VERSION_NOT_FOUND', 'version 2 at version 1')
      const fresh = await newProject()
      await expectCode(store.readChanges(fresh, 1, 10), 'INVALID_VERSION', 'since 1 at version 0')
      expect(await store.readChanges(fresh, 0, 10)).toEqual({ version: 0, changes: [], more: false })
    })

    it('gives out past contents that later operations do not change', async () => {
      const project = await newProject()
      await apply(project, set('list', [1]))
      await apply(project, set('other', 1))
      const past = await store.readContentAt(project.id, 1)
      const now = await store.readContentAt(project.id, 2)
      await apply(project, push('list', 2))
      await apply(project, { op: 'update', value: { replaced: true } })
      expect(past.content).toEqual({ list: [1] })
      expect(now.content).toEqual({ list: [1], other: 1 })
      expect(now.version).toBe(2)
    })

    it('deleting a project deletes its log: created again under its name, it starts at version 0 with an empty log', async () => {
      const owner = await newUser()
      const project = await newProject(owner)
      for (let i = 0; i < 3; i++) await apply(project, inc('n'))
      await store.deleteProject(project.id)
      await expectCode(store.readChanges(project, 0, 10), 'PROJECT_NOT_FOUND', 'changes of a deleted project')
      await expectCode(store.readContentAt(project.id, 1), 'PROJECT_NOT_FOUND', 'past content of a deleted project')
      const again = await store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: project.slug, name: 'Again', createdAt: new Date().toISOString() })
      expect(await store.readChanges(again, 0, 10)).toEqual({ version: 0, changes: [], more: false })
      await expectCode(store.readContentAt(again.id, 1), 'VERSION_NOT_FOUND', 'the old project\'s versions are gone')
      await apply(again, set('b', 1))
      expect(withoutAt((await store.readChanges(again, 0, 10)).changes)).toEqual([{ project: refOf(again), version: 1, op: 'set', path: 'b', value: 1, actor: AS_TEST.actor }])
    })

    it('500 simultaneous increments: 500 entries, one per version, in order', async () => {
      const project = await newProject()
      await Promise.all(Array.from({ length: 500 }, () => apply(project, inc('hits'))))
      const entries = await allChanges(project, 0, 120)
      expect(entries.map(e => e.version)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1))
      expect(entries.every(e => e.op === 'increment' && e.path === 'hits' && e.value === 1)).toBe(true)
      expect(replay({}, entries).at(-1)).toEqual({ hits: 500 })
    })

    describe('revert', () => {
      it('makes the content what it was, as ONE new change whose entry carries revertedTo and the content', async () => {
        const project = await newProject()
        await apply(project, set('price', 10))
        await apply(project, set('title', 'Shoe'))
        await apply(project, set('price', 0), { actor: KEY_ACTOR })
        const notified = changesOf(project.id).length
        expect(await apply(project, { op: 'revert', version: 2 })).toEqual({ version: 4 })
        expect(await content(project)).toEqual({ version: 4, content: { price: 10, title: 'Shoe' } })
        const entry = (await store.readChanges(project, 3, 10)).changes
        expect(withoutAt(entry)).toEqual([{ project: refOf(project), version: 4, op: 'revert', value: { price: 10, title: 'Shoe' }, revertedTo: 2, actor: AS_TEST.actor }])
        expect(changesOf(project.id).slice(notified).map(c => c.entry)).toEqual(entry)
        // History itself never changes: version 3 is still what it was.
        expect((await store.readContentAt(project.id, 3)).content).toEqual({ price: 0, title: 'Shoe' })
        // And the revert is history too: revert the revert.
        await apply(project, { op: 'revert', version: 3 })
        expect(await content(project)).toEqual({ version: 5, content: { price: 0, title: 'Shoe' } })
        expect(replay({}, await allChanges(project)).at(-1)).toEqual({ price: 0, title: 'Shoe' })
      })

      it('reverts to version 0 ({}) and to the current version (a new version, the same content)', async () => {
        const project = await newProject()
        await apply(project, set('a', { b: 1 }))
        expect(await apply(project, { op: 'revert', version: 1 })).toEqual({ version: 2 })
        expect(await content(project)).toEqual({ version: 2, content: { a: { b: 1 } } })
        expect(await apply(project, { op: 'revert', version: 0 })).toEqual({ version: 3 })
        expect(await content(project)).toEqual({ version: 3, content: {} })
        await apply(project, inc('a'))
        expect(await content(project)).toEqual({ version: 4, content: { a: 1 } })
      })

      it('is VERSION_NOT_FOUND above the current version, changing nothing; If-Match is checked first', async () => {
        const project = await newProject()
        await apply(project, set('a', 1))
        await expectCode(apply(project, { op: 'revert', version: 2 }), 'VERSION_NOT_FOUND', 'revert to the future')
        await expectCode(apply(project, { op: 'revert', version: 2 }, { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale If-Match + future version')
        await expectCode(apply(project, { op: 'revert', version: 0 }, { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale If-Match')
        expect(await apply(project, { op: 'revert', version: 0 }, { ifMatch: [1] })).toEqual({ version: 2 })
        expect((await store.readChanges(project, 0, 10)).changes.map(c => c.op)).toEqual(['set', 'revert'])
      })

      it('sees the changes committed together with it', async () => {
        const project = await newProject()
        await apply(project, set('n', 0))
        // Sent in one tick: the embedded store commits them in one transaction.
        const [a, b, reverted] = await Promise.all([apply(project, inc('n')), apply(project, inc('n')), apply(project, { op: 'revert', version: 2 })])
        expect([a.version, b.version, reverted.version]).toEqual([2, 3, 4])
        expect(await content(project)).toEqual({ version: 4, content: { n: 1 } })
      })
    })

    describe('retention (HISTORY_LIMIT)', () => {
      let limited: StoreUnderTest
      let keepAll: StoreUnderTest
      const LIMIT = 5
      beforeAll(async () => {
        limited = await factory.create({ historyLimit: LIMIT })
        keepAll = await factory.create({ historyLimit: 0 })
      })
      afterAll(async () => {
        await limited?.cleanup()
        await keepAll?.cleanup()
      })

      async function projectIn (target: Store): Promise<ProjectRecord> {
        const user = userRecord()
        await target.createUser(user)
        return target.createProject({ id: randomUUID(), ownerId: user.id, ownerName: user.username, slug: unique('p'), name: 'Retention', createdAt: new Date().toISOString() })
      }

      /** Checks the boundary at `version`: exactly the newest LIMIT entries are answerable. */
      async function expectBoundary (target: Store, project: ProjectRecord, version: number, contents: JsonObject[]): Promise<void> {
        const oldest = version - LIMIT
        const page = await target.readChanges(project, oldest, 100)
        expect(page.changes.map(c => c.version), `changes after ${oldest} at version ${version}`).toEqual(Array.from({ length: LIMIT }, (_, i) => oldest + 1 + i))
        await expectCode(target.readChanges(project, oldest - 1, 100), 'HISTORY_EXPIRED', `since ${oldest - 1} at version ${version}`)
        expect((await target.readContentAt(project.id, oldest)).content, `content at ${oldest}`).toEqual(contents[oldest])
        await expectCode(target.readContentAt(project.id, oldest - 1), 'HISTORY_EXPIRED', `version ${oldest - 1} at version ${version}`)
      }

      it('answers exactly the newest HISTORY_LIMIT entries; older since, version and revert are HISTORY_EXPIRED', async () => {
        const target = limited.store
        const project = await projectIn(target)
        const contents: JsonObject[] = [{}]
        for (let i = 1; i <= 12; i++) {
          await target.applyOperation(project, set(`k${i % 4}`, i), AS_TEST)
          contents.push({ ...contents[i - 1], [`k${i % 4}`]: i })
        }
        await expectBoundary(target, project, 12, contents)
        await expectCode(target.applyOperation(project, { op: 'revert', version: 6 }, AS_TEST), 'HISTORY_EXPIRED', 'revert beyond retention')
        expect(await target.applyOperation(project, { op: 'revert', version: 7 }, AS_TEST)).toEqual({ version: 13 })
        expect((await target.readContent(project.id))?.content).toEqual(contents[7])
      })

      it('stays exact through many checkpoints and prunings', { timeout: 120_000 }, async () => {
        const target = limited.store
        const project = await projectIn(target)
        const contents: JsonObject[] = [{}]
        let model: JsonObject = {}
        // Bursts of mixed writes (whole-content updates now and then), checked after each.
        for (let burst = 0; burst < 12; burst++) {
          const operations: Operation[] = Array.from({ length: 60 }, (_, i): Operation => {
            const n = burst * 60 + i
            if (n % 97 === 0) return { op: 'update', value: { restart: n, list: [] } }
            return n % 3 === 0 ? push('list', { n, text: 'x'.repeat(n % 50) }) : inc('count', n)
          })
          for (const operation of operations) {
            model = applyOperation(structuredClone(model), structuredClone(operation))
            contents.push(model)
          }
          await Promise.all(operations.map(operation => target.applyOperation(project, operation, AS_TEST)))
          await expectBoundary(target, project, contents.length - 1, contents)
        }
        expect((await target.readContent(project.id))?.content).toEqual(model)
      })

      it('HISTORY_LIMIT=0 keeps every entry', async () => {
        const target = keepAll.store
        const project = await projectIn(target)
        for (let i = 0; i < 30; i++) await target.applyOperation(project, inc('n'), AS_TEST)
        expect((await target.readChanges(project, 0, 100)).changes).toHaveLength(30)
        expect((await target.readContentAt(project.id, 0)).content).toEqual({})
        expect((await target.readContentAt(project.id, 1)).content).toEqual({ n: 1 })
      })
    })

    describe('pages bounded in bytes (CHANGES_PAGE_BYTES, docs/design.md §13b)', () => {
      const PAGE_BYTES = 4096
      let bounded: StoreUnderTest
      beforeAll(async () => { bounded = await factory.create({ changesPageBytes: PAGE_BYTES }) })
      afterAll(async () => { await bounded?.cleanup() })

      /** An entry's size as a reader sends it: the UTF-8 length of its JSON. */
      const bytesOf = (entry: ChangeEntry) => Buffer.byteLength(JSON.stringify(entry))

      it('carries at most CHANGES_PAGE_BYTES of entries, an over-size one alone, `more` while any remain; continuing gets each once', async () => {
        const target = bounded.store
        const user = userRecord()
        await target.createUser(user)
        const project = await target.createProject({ id: randomUUID(), ownerId: user.id, ownerName: user.username, slug: unique('p'), name: 'Pages', createdAt: new Date().toISOString() })
        const write = (operation: StoreOperation) => target.applyOperation(project, operation, AS_TEST)
        // Entries of about 1.5 KiB (multi-byte characters: bytes, not characters, count),
        // small increments, a document over the page size and reverts carrying it whole.
        await write({ op: 'update', value: { text: 'é'.repeat(700) } })
        for (let i = 0; i < 3; i++) await write(inc('n'))
        await write(set('text', 'ü'.repeat(700)))
        await write(set('text', 'x'.repeat(1500)))
        await write({ op: 'update', value: { big: 'y'.repeat(PAGE_BYTES + 500) } })
        await write(inc('n'))
        await write({ op: 'revert', version: 7 })
        await write({ op: 'revert', version: 7 })
        for (let i = 0; i < 5; i++) await write(inc('n'))
        const total = 15
        const oneByOne: ChangeEntry[] = []
        for (let since = 0; since < total; since++) {
          const single = await target.readChanges(project, since, 1)
          expect(single.more, `since ${since}, limit 1`).toBe(since + 1 < total)
          oneByOne.push(...single.changes)
        }
        expect(oneByOne.map(e => e.version)).toEqual(Array.from({ length: total }, (_, i) => i + 1))
        expect(bytesOf(oneByOne[6]!)).toBeGreaterThan(PAGE_BYTES)

        const pages: ChangeEntry[][] = []
        for (let since = 0; ;) {
          const page = await target.readChanges(project, since, 1000)
          expect(page.changes.length, `page after ${since}`).toBeGreaterThan(0)
          const bytes = page.changes.reduce((sum, entry) => sum + bytesOf(entry), 0)
          if (page.changes.length > 1) expect(bytes, `page after ${since}`).toBeLessThanOrEqual(PAGE_BYTES)
          pages.push(page.changes)
          since = page.changes.at(-1)!.version
          expect(page.more, `more after ${since}`).toBe(since < total)
          // Full as the budget allows: the next entry would not have fit.
          if (page.more) expect(bytes + bytesOf(oneByOne[since]!), `page after ${since} cut early`).toBeGreaterThan(PAGE_BYTES)
          if (!page.more) break
        }
        expect(pages.flat()).toEqual(oneByOne)
        // The over-size entry and each revert that carries that document came alone.
        for (const version of [7, 9, 10]) expect(pages.find(page => page.some(e => e.version === version))!.map(e => e.version)).toEqual([version])
        // `limit` still bounds a page of small entries.
        expect(await target.readChanges(project, 10, 2)).toMatchObject({ more: true, changes: [{ version: 11 }, { version: 12 }] })
        expect((await target.readChanges(project, 10, 1000)).changes.map(e => e.version)).toEqual([11, 12, 13, 14, 15])
        // readChangesJson: the same pages, each entry's JSON unparsed, without `project`, and its size as sent.
        for (const since of [0, 6, 10]) {
          const [json, parsed] = [await target.readChangesJson(project, since, 1000), await target.readChanges(project, since, 1000)]
          expect([json.version, json.project, json.more]).toEqual([parsed.version, `@${user.username}/${project.slug}`, parsed.more])
          expect(json.entries.map(entry => entry.version)).toEqual(parsed.changes.map(entry => entry.version))
          json.entries.forEach((entry, i) => {
            const { project: _, ...stored } = parsed.changes[i]!
            expect(entry.stored.toString()).toBe(JSON.stringify(stored))
            expect(entry.bytes).toBe(bytesOf(parsed.changes[i]!))
          })
        }
      })
    })
  })

  describe('batches, patches and Idempotency-Key records (docs/design.md §10)', () => {
    const batchOf = (...operations: unknown[]): StoreOperation => ({ op: 'batch', operations: parseBatch({ operations }, 100) })
    const patchOf = (...operations: unknown[]): StoreOperation => ({ op: 'patch', operations: parsePatch(operations, 100) })

    async function expectOperationError (promise: Promise<unknown>, code: ErrorCode, operation: number): Promise<void> {
      const error = await promise.then(() => null, (e: unknown) => e)
      expect(error).toBeInstanceOf(OperationError)
      expect([(error as OperationError).code, (error as OperationError).operation]).toEqual([code, operation])
    }

    it('applies a batch as one version and one entry with its operations; a failing one changes nothing', async () => {
      const project = await newProject()
      await apply(project, set('stock', 5))
      await apply(project, batchOf({ op: 'test', path: 'stock', value: 5 }, { op: 'decrement', path: 'stock' }, { op: 'set', path: 'o', value: { l: [] } }, { op: 'push', path: 'o.l', value: 1 }))
      expect(await content(project)).toEqual({ version: 2, content: { stock: 4, o: { l: [1] } } })
      await expectOperationError(apply(project, batchOf({ op: 'increment', path: 'stock' }, { op: 'test', path: 'stock', value: 4 })), 'TEST_FAILED', 1)
      await expectOperationError(apply(project, batchOf({ op: 'increment', path: 'stock' }, { op: 'push', path: 'stock', value: 1 })), 'NOT_AN_ARRAY', 1)
      expect(await content(project)).toEqual({ version: 2, content: { stock: 4, o: { l: [1] } } })
      const entries = (await store.readChanges(project, 1, 10)).changes
      expect(entries).toEqual([expect.objectContaining({ version: 2, op: 'batch', operations: [
        { op: 'test', path: 'stock', value: 5 }, { op: 'decrement', path: 'stock', value: 1 }, { op: 'set', path: 'o', value: { l: [] } }, { op: 'push', path: 'o.l', value: 1 }
      ] })])
      expect(entries[0]).not.toHaveProperty('value')
      expect(changesOf(project.id).map(c => c.entry.op)).toEqual(['set', 'batch'])
      // What listeners got is their own: later changes to the content do not alter it.
      await apply(project, push('o.l', 2))
      expect(changesOf(project.id)[1]?.entry.operations?.[2]).toEqual({ op: 'set', path: 'o', value: { l: [] } })
    })

    it('applies an RFC 6902 patch as one change (op "patch"), replayable from the log', async () => {
      const project = await newProject()
      await apply(project, { op: 'update', value: { todo: ['a', 'b'], done: [] } })
      await apply(project, patchOf({ op: 'move', from: '/todo/0', path: '/done/-' }, { op: 'copy', from: '/done', path: '/log' }, { op: 'add', path: '/log/0', value: 'start' }))
      expect(await content(project)).toEqual({ version: 2, content: { todo: ['b'], done: ['a'], log: ['start', 'a'] } })
      await expectOperationError(apply(project, patchOf({ op: 'remove', path: '/todo/0' }, { op: 'remove', path: '/todo/0' })), 'INVALID_PATCH', 1)
      expect((await content(project)).version).toBe(2)
      await apply(project, inc('n'))
      expect((await store.readContentAt(project.id, 2)).content).toEqual({ todo: ['b'], done: ['a'], log: ['start', 'a'] })
      const entries = (await store.readChanges(project, 0, 10)).changes
      let doc: JsonObject = {}
      for (const entry of entries) doc = applyContentOperation(doc, operationOfChange(structuredClone(entry)))
      expect(doc).toEqual((await content(project)).content)
      expect(entries[1]).toEqual(expect.objectContaining({ op: 'patch', operations: [{ op: 'move', from: '/todo/0', path: '/done/-' }, { op: 'copy', from: '/done', path: '/log' }, { op: 'add', path: '/log/0', value: 'start' }] }))
    })

    it('checks If-Match and the content limit for a batch as for any write', async () => {
      const project = await newProject()
      await apply(project, set('a', 1))
      await expectCode(apply(project, batchOf({ op: 'increment', path: 'a' }), { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale If-Match')
      await apply(project, batchOf({ op: 'increment', path: 'a' }), { ifMatch: [1] })
      const chunk = 'x'.repeat(Math.floor(CONTRACT_CONTENT_LIMIT / 2))
      await expectCode(apply(project, batchOf({ op: 'set', path: 'b', value: chunk }, { op: 'set', path: 'c', value: chunk }, { op: 'set', path: 'd', value: chunk })), 'CONTENT_TOO_LARGE', 'a batch past the limit')
      expect(await content(project)).toEqual({ version: 2, content: { a: 2 } })
    })

    it('refuses a patch of doubling copies at the copy that crosses the limit, and a result of exactly the limit is accepted (docs/design.md §13b)', async () => {
      const project = await newProject()
      const start = { d: ['x'.repeat(64)] }
      await apply(project, { op: 'update', value: start })
      // Each copy appends d to itself: d's JSON doubles plus a comma; 24 of them ask for a GiB.
      let arrayBytes = JSON.stringify(start.d).length
      let crossing = 0
      while (arrayBytes * 2 + 1 + '{"d":}'.length <= CONTRACT_CONTENT_LIMIT) { arrayBytes = arrayBytes * 2 + 1; crossing++ }
      const doubling = patchOf(...Array.from({ length: 24 }, () => ({ op: 'copy', from: '/d', path: '/d/-' })))
      await expectOperationError(apply(project, doubling), 'CONTENT_TOO_LARGE', crossing)
      expect(await content(project)).toEqual({ version: 1, content: start })
      // The count agrees with the content's JSON bytes to the byte ("é" is two of them).
      const room = CONTRACT_CONTENT_LIMIT - Buffer.byteLength(JSON.stringify(start)) - ',"f":""'.length
      const text = (bytes: number) => 'é'.repeat(Math.floor(bytes / 2)) + 'y'.repeat(bytes % 2)
      await expectOperationError(apply(project, patchOf({ op: 'add', path: '/f', value: text(room + 1) })), 'CONTENT_TOO_LARGE', 0)
      await expectOperationError(apply(project, patchOf({ op: 'add', path: '/e', value: 1 }, { op: 'add', path: '/f', value: text(room) })), 'CONTENT_TOO_LARGE', 1)
      await apply(project, patchOf({ op: 'add', path: '/f', value: text(room) }))
      const full = await content(project)
      expect(full.version).toBe(2)
      expect(Buffer.byteLength(JSON.stringify(full.content))).toBe(CONTRACT_CONTENT_LIMIT)
    })

    it('100 concurrent batches of 10 increments sum exactly, one version each', async () => {
      const project = await newProject()
      const batch = batchOf(...Array.from({ length: 10 }, () => ({ op: 'increment', path: 'n' })))
      const results = await Promise.all(Array.from({ length: 100 }, () => apply(project, structuredClone(batch))))
      expect(new Set(results.map(r => r.version)).size).toBe(100)
      expect(await content(project)).toEqual({ version: 100, content: { n: 1000 } })
    })

    describe('Idempotency-Key records', () => {
      const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString()
      const claimOf = (projectId: string, key: string, nowMs = 0, fingerprint = 'f1') => ({ projectId, caller: 'user:u1', key, fingerprint, now: at(nowMs), expiresAt: at(nowMs + 1000), userId: 'u1' })
      const answer = { status: 200, body: '{"message":"ok"}', etag: '"1"' }

      it('claims once; then running, then done with the answer; released claims are free again', async () => {
        const project = await newProject()
        const claim = claimOf(project.id, 'k1')
        expect(await store.claimIdempotencyKey(claim)).toEqual({ state: 'claimed' })
        expect(await store.claimIdempotencyKey({ ...claim, fingerprint: 'f2' })).toEqual({ state: 'running', fingerprint: 'f1' })
        await store.finishIdempotencyKey(claim, answer)
        expect(await store.claimIdempotencyKey(claim)).toEqual({ state: 'done', fingerprint: 'f1', response: answer })
        // Another caller's key of the same name is another record.
        expect(await store.claimIdempotencyKey({ ...claim, caller: 'key:k9' })).toEqual({ state: 'claimed' })
        await store.finishIdempotencyKey({ ...claim, caller: 'key:k9' }, null)
        expect(await store.claimIdempotencyKey({ ...claim, caller: 'key:k9' })).toEqual({ state: 'claimed' })
      })

      it('lets an expired record be claimed anew, and deletes expired records', async () => {
        const project = await newProject()
        await store.claimIdempotencyKey(claimOf(project.id, 'old'))
        await store.finishIdempotencyKey(claimOf(project.id, 'old'), answer)
        expect(await store.claimIdempotencyKey(claimOf(project.id, 'old', 999, 'f2'))).toEqual({ state: 'done', fingerprint: 'f1', response: answer })
        expect(await store.claimIdempotencyKey(claimOf(project.id, 'old', 1000, 'f2'))).toEqual({ state: 'claimed' })
        await store.claimIdempotencyKey(claimOf(project.id, 'stale', 0))
        expect(await store.deleteExpiredIdempotencyKeys(at(1500))).toBeGreaterThanOrEqual(1)
        expect(await store.claimIdempotencyKey(claimOf(project.id, 'stale', 0))).toEqual({ state: 'claimed' })
      })

      // docs/design.md §13b: MAX_IDEMPOTENCY_KEYS_PER_USER, over all the user's projects and callers.
      describe('bounded per user (maxPerUser)', () => {
        const bounded = (projectId: string, key: string, nowMs: number, userId: string, caller = `user:${userId}`) =>
          ({ ...claimOf(projectId, key, nowMs), caller, userId, maxPerUser: 3 })

        it('refuses a new key past the bound, recording nothing; stored keys still answer; a release or an expiry frees a slot', async () => {
          const project = await newProject()
          const other = await newProject()
          const user = unique('bound')
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k1', 0, user))).toEqual({ state: 'claimed' })
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k2', 100, user))).toEqual({ state: 'claimed' })
          // Another project and another caller (the user's API key) count against the same user.
          expect(await store.claimIdempotencyKey(bounded(other.id, 'k3', 200, user, 'key:k-of-user'))).toEqual({ state: 'claimed' })
          // Full: the oldest record (k1, expiring at 1000) frees a slot then.
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k4', 300, user))).toEqual({ state: 'full', retryAt: at(1000) })
          expect(await store.claimIdempotencyKey(bounded(other.id, 'k4', 300, user, 'key:k-of-user'))).toEqual({ state: 'full', retryAt: at(1000) })
          // Refused means not recorded: with the bound lifted, k4 is new.
          expect(await store.claimIdempotencyKey({ ...bounded(project.id, 'k4', 300, user), maxPerUser: undefined, fingerprint: 'f9' })).toEqual({ state: 'claimed' })
          await store.finishIdempotencyKey(bounded(project.id, 'k4', 300, user), null)
          // A key already stored still answers: replayed when done, running while running.
          await store.finishIdempotencyKey(bounded(project.id, 'k1', 0, user), answer)
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k1', 400, user))).toEqual({ state: 'done', fingerprint: 'f1', response: answer })
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k2', 400, user))).toEqual({ state: 'running', fingerprint: 'f1' })
          // Another user is not held by this one's records.
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k4', 400, unique('other-user')))).toEqual({ state: 'claimed' })
          // A released claim (its answer not kept) frees its slot.
          await store.finishIdempotencyKey(bounded(other.id, 'k3', 200, user, 'key:k-of-user'), null)
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k5', 500, user))).toEqual({ state: 'claimed' })
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k6', 500, user))).toEqual({ state: 'full', retryAt: at(1000) })
          // Once k1 has expired, a new key fits again.
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k6', 1000, user))).toEqual({ state: 'claimed' })
          expect(await store.claimIdempotencyKey(bounded(project.id, 'k7', 1000, user))).toMatchObject({ state: 'full' })
        })

        it('lets exactly maxPerUser of 10 simultaneous new keys through', async () => {
          const project = await newProject()
          const user = unique('racer')
          const states = await Promise.all(Array.from({ length: 10 }, (_, i) => store.claimIdempotencyKey(bounded(project.id, `r${i}`, 0, user))))
          expect(states.filter(s => s.state === 'claimed')).toHaveLength(3)
          expect(states.filter(s => s.state === 'full')).toHaveLength(7)
        })
      })

      it('gives exactly one of 20 simultaneous claims of a key', async () => {
        const project = await newProject()
        const states = await Promise.all(Array.from({ length: 20 }, () => store.claimIdempotencyKey(claimOf(project.id, 'race'))))
        expect(states.filter(s => s.state === 'claimed')).toHaveLength(1)
        expect(states.filter(s => s.state === 'running')).toHaveLength(19)
      })
    })
  })

  describe('concurrency', () => {
    it('500 simultaneous increments all count: 500, version 500, notified in version order', async () => {
      const project = await newProject()
      const results = await Promise.all(Array.from({ length: 500 }, () => apply(project, inc('hits'))))
      expect(results.map(r => r.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1))
      expect(await content(project)).toEqual({ version: 500, content: { hits: 500 } })
      expect(changesOf(project.id).map(c => c.entry.version)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1))
    })

    it('100 concurrent pushes keep every element', async () => {
      const project = await newProject()
      await Promise.all(Array.from({ length: 100 }, (_, i) => apply(project, push('log', i))))
      const after = await content(project)
      expect(after.version).toBe(100)
      const log = after.content.log as number[]
      expect(log).toHaveLength(100)
      expect([...log].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i))
    })

    it('succeeding and failing operations sent together each get their own outcome; failures change nothing', async () => {
      const project = await newProject()
      await apply(project, { op: 'update', value: { n: 0, text: 'hello', list: [] } })
      const batch: Array<{ operation: Operation, options?: { ifMatch: number[] }, code?: ErrorCode }> = [
        { operation: inc('n', 1) },
        { operation: inc('text'), code: 'NOT_A_NUMBER' },
        { operation: push('list', 'a') },
        { operation: push('n', 'x'), code: 'NOT_AN_ARRAY' },
        { operation: inc('n', 10) },
        { operation: inc('n', 100), options: { ifMatch: [0] }, code: 'PRECONDITION_FAILED' },
        { operation: set('text.deep', 1), code: 'PATH_CONFLICT' },
        { operation: inc('n', 1000) },
        { operation: set('huge', 'x'.repeat(CONTRACT_CONTENT_LIMIT * 2)), code: 'CONTENT_TOO_LARGE' },
        { operation: push('list', 'b') }
      ]
      // All submitted in the same tick, before any settles.
      const settled = await Promise.allSettled(batch.map(b => apply(project, b.operation, b.options)))
      const versions: number[] = []
      settled.forEach((result, i) => {
        const expected = batch[i]!
        const label = `batch item ${i} (${expected.operation.op})`
        if (expected.code) {
          expect(result.status, label).toBe('rejected')
          const reason = (result as PromiseRejectedResult).reason as unknown
          expect(reason, label).toBeInstanceOf(ContentdError)
          expect((reason as ContentdError).code, label).toBe(expected.code)
        } else {
          expect(result.status, label).toBe('fulfilled')
          versions.push((result as PromiseFulfilledResult<{ version: number }>).value.version)
        }
      })
      expect(versions.sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6])
      const after = await content(project)
      expect(after.version).toBe(6)
      expect(after.content.n).toBe(1011)
      expect(after.content.text).toBe('hello')
      expect([...(after.content.list as string[])].sort()).toEqual(['a', 'b'])
      expect(Object.keys(after.content).sort()).toEqual(['list', 'n', 'text'])
      expect(changesOf(project.id).map(c => c.entry.version)).toEqual([1, 2, 3, 4, 5, 6])
    })
  })

  webhookContract({ store: () => store, newProject: () => newProject() })
})

describe('sqlite: two stores on one data directory (like two processes)', () => {
  let dataDir: string
  let first: SqliteStore
  let second: SqliteStore

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'contentd-contract-shared-'))
    // Caches on: each must notice the other's writes by version, never serve a stale document.
    // One process here, so one commit counter for both (see lookup-cache.ts).
    const commits = new CommitCounter()
    first = new SqliteStore({ dataDir, contentLimitBytes: CONTRACT_CONTENT_LIMIT, cacheBytes: 16 * 1024 * 1024, history: DEFAULT_HISTORY, commits })
    second = new SqliteStore({ dataDir, contentLimitBytes: CONTRACT_CONTENT_LIMIT, cacheBytes: 16 * 1024 * 1024, history: DEFAULT_HISTORY, commits })
  })
  afterAll(async () => {
    await first?.close()
    await second?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('interleaving 200 increments each ends at exactly 400, and each sees the other\'s writes', async () => {
    const owner = userRecord()
    await first.createUser(owner)
    const created = await first.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: 'shared', name: 'Shared', createdAt: new Date().toISOString() })
    const seenBySecond = await second.findProject(owner.username, 'shared')
    expect(seenBySecond).toEqual(created)
    const notified = { first: 0, second: 0 }
    first.onCommit(() => { notified.first += 1 })
    second.onCommit(() => { notified.second += 1 })

    // Strict alternation: every write must be visible to the other store at once.
    for (let i = 0; i < 100; i++) {
      const a = await first.applyOperation(created, inc('n'), AS_TEST)
      expect(await second.readContent(created.id), `second after first's write ${a.version}`).toMatchObject({ version: a.version, content: { n: a.version } })
      const b = await second.applyOperation(seenBySecond!, inc('n'), AS_TEST)
      expect(b.version, 'versions continue across stores').toBe(a.version + 1)
      expect(await first.readContent(created.id), `first after second's write ${b.version}`).toMatchObject({ version: b.version, content: { n: b.version } })
    }
    // Then both at once: 100 more each submitted in the same tick, two batches racing.
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0 ? first.applyOperation(created, inc('n'), AS_TEST) : second.applyOperation(seenBySecond!, inc('n'), AS_TEST)))
    expect(results.map(r => r.version).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => 201 + i))

    for (const store of [first, second]) {
      const snapshot = await store.readContent(created.id)
      expect(snapshot?.version).toBe(400)
      expect(snapshot?.content).toEqual({ n: 400 })
    }
    expect((await second.findProject(owner.username, 'shared'))?.version).toBe(400)
    // Each store notifies its own commits only; other processes' changes travel via Redis.
    expect(notified).toEqual({ first: 200, second: 200 })
  })

  it('a schema set through one store applies to writes through the other at once', async () => {
    const owner = userRecord()
    await first.createUser(owner)
    const project = await first.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: 'schema-shared', name: 'S', createdAt: new Date().toISOString() })
    await second.applyOperation(project, set('n', 1), AS_TEST)
    await first.putSchema(project.id, { revision: randomUUID(), schema: { properties: { n: { maximum: 1 } } }, setBy: '@x', setAt: new Date().toISOString() })
    await expectCode(second.applyOperation(project, inc('n'), AS_TEST), 'SCHEMA_VIOLATION', 'write through the other store')
    expect(await second.getSchema(project.id)).toMatchObject({ schema: { properties: { n: { maximum: 1 } } } })
    expect(await first.deleteSchema(project.id)).toBe(true)
    await second.applyOperation(project, inc('n'), AS_TEST)
    expect(await first.readContent(project.id)).toMatchObject({ version: 2, content: { n: 2 } })
  })

  it('a project deleted through one store is gone for the other', async () => {
    const owner = userRecord()
    await first.createUser(owner)
    const project = await first.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: 'doomed', name: 'Doomed', createdAt: new Date().toISOString() })
    await second.applyOperation(project, set('a', 1), AS_TEST)
    expect(await first.readContent(project.id)).toMatchObject({ version: 1, content: { a: 1 } })
    await second.deleteProject(project.id)
    expect(await first.readContent(project.id)).toBeNull()
    await expectCode(first.applyOperation(project, inc('n'), AS_TEST), 'PROJECT_NOT_FOUND', 'write through the other store')
  })
})
