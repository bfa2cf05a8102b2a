// Issue 12, finding 1, by structure rather than by time: GET /api/keys looked up each key's
// scoped projects with one SQLite query per project (5,910 keys × 100 projects stalled every
// request for 5.8 s). Every list now costs a fixed number of statements per page, however
// much the caller owns (docs/design.md §13). The test counts the SQLite statements a request
// executes, by wrapping better-sqlite3's Statement methods in this process, and compares a
// tiny account with a large one: the counts must be equal. Before the fix the large account's
// key listing ran 1 + 100 × 40 statements.
import Database from 'better-sqlite3'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { KEY_PAGE_SCOPE_BUDGET } from '../../server/services/keys.js'
import { call, createKey, createProject, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

const EXECUTING = ['run', 'get', 'all', 'iterate'] as const

let app: TestApp
let small: string
let large: string

/** The SQL of every statement executed while `work` runs. */
async function statementsDuring (work: () => Promise<unknown>): Promise<string[]> {
  const probe = new Database(':memory:')
  const statementPrototype = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>
  probe.close()
  const executed: string[] = []
  for (const method of EXECUTING) {
    const original = statementPrototype[method] as (...args: unknown[]) => unknown
    vi.spyOn(statementPrototype, method).mockImplementation(function (this: { source: string }, ...args: unknown[]) {
      executed.push(this.source.replace(/\s+/g, ' ').trim())
      return original.apply(this, args)
    })
  }
  try {
    await work()
  } finally {
    vi.restoreAllMocks()
  }
  return executed
}

/** The statements of one GET, the second time it is asked (caches warm, as in steady use). */
async function statementsOf (path: string, token: string, field: string, expectedItems: number): Promise<string[]> {
  const get = async (): Promise<void> => {
    const r = await call(app.url, 'GET', path, { token })
    expect(r.status, r.text).toBe(200)
    expect(r.body[field]).toHaveLength(expectedItems)
  }
  await get()
  return statementsDuring(get)
}

const PROJECTS = 40
const KEYS = 100
const MEMBERS = 60

beforeAll(async () => {
  app = await startTestApp({ MAX_PROJECTS_PER_USER: String(PROJECTS) })
  small = await signup(app.url, 'small')
  large = await signup(app.url, 'large')
  await createProject(app.url, small, 'one')
  await createProject(app.url, small, 'two')
  await createKey(app.url, small, { name: 'k', permission: 'read', projects: ['@small/one', '@small/two'] })
  const refs: string[] = []
  for (let i = 0; i < PROJECTS; i++) {
    await createProject(app.url, large, `p${i}`)
    refs.push(`@large/p${i}`)
  }
  for (let i = 0; i < KEYS; i++) await createKey(app.url, large, { name: `k${i}`, permission: 'read', projects: refs })
  // Members straight into the store: argon2 for 60 signups would only slow the test down.
  const party = await app.store.findProject('large', 'p0')
  if (!party) throw new Error('no project @large/p0')
  for (let i = 0; i < MEMBERS; i++) {
    const id = `usr_member_${i}`
    await app.store.createUser({ id, username: `member-${i}`, passwordHash: 'x', createdAt: new Date().toISOString() })
    await app.store.setMember(party.id, id, 'viewer')
  }
  expect((await call(app.url, 'PUT', '/api/@small/one/members/large', { token: small, body: { role: 'editor' } })).status).toBe(200)
}, 60_000)
afterAll(async () => { await app?.close() })
afterEach(() => { vi.restoreAllMocks() })

describe('a list costs the same number of SQLite statements whatever the account holds (issue 12, finding 1)', () => {
  it(`GET /api/keys: ${KEYS} keys × ${PROJECTS} scoped projects cost what 1 key × 2 projects does`, async () => {
    const few = await statementsOf('/api/keys', small, 'keys', 1)
    // A page names at most KEY_PAGE_SCOPE_BUDGET scoped projects: 25 keys of 40 each.
    const many = await statementsOf('/api/keys', large, 'keys', KEY_PAGE_SCOPE_BUDGET / PROJECTS)
    expect(many, `statements for a page of keys:\n${many.join('\n')}`).toEqual(few)
    expect(few.length).toBeGreaterThan(0)
    expect(few.length).toBeLessThanOrEqual(3)
  })

  it(`GET /api/projects: ${PROJECTS} owned + 1 shared cost what 2 owned do`, async () => {
    const few = await statementsOf('/api/projects', small, 'projects', 2)
    const many = await statementsOf('/api/projects', large, 'projects', PROJECTS + 1)
    expect(many, `statements for ${PROJECTS + 1} projects:\n${many.join('\n')}`).toEqual(few)
    expect(few.length).toBeLessThanOrEqual(3)
  })

  it(`GET …/members: ${MEMBERS} members cost what 1 does`, async () => {
    const few = await statementsOf('/api/@small/one/members', small, 'members', 1)
    const many = await statementsOf('/api/@large/p0/members', large, 'members', MEMBERS)
    expect(many, `statements for ${MEMBERS} members:\n${many.join('\n')}`).toEqual(few)
    expect(few.length).toBeLessThanOrEqual(4)
  })

  it('a key page the server listed before reads the index only: no key row, no project name (the fairness scenario\'s walk)', async () => {
    const statements = await statementsOf('/api/keys?limit=100', large, 'keys', KEY_PAGE_SCOPE_BUDGET / PROJECTS)
    const keyStatements = statements.filter(sql => /api_keys/i.test(sql))
    expect(keyStatements, statements.join('\n')).toEqual(['SELECT created_at, id FROM api_keys WHERE user_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?'])
    expect(statements.filter(sql => /FROM projects|json_each/i.test(sql)), statements.join('\n')).toEqual([])
  })

  it('the counter sees statements: a key listing of the large account runs its page query', async () => {
    const statements = await statementsOf('/api/keys?limit=3', large, 'keys', 3)
    expect(statements.some(sql => /api_keys/i.test(sql))).toBe(true)
  })
})
