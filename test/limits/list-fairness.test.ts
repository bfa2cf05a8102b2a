// Issue 12, finding 1, at full scale against the real server process: one account with the
// most keys it may have (MAX_KEYS_PER_USER, 1000), each scoped to 100 projects, listed by
// three clients at once. Every client gets every key exactly once with all its projects, a
// page at a time, each page naming at most KEY_PAGE_SCOPE_BUDGET scoped projects; and the
// quota holds. How much a listing costs is asserted by structure in list-queries.test.ts
// (statements per request); whether it holds others up is measured by `npm run bench`'s
// fairness scenario, never by a timed test (an earlier version of this test bounded the
// event-loop stall, and failed on a loaded machine for reasons outside the server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_PAGE_SCOPE_BUDGET } from '../../server/services/keys.js'
import { call, signup, type CallResult } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

const PROJECTS = 100
// The default MAX_KEYS_PER_USER: the most keys one account may have.
const KEYS = 1000

let server: ServerProcess
let alice: string

beforeAll(async () => {
  server = await startServerProcess()
  alice = await signup(server.url, 'alice')
  const refs: string[] = []
  for (let i = 0; i < PROJECTS; i++) {
    expect((await call(server.url, 'POST', '/api/projects', { token: alice, body: { slug: `p${i}` } })).status).toBe(201)
    refs.push(`@alice/p${i}`)
  }
  let created = 0
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (created < KEYS) {
      created++
      const r = await call(server.url, 'POST', '/api/keys', { token: alice, body: { name: `k${created}`, permission: 'read', projects: refs } })
      expect(r.status, r.text).toBe(201)
    }
  }))
}, 120_000)
afterAll(async () => { await server?.stop() })

describe('listing one account\'s keys at full scale (issue 12, finding 1)', () => {
  it(`3 clients page through ${KEYS} keys × ${PROJECTS} scoped projects at once: each sees every key once, with all its projects`, async () => {
    const walkers = await Promise.allSettled(Array.from({ length: 3 }, async () => {
      const seen = new Map<string, number>()
      let cursor: string | null = null
      let pages = 0
      let listed = 0
      do {
        const r: CallResult = await call(server.url, 'GET', `/api/keys?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token: alice })
        expect(r.status, r.text).toBe(200)
        for (const key of r.body.keys as Array<{ id: string, projects: string[] }>) seen.set(key.id, key.projects.length)
        listed += (r.body.keys as unknown[]).length
        cursor = (r.body.nextCursor as string | null | undefined) ?? null
        pages++
      } while (cursor !== null && pages <= KEYS)
      return { seen, pages, listed }
    }))
    for (const walker of walkers) {
      if (walker.status === 'rejected') throw walker.reason
      const { seen, pages, listed } = walker.value
      // A page names at most KEY_PAGE_SCOPE_BUDGET scoped projects: 10 keys of 100 each.
      expect(pages).toBe(KEYS / (KEY_PAGE_SCOPE_BUDGET / PROJECTS))
      expect(seen.size).toBe(KEYS)
      expect(listed).toBe(KEYS)
      expect([...seen.values()].every(n => n === PROJECTS)).toBe(true)
    }
  }, 60_000)

  it('the keys quota holds: past MAX_KEYS_PER_USER a new key is 403 QUOTA_EXCEEDED and nothing is added', async () => {
    const refused = await call(server.url, 'POST', '/api/keys', { token: alice, body: { name: 'one too many', permission: 'read' } })
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body).toEqual({ code: 'QUOTA_EXCEEDED', message: expect.stringContaining('at most 1000 API keys') })
    const names = await allKeyNames()
    expect(names).toHaveLength(KEYS)
    expect(names).not.toContain('one too many')
  })
})

async function allKeyNames (): Promise<string[]> {
  const names: string[] = []
  let cursor: string | null = null
  do {
    const r = await call(server.url, 'GET', `/api/keys${cursor ? `?cursor=${cursor}` : ''}`, { token: alice })
    expect(r.status).toBe(200)
    names.push(...(r.body.keys as Array<{ name: string }>).map(k => k.name))
    cursor = r.body.nextCursor as string | null
  } while (cursor !== null)
  return names
}
