// What every file of the store contract suite shares (test/store-contract/*.test.ts): the
// records it makes, its expectations, and one store per factory and file with every change
// it committed. Each file holds one concern of the Store interface (server/store/types.ts),
// run against every available store (test/support/stores.ts).
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect } from 'vitest'
import { ContentdError, type ErrorCode } from '../../shared/errors.js'
import type { JsonObject } from '../../shared/json.js'
import type { Operation } from '../../shared/operations.js'
import type {
  ApiKeyRecord, ApplyOptions, CommittedChange, KeyPosition, ListedApiKey, MemberRecord, PageRequest, ProjectRecord, ProjectRole, Store,
  StoreOperation, UserRecord
} from '../../server/store/types.js'
import { OPERATION_CASES, toOperation, type OperationCase } from '../cases/operation-cases.js'
import type { StoreFactory, StoreUnderTest } from '../support/stores.js'

let serial = 0
/** A name no other test in this run uses: tests share one store per factory. */
export function unique (prefix: string): string {
  serial += 1
  return `${prefix}-${serial}-${randomUUID().slice(0, 8)}`
}

export function userRecord (username = unique('u')): UserRecord {
  return { id: randomUUID(), username, passwordHash: `hash-of-${username}`, createdAt: new Date().toISOString() }
}

export function keyRecord (userId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
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
export async function expectCode (promise: Promise<unknown>, code: ErrorCode, what = ''): Promise<void> {
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
export const AS_TEST: ApplyOptions = { actor: { type: 'user', name: '@contract-suite' } }

/**
 * Every item of a store list, read `pageSize` at a time as the services do (each page after
 * the last item of the one before); checks no page is longer than asked for.
 */
export async function readAllPages<T, P> (read: (page: PageRequest<P>) => Promise<T[]>, positionOf: (item: T) => P, pageSize = 2): Promise<T[]> {
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

export const keyPosition = (k: ApiKeyRecord): KeyPosition => ({ createdAt: k.createdAt, id: k.id })
export const projectPosition = (p: ProjectRecord) => ({ ownerName: p.ownerName, slug: p.slug })
export const FIRST = { after: null, limit: 100 }

export const byId = <T extends { id: string }>(items: T[]): T[] => [...items].sort((a, b) => a.id.localeCompare(b.id))

export const inc = (path: string, value = 1): Operation => ({ op: 'increment', path: path.split('.'), value })
export const push = (path: string, value: JsonObject[string]): Operation => ({ op: 'push', path: path.split('.'), value })
export const set = (path: string, value: JsonObject[string]): Operation => ({ op: 'set', path: path.split('.'), value })

/** Cases the request layer already rejects (bad path, body or amount) never reach a store. */
export function rejectedBeforeStore (c: OperationCase): boolean {
  try {
    toOperation(c)
    return false
  } catch {
    return true
  }
}
export const STORE_CASES = OPERATION_CASES.filter(c => !rejectedBeforeStore(c))
export const REQUEST_CASES = OPERATION_CASES.filter(rejectedBeforeStore)

/**
 * One store of `factory` for the describe block this is called in (opened before its tests,
 * removed after), with the helpers every concern uses. `store` is set once the store is open,
 * and `opened` told of it (a file's tests name it `store`).
 */
export function contractStore (factory: StoreFactory, opened?: (store: Store) => void) {
  let sut: StoreUnderTest | undefined
  /** Every change every test committed, in the order the store reported them. */
  const committed: CommittedChange[] = []
  const suite = {
    store: undefined as unknown as Store,
    committed,
    changesOf: (projectId: string): CommittedChange[] => committed.filter(c => c.project.id === projectId),
    /** Every write of this suite, as a test user unless a test names another actor. */
    apply: (project: ProjectRecord, operation: StoreOperation, options: Partial<ApplyOptions> = {}) =>
      suite.store.applyOperation(project, operation, { ...AS_TEST, ...options }),
    async newUser (): Promise<UserRecord> {
      const user = userRecord()
      await suite.store.createUser(user)
      return user
    },
    async newProject (owner?: UserRecord): Promise<ProjectRecord> {
      const user = owner ?? await suite.newUser()
      return suite.store.createProject({ id: randomUUID(), ownerId: user.id, ownerName: user.username, slug: unique('p'), name: 'A project', createdAt: new Date().toISOString() })
    },
    allKeys: (userId: string, pageSize?: number): Promise<ListedApiKey[]> =>
      readAllPages(page => suite.store.listApiKeys(userId, page), keyPosition, pageSize),
    allProjects: (userId: string, scope: string[] | null = null, pageSize?: number): Promise<Array<ProjectRecord & { role: ProjectRole }>> =>
      readAllPages(page => suite.store.listProjectsForUser(userId, page, scope), projectPosition, pageSize),
    allMembers: (projectId: string, pageSize?: number): Promise<MemberRecord[]> =>
      readAllPages<MemberRecord, string>(page => suite.store.listMembers(projectId, page), m => m.username, pageSize),
    /** A key as listed: with the names of its scoped projects. */
    listed: (key: ApiKeyRecord, projects: ProjectRecord[] | null = null): ListedApiKey =>
      ({ ...key, projectNames: projects === null ? null : projects.map(p => ({ ownerName: p.ownerName, slug: p.slug })) }),
    async content (project: ProjectRecord): Promise<{ version: number, content: JsonObject }> {
      const snapshot = await suite.store.readContent(project.id)
      expect(snapshot, `content of ${project.slug}`).not.toBeNull()
      return { version: snapshot!.version, content: structuredClone(snapshot!.content) }
    }
  }
  beforeAll(async () => {
    sut = await factory.create()
    suite.store = sut.store
    suite.store.onCommit(change => committed.push(change))
    opened?.(suite.store)
  })
  afterAll(async () => { await sut?.cleanup() })
  return suite
}
