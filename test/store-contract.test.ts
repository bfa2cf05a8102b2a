// The ONE store conformance suite: the same tests, through the Store interface only, against
// every available store (test/support/stores.ts). A store that passes behaves like the
// others for the HTTP layer, the realtime layer and the operation semantics.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ContentdError, type ErrorCode } from '../shared/errors.js'
import type { JsonObject } from '../shared/json.js'
import type { Operation } from '../shared/operations.js'
import { CommitCounter } from '../server/store/sqlite/lookup-cache.js'
import { SqliteStore } from '../server/store/sqlite/sqlite-store.js'
import type { ApiKeyRecord, CommittedChange, ProjectRecord, SchemaRecord, Store, UserRecord } from '../server/store/types.js'
import { isSameJson, OPERATION_CASES, toOperation, type OperationCase } from './cases/operation-cases.js'
import { CONTRACT_CONTENT_LIMIT, storeFactories, type StoreUnderTest } from './support/stores.js'

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

  async function newUser (): Promise<UserRecord> {
    const user = userRecord()
    await store.createUser(user)
    return user
  }

  async function newProject (owner?: UserRecord): Promise<ProjectRecord> {
    const user = owner ?? await newUser()
    return store.createProject({ id: randomUUID(), ownerId: user.id, ownerName: user.username, slug: unique('p'), name: 'A project', createdAt: new Date().toISOString() })
  }

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
      expect(byId(await store.listApiKeys(alice.id))).toEqual(byId([scoped, unscoped]))
      expect(await store.listApiKeys(bob.id)).toEqual([bobs])
      expect(await store.listApiKeys(randomUUID())).toEqual([])
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
      expect(await store.listApiKeys(alice.id)).toEqual([])
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

    it('finds projects by ids, skipping unknown ones, with their current versions', async () => {
      const a = await newProject()
      const b = await newProject()
      await store.applyOperation(b, inc('n'))
      const found = await store.findProjectsByIds([a.id, randomUUID(), b.id])
      expect(byId(found)).toEqual(byId([a, { ...b, version: 1 }]))
      expect(await store.findProjectsByIds([])).toEqual([])
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
      const listed = await store.listProjectsForUser(me.id)
      expect(byId(listed)).toEqual(byId([
        { ...mine, role: 'owner' },
        { ...viewed, role: 'viewer' },
        { ...edited, role: 'editor' }
      ]))
      expect(listed.map(p => p.id)).not.toContain(unrelated.id)
      expect(await store.listProjectsForUser((await newUser()).id)).toEqual([])
    })

    it('deleting a project removes it, its content and its members; the slug can be used again from scratch', async () => {
      const owner = await newUser()
      const member = await newUser()
      const project = await newProject(owner)
      await store.setMember(project.id, member.id, 'editor')
      await store.applyOperation(project, set('secret', 'old data'))
      await store.deleteProject(project.id)
      expect(await store.findProject(owner.username, project.slug)).toBeNull()
      expect(await store.findProjectsByIds([project.id])).toEqual([])
      expect(await store.readContent(project.id)).toBeNull()
      expect(await store.findMemberRole(project.id, member.id)).toBeNull()
      expect(await store.listMembers(project.id)).toEqual([])
      expect(await store.listProjectsForUser(member.id)).toEqual([])
      expect(await store.listProjectsForUser(owner.id)).toEqual([])
      const reborn = await store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: project.slug, name: 'Again', createdAt: new Date().toISOString() })
      expect(await store.readContent(reborn.id)).toMatchObject({ version: 0, content: {} })
      expect(await store.listMembers(reborn.id)).toEqual([])
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
      const members = await store.listMembers(project.id)
      expect([...members].sort((a, b) => a.userId.localeCompare(b.userId))).toEqual([
        { userId: ann.id, username: ann.username, role: 'editor' },
        { userId: ben.id, username: ben.username, role: 'viewer' }
      ].sort((a, b) => a.userId.localeCompare(b.userId)))
      expect(await store.removeMember(project.id, ann.id)).toBe(true)
      expect(await store.removeMember(project.id, ann.id), 'removing twice').toBe(false)
      expect(await store.findMemberRole(project.id, ann.id)).toBeNull()
      expect(await store.listMembers(project.id)).toEqual([{ userId: ben.id, username: ben.username, role: 'viewer' }])
      expect(await store.findMemberRole(project.id, (await newUser()).id)).toBeNull()
    })
  })

  describe('operation cases (test/cases/operation-cases.ts)', () => {
    it.each(STORE_CASES)('$name', async (c) => {
      const project = await newProject()
      // The starting content goes in as an update, so it is version 1 on every store.
      await store.applyOperation(project, { op: 'update', value: structuredClone(c.before) })
      const operation = toOperation(c)
      const notifiedBefore = changesOf(project.id).length
      if ('content' in c.expect) {
        expect(await store.applyOperation(project, operation)).toEqual({ version: 2 })
        const after = await content(project)
        expect(after.content).toEqual(c.expect.content)
        expect(isSameJson(after.content, c.expect.content), 'same JSON types and own keys').toBe(true)
        expect(after.version).toBe(2)
        expect(changesOf(project.id).length - notifiedBefore, 'one notification').toBe(1)
      } else {
        await expectCode(store.applyOperation(project, operation), c.expect.code, c.name)
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
      expect(await store.applyOperation(project, set('a', 'text'))).toEqual({ version: 1 })
      expect(await store.applyOperation(project, inc('n'))).toEqual({ version: 2 })
      await expectCode(store.applyOperation(project, inc('a')), 'NOT_A_NUMBER', 'increment a string')
      await expectCode(store.applyOperation(project, push('a', 1)), 'NOT_AN_ARRAY', 'push onto a string')
      expect(await content(project)).toEqual({ version: 2, content: { a: 'text', n: 1 } })
      expect(await store.applyOperation(project, { op: 'delete', path: ['missing'] }), 'a delete of nothing still commits').toEqual({ version: 3 })
      expect((await store.findProject(project.ownerName, project.slug))?.version).toBe(3)
    })

    it('honours ifMatch: "*" and the current version pass, a stale one is PRECONDITION_FAILED and changes nothing', async () => {
      const project = await newProject()
      expect(await store.applyOperation(project, inc('n'), { ifMatch: '*' })).toEqual({ version: 1 })
      expect(await store.applyOperation(project, inc('n'), { ifMatch: [1] })).toEqual({ version: 2 })
      expect(await store.applyOperation(project, inc('n'), { ifMatch: [7, 2] }), 'one of several listed').toEqual({ version: 3 })
      await expectCode(store.applyOperation(project, inc('n'), { ifMatch: [2] }), 'PRECONDITION_FAILED', 'stale version')
      await expectCode(store.applyOperation(project, inc('n'), { ifMatch: [] }), 'PRECONDITION_FAILED', 'no version listed')
      expect(await content(project)).toEqual({ version: 3, content: { n: 3 } })
    })

    it('checks ifMatch before the operation itself: a stale condition wins over an operation error', async () => {
      const project = await newProject()
      await store.applyOperation(project, set('a', 'text'))
      await expectCode(store.applyOperation(project, inc('a'), { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale + wrong type')
    })

    it('answers PROJECT_NOT_FOUND once the project is deleted', async () => {
      const project = await newProject()
      await store.applyOperation(project, inc('n'))
      await store.deleteProject(project.id)
      await expectCode(store.applyOperation(project, inc('n')), 'PROJECT_NOT_FOUND', 'after delete')
      await expectCode(store.applyOperation(project, set('x', 1), { ifMatch: '*' }), 'PROJECT_NOT_FOUND', 'after delete, with ifMatch')
      expect(await store.readContent(project.id)).toBeNull()
    })

    it('gives out snapshots that later operations do not change', async () => {
      const project = await newProject()
      await store.applyOperation(project, set('list', [1]))
      const before = await store.readContent(project.id)
      await store.applyOperation(project, push('list', 2))
      await store.applyOperation(project, set('other', true))
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
      await store.applyOperation(project, set('small', 'ok'))
      await expectCode(store.applyOperation(project, set('huge', big(CONTRACT_CONTENT_LIMIT + 1024))), 'CONTENT_TOO_LARGE', 'one huge set')
      expect(await content(project)).toEqual({ version: 1, content: { small: 'ok' } })
    })

    it('refuses growth past the limit step by step, and still allows shrinking near it', async () => {
      const project = await newProject()
      const chunk = big(Math.floor(CONTRACT_CONTENT_LIMIT / 4))
      await store.applyOperation(project, set('a', chunk))
      await store.applyOperation(project, set('b', chunk))
      await store.applyOperation(project, push('list', chunk))
      await expectCode(store.applyOperation(project, push('list', chunk)), 'CONTENT_TOO_LARGE', 'the fourth quarter plus keys')
      await expectCode(store.applyOperation(project, set('c', chunk)), 'CONTENT_TOO_LARGE', 'another quarter')
      let after = await content(project)
      expect(after.version).toBe(3)
      expect(after.content).toEqual({ a: chunk, b: chunk, list: [chunk] })
      await store.applyOperation(project, { op: 'delete', path: ['a'] })
      await store.applyOperation(project, set('b', 'short'))
      await store.applyOperation(project, inc('count'))
      after = await content(project)
      expect(after).toEqual({ version: 6, content: { b: 'short', list: [chunk], count: 1 } })
      await store.applyOperation(project, set('c', chunk))
      expect((await content(project)).version).toBe(7)
    })

    it('refuses an update (whole-content replacement) over the limit', async () => {
      const project = await newProject()
      await store.applyOperation(project, { op: 'update', value: { keep: 'me' } })
      await expectCode(store.applyOperation(project, { op: 'update', value: { huge: big(CONTRACT_CONTENT_LIMIT + 1024) } }), 'CONTENT_TOO_LARGE', 'huge update')
      expect(await content(project)).toEqual({ version: 1, content: { keep: 'me' } })
      await store.applyOperation(project, { op: 'update', value: { replaced: [1, 2] } })
      expect(await content(project)).toEqual({ version: 2, content: { replaced: [1, 2] } })
    })
  })

  describe('commit notifications', () => {
    it('emits exactly one change per success, in version order, with the operation and project; none for failures', async () => {
      const project = await newProject()
      const operations: Operation[] = [set('a', { b: [1] }), inc('n', 5), push('a.b', 2), { op: 'delete', path: ['n'] }, { op: 'insert', path: ['a', 'b'], index: 0, value: 0 }]
      // Copied now: later operations must not reach back into values already notified.
      const expectedOperations = structuredClone(operations)
      await store.applyOperation(project, operations[0]!)
      await store.applyOperation(project, operations[1]!)
      await expectCode(store.applyOperation(project, inc('a')), 'NOT_A_NUMBER', 'failure in between')
      await expectCode(store.applyOperation(project, inc('n'), { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale in between')
      for (const operation of operations.slice(2)) await store.applyOperation(project, operation)
      const changes = changesOf(project.id)
      expect(changes.map(c => c.version)).toEqual([1, 2, 3, 4, 5])
      expect(changes.map(c => c.operation)).toEqual(expectedOperations)
      for (const change of changes) {
        expect(change.project.id).toBe(project.id)
        expect(change.project.slug).toBe(project.slug)
        expect(change.project.ownerName).toBe(project.ownerName)
        expect(Number.isNaN(Date.parse(change.at)), `at = ${change.at}`).toBe(false)
      }
      expect(await content(project)).toEqual({ version: 5, content: { a: { b: [0, 1, 2] } } })
    })

    it('emits nothing for a deleted project or an oversized change', async () => {
      const project = await newProject()
      await expectCode(store.applyOperation(project, set('huge', 'x'.repeat(CONTRACT_CONTENT_LIMIT * 2))), 'CONTENT_TOO_LARGE', 'oversized')
      await store.deleteProject(project.id)
      await expectCode(store.applyOperation(project, inc('n')), 'PROJECT_NOT_FOUND', 'deleted')
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
      await store.applyOperation(project, { op: 'update', value: { stock: { apples: 3 }, tags: ['fruit'] } })
      await store.putSchema(project.id, schemaRecord(INVENTORY))
      return project
    }

    it('stores, returns, replaces and removes a schema without touching content or version', async () => {
      const project = await newProject()
      await store.applyOperation(project, set('stock', { apples: 1 }))
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
      expect(changesOf(project.id).map(c => c.version)).toEqual([1])
    })

    it('refuses a schema the current content breaks: SCHEMA_VIOLATION 409 with the errors, nothing stored', async () => {
      const project = await newProject()
      await store.applyOperation(project, set('stock', { apples: 'lots' }))
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
      const refused = await violation(store.applyOperation(project, operation), operation.op)
      expect(refused.status).toBe(422)
      expect(refused.errors).toEqual([{ path, message: expect.any(String) }])
      expect(await content(project)).toEqual(before)
      expect(changesOf(project.id).map(c => c.version)).toEqual([1])
      // The document is intact for the next write (the refused one was undone, not half-applied).
      expect(await store.applyOperation(project, inc('stock.apples'))).toEqual({ version: 2 })
      expect((await content(project)).content).toEqual({ ...before.content, stock: { ...before.content.stock as object, apples: 4 } })
    })

    it('accepts writes that keep the content valid, and checks nothing once the schema is removed', async () => {
      const project = await inventoryProject()
      await store.applyOperation(project, set('stock.pears', 2))
      await store.applyOperation(project, push('tags', 'red'))
      await store.applyOperation(project, { op: 'delete', path: ['tags', '0'] })
      await store.applyOperation(project, { op: 'update', value: { stock: {}, title: 'Shop' } })
      expect(await content(project)).toEqual({ version: 5, content: { stock: {}, title: 'Shop' } })
      await store.deleteSchema(project.id)
      await store.applyOperation(project, set('stock', 'anything'))
      expect((await content(project)).content).toEqual({ stock: 'anything', title: 'Shop' })
    })

    it('applies a replaced schema from the next write on', async () => {
      const project = await inventoryProject()
      await store.applyOperation(project, set('title', 'x'.repeat(10)))
      await store.putSchema(project.id, schemaRecord({ ...INVENTORY, properties: { ...INVENTORY.properties, title: { type: 'string', maxLength: 10 } } }))
      await violation(store.applyOperation(project, set('title', 'x'.repeat(11))), 'longer title')
      await store.applyOperation(project, set('title', 'short'))
      expect((await content(project)).content.title).toBe('short')
    })

    it('checks each of many simultaneous writes on its own: exactly those within the schema commit', async () => {
      const project = await newProject()
      await store.applyOperation(project, set('votes', 0))
      await store.putSchema(project.id, schemaRecord({ properties: { votes: { type: 'integer', maximum: 25 } } }))
      const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => store.applyOperation(project, inc('votes'))))
      const refused = outcomes.filter(o => o.status === 'rejected').map(o => (o.reason as ContentdError).code)
      expect(outcomes.filter(o => o.status === 'fulfilled')).toHaveLength(25)
      expect(refused).toEqual(Array.from({ length: 15 }, () => 'SCHEMA_VIOLATION'))
      expect(await content(project)).toEqual({ version: 26, content: { votes: 25 } })
    })

    it('forgets the schema of a deleted project', async () => {
      const project = await inventoryProject()
      await store.deleteProject(project.id)
      expect(await store.getSchema(project.id)).toBeNull()
    })
  })

  describe('concurrency', () => {
    it('500 simultaneous increments all count: 500, version 500, notified in version order', async () => {
      const project = await newProject()
      const results = await Promise.all(Array.from({ length: 500 }, () => store.applyOperation(project, inc('hits'))))
      expect(results.map(r => r.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1))
      expect(await content(project)).toEqual({ version: 500, content: { hits: 500 } })
      expect(changesOf(project.id).map(c => c.version)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1))
    })

    it('100 concurrent pushes keep every element', async () => {
      const project = await newProject()
      await Promise.all(Array.from({ length: 100 }, (_, i) => store.applyOperation(project, push('log', i))))
      const after = await content(project)
      expect(after.version).toBe(100)
      const log = after.content.log as number[]
      expect(log).toHaveLength(100)
      expect([...log].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i))
    })

    it('succeeding and failing operations sent together each get their own outcome; failures change nothing', async () => {
      const project = await newProject()
      await store.applyOperation(project, { op: 'update', value: { n: 0, text: 'hello', list: [] } })
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
      const settled = await Promise.allSettled(batch.map(b => store.applyOperation(project, b.operation, b.options)))
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
      expect(changesOf(project.id).map(c => c.version)).toEqual([1, 2, 3, 4, 5, 6])
    })
  })
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
    first = new SqliteStore({ dataDir, contentLimitBytes: CONTRACT_CONTENT_LIMIT, cacheBytes: 16 * 1024 * 1024, commits })
    second = new SqliteStore({ dataDir, contentLimitBytes: CONTRACT_CONTENT_LIMIT, cacheBytes: 16 * 1024 * 1024, commits })
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
      const a = await first.applyOperation(created, inc('n'))
      expect(await second.readContent(created.id), `second after first's write ${a.version}`).toMatchObject({ version: a.version, content: { n: a.version } })
      const b = await second.applyOperation(seenBySecond!, inc('n'))
      expect(b.version, 'versions continue across stores').toBe(a.version + 1)
      expect(await first.readContent(created.id), `first after second's write ${b.version}`).toMatchObject({ version: b.version, content: { n: b.version } })
    }
    // Then both at once: 100 more each submitted in the same tick, two batches racing.
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0 ? first.applyOperation(created, inc('n')) : second.applyOperation(seenBySecond!, inc('n'))))
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
    await second.applyOperation(project, set('n', 1))
    await first.putSchema(project.id, { revision: randomUUID(), schema: { properties: { n: { maximum: 1 } } }, setBy: '@x', setAt: new Date().toISOString() })
    await expectCode(second.applyOperation(project, inc('n')), 'SCHEMA_VIOLATION', 'write through the other store')
    expect(await second.getSchema(project.id)).toMatchObject({ schema: { properties: { n: { maximum: 1 } } } })
    expect(await first.deleteSchema(project.id)).toBe(true)
    await second.applyOperation(project, inc('n'))
    expect(await first.readContent(project.id)).toMatchObject({ version: 2, content: { n: 2 } })
  })

  it('a project deleted through one store is gone for the other', async () => {
    const owner = userRecord()
    await first.createUser(owner)
    const project = await first.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: 'doomed', name: 'Doomed', createdAt: new Date().toISOString() })
    await second.applyOperation(project, set('a', 1))
    expect(await first.readContent(project.id)).toMatchObject({ version: 1, content: { a: 1 } })
    await second.deleteProject(project.id)
    expect(await first.readContent(project.id)).toBeNull()
    await expectCode(first.applyOperation(project, inc('n')), 'PROJECT_NOT_FOUND', 'write through the other store')
  })
})
