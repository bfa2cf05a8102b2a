// The paginated lists (docs/api.md#lists-a-page-at-a-time): GET /api/keys, GET /api/projects,
// GET …/members and GET …/webhooks answer `{<items>, nextCursor}`, a page of at most `limit` (1–100, default
// 100; keys: also at most KEY_PAGE_SCOPE_BUDGET scoped projects named), every item exactly
// once across the pages, and 400 INVALID_QUERY for a bad limit or cursor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_PAGE_SCOPE_BUDGET } from '../../server/services/keys.js'
import { call, createKey, createProject, signup, type CallResult } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { expectErrorShape } from './scenario.js'
import { checkEveryResponseAgainstOpenApi } from './openapi-check.js'

checkEveryResponseAgainstOpenApi()

let app: TestApp
let owner: string
const OWNED = ['b', 'a', 'e', 'c', 'd']

beforeAll(async () => {
  app = await startTestApp()
  owner = await signup(app.url, 'pager')
  for (const slug of OWNED) await createProject(app.url, owner, slug)
  // Shared with pager by users whose names sort before and after "pager".
  for (const name of ['aardvark', 'zebra']) {
    const session = await signup(app.url, name)
    await createProject(app.url, session, 'shared')
    expect((await call(app.url, 'PUT', `/api/@${name}/shared/members/pager`, { token: session, body: { role: 'viewer' } })).status).toBe(200)
  }
  for (let i = 0; i < 5; i++) await createKey(app.url, owner, { name: `key-${i}`, permission: 'read', ...(i === 3 ? { projects: ['@pager/c', '@zebra/shared', '@pager/a'] } : {}) })
})
afterAll(async () => { await app.close() })

/** Every page of a list, with the sizes of the pages. */
async function pages (path: string, field: string, token: string, limit?: number): Promise<{ items: any[], sizes: number[] }> {
  const items: any[] = []
  const sizes: number[] = []
  let cursor: string | null = null
  do {
    const query: URLSearchParams = new URLSearchParams({ ...(limit !== undefined ? { limit: String(limit) } : {}), ...(cursor !== null ? { cursor } : {}) })
    const r: CallResult = await call(app.url, 'GET', `${path}${query.size > 0 ? `?${query}` : ''}`, { token })
    expect(r.status, r.text).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual([field, 'nextCursor'].sort())
    items.push(...r.body[field])
    sizes.push(r.body[field].length)
    cursor = r.body.nextCursor
    if (cursor !== null) expect(typeof cursor).toBe('string')
  } while (cursor !== null && sizes.length < 100)
  return { items, sizes }
}

describe('GET /api/keys', () => {
  it('pages through the keys oldest first, each once, without secrets; the default page holds them all', async () => {
    const { items, sizes } = await pages('/api/keys', 'keys', owner, 2)
    expect(sizes).toEqual([2, 2, 1])
    expect(items.map(k => k.name)).toEqual(['key-0', 'key-1', 'key-2', 'key-3', 'key-4'])
    for (const key of items) expect(Object.keys(key).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'name', 'ops', 'paths', 'permission', 'prefix', 'projects'])
    expect(items[3].projects).toEqual(['@pager/c', '@zebra/shared', '@pager/a'])
    expect(items[0].projects).toBeNull()
    const whole = await call(app.url, 'GET', '/api/keys', { token: owner })
    expect(whole.body.keys).toEqual(items)
    expect(whole.body.nextCursor).toBeNull()
    // A page exactly as long as what is left is the last: no empty page after it.
    expect((await pages('/api/keys', 'keys', owner, 5)).sizes).toEqual([5])
  })

  it('answers as res.json would: the JSON text JSON.stringify gives, its type and length; HEAD the same headers, no body', async () => {
    // The page is sent as text kept per key (server/services/keys.ts listJson), not through res.json.
    const r = await call(app.url, 'GET', '/api/keys?limit=2', { token: owner })
    expect(r.status).toBe(200)
    expect(r.text).toBe(JSON.stringify(r.body))
    expect(Object.keys(r.body)).toEqual(['keys', 'nextCursor'])
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(r.headers.get('content-length')).toBe(String(Buffer.byteLength(r.text)))
    expect(r.headers.get('etag')).toBeNull()
    const head = await fetch(`${app.url}/api/keys?limit=2`, { method: 'HEAD', headers: { authorization: `Bearer ${owner}` } })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(head.headers.get('content-length')).toBe(r.headers.get('content-length'))
    expect(await head.text()).toBe('')
  })

  it('a key whose scoped project is deleted lists the projects that remain', async () => {
    const session = await signup(app.url, 'scoper')
    await createProject(app.url, session, 'x')
    await createProject(app.url, session, 'y')
    await createKey(app.url, session, { name: 'scoped', permission: 'write', projects: ['@scoper/y', '@scoper/x'] })
    expect((await call(app.url, 'DELETE', '/api/@scoper/y', { token: session })).status).toBe(200)
    expect((await call(app.url, 'GET', '/api/keys', { token: session })).body.keys[0].projects).toEqual(['@scoper/x'])
  })
})

describe('GET /api/keys with widely scoped keys', () => {
  it(`a page names at most ${KEY_PAGE_SCOPE_BUDGET} scoped projects: shorter pages, yet every key once, in order`, async () => {
    const session = await signup(app.url, 'wide')
    const refs: string[] = []
    for (let i = 0; i < 100; i++) {
      await createProject(app.url, session, `w${i}`)
      refs.push(`@wide/w${i}`)
    }
    // 100 projects each for 13 keys, then 3 unscoped and 2 scoped to one project.
    const made: string[] = []
    for (let i = 0; i < 18; i++) {
      const projects = i < 13 ? refs : i < 16 ? undefined : [refs[i] as string]
      made.push((await createKey(app.url, session, { name: `w${i}`, permission: 'read', ...(projects ? { projects } : {}) })).id)
    }
    const { items, sizes } = await pages('/api/keys', 'keys', session, 100)
    expect(items.map(k => k.id)).toEqual(made)
    // Keys of 100 projects, KEY_PAGE_SCOPE_BUDGET / 100 a page; then the last one with the small ones.
    const wide = KEY_PAGE_SCOPE_BUDGET / 100
    expect(sizes).toEqual([...Array.from({ length: Math.floor(13 / wide) }, () => wide), 13 % wide + 5])
    for (const limit of [1, 3, 7, 12]) {
      const paged = await pages('/api/keys', 'keys', session, limit)
      expect(paged.items.map(k => k.id), `limit ${limit}`).toEqual(made)
      let at = 0
      for (const size of paged.sizes) {
        const scoped = paged.items.slice(at, at + size).reduce((sum, k) => sum + ((k.projects as string[] | null)?.length ?? 0), 0)
        expect(size <= limit && (size === 1 || scoped <= KEY_PAGE_SCOPE_BUDGET), `limit ${limit}: ${paged.sizes.join(',')}`).toBe(true)
        at += size
      }
    }
    for (const key of items.slice(0, 13)) expect(key.projects).toEqual(refs)
  })
})

describe('GET /api/projects', () => {
  const expected = ['@aardvark/shared', '@pager/a', '@pager/b', '@pager/c', '@pager/d', '@pager/e', '@zebra/shared']

  it('pages through owned and shared projects by owner then slug, each once, with the role in each', async () => {
    for (const limit of [1, 3, 7, 100]) {
      const { items, sizes } = await pages('/api/projects', 'projects', owner, limit)
      expect(items.map(p => `${p.username}/${p.slug}`), `limit ${limit}`).toEqual(expected)
      expect(sizes.every(size => size <= limit)).toBe(true)
    }
    const { items } = await pages('/api/projects', 'projects', owner)
    expect(items.map(p => p.role)).toEqual(['viewer', 'owner', 'owner', 'owner', 'owner', 'owner', 'viewer'])
  })

  it('with a scoped API key, pages through the key\'s projects only', async () => {
    const { key } = await createKey(app.url, owner, { name: 'lister', permission: 'read', projects: ['@zebra/shared', '@pager/d', '@aardvark/shared'] })
    const { items, sizes } = await pages('/api/projects', 'projects', key, 2)
    expect(items.map(p => `${p.username}/${p.slug}`)).toEqual(['@aardvark/shared', '@pager/d', '@zebra/shared'])
    expect(sizes).toEqual([2, 1])
    const { key: everything } = await createKey(app.url, owner, { name: 'all', permission: 'read' })
    expect((await pages('/api/projects', 'projects', everything, 4)).items.map(p => `${p.username}/${p.slug}`)).toEqual(expected)
  })
})

describe('GET /api/:username/:projectSlug/members', () => {
  it('pages through the members by username, each once', async () => {
    const session = await signup(app.url, 'crowd')
    await createProject(app.url, session, 'party')
    const names = ['m-c', 'm-a', 'm-e', 'm-b', 'm-d']
    for (const name of names) {
      await signup(app.url, name)
      expect((await call(app.url, 'PUT', `/api/@crowd/party/members/${name}`, { token: session, body: { role: 'editor' } })).status).toBe(200)
    }
    const { items, sizes } = await pages('/api/@crowd/party/members', 'members', session, 2)
    expect(items).toEqual([...names].sort().map(name => ({ username: `@${name}`, role: 'editor' })))
    expect(sizes).toEqual([2, 2, 1])
  })
})

describe('GET /api/:username/:projectSlug/webhooks (docs/design.md §13b)', () => {
  it('pages through the webhooks oldest first, each once, without secrets', async () => {
    const urls = ['c', 'a', 'e', 'b', 'd'].map(name => `https://93.184.215.14/${name}`)
    for (const url of urls) expect((await call(app.url, 'POST', '/api/@pager/b/webhooks', { token: owner, body: { url } })).status).toBe(201)
    const { items, sizes } = await pages('/api/@pager/b/webhooks', 'webhooks', owner, 2)
    expect(sizes).toEqual([2, 2, 1])
    // Each once, oldest first (two made in one millisecond are ordered by id).
    expect(items.map(w => w.url).sort()).toEqual([...urls].sort())
    expect(items.map(w => [w.createdAt, w.id])).toEqual(items.map(w => [w.createdAt, w.id]).sort())
    expect(JSON.stringify(items)).not.toMatch(/secret/i)
    const whole = await call(app.url, 'GET', '/api/@pager/b/webhooks', { token: owner })
    expect(whole.body).toEqual({ webhooks: items, nextCursor: null })
    expect((await pages('/api/@pager/b/webhooks', 'webhooks', owner, 5)).sizes).toEqual([5])
  })
})

describe('bad page queries are 400 INVALID_QUERY', () => {
  const lists = ['/api/keys', '/api/projects', '/api/@pager/a/members', '/api/@pager/a/webhooks']

  it.each([
    ['limit=0'], ['limit=101'], ['limit=-1'], ['limit=abc'], ['limit=1.5'], ['limit='], ['limit=1&limit=2'], ['limit=1e2'],
    ['cursor='], ['cursor=not-a-cursor'], ['cursor=bm90IGpzb24'], ['cursor=a&cursor=b']
  ])('%s', async (query) => {
    for (const path of lists) {
      const r = await call(app.url, 'GET', `${path}?${query}`, { token: owner })
      expect(r.status, `${path}?${query}: ${r.text}`).toBe(400)
      expectErrorShape(r, 'INVALID_QUERY')
    }
  })

  it('a cursor from one list is refused by another', async () => {
    const keysCursor = (await call(app.url, 'GET', '/api/keys?limit=1', { token: owner })).body.nextCursor as string
    const projectsCursor = (await call(app.url, 'GET', '/api/projects?limit=1', { token: owner })).body.nextCursor as string
    expectErrorShape(await call(app.url, 'GET', `/api/projects?cursor=${keysCursor}`, { token: owner }), 'INVALID_QUERY')
    expectErrorShape(await call(app.url, 'GET', `/api/keys?cursor=${projectsCursor}`, { token: owner }), 'INVALID_QUERY')
  })

  it('access is checked before the query: a stranger asking for members with a bad limit gets 403', async () => {
    const stranger = await signup(app.url, 'stranger')
    expectErrorShape(await call(app.url, 'GET', '/api/@pager/a/members?limit=0', { token: stranger }), 'FORBIDDEN')
    expectErrorShape(await call(app.url, 'GET', '/api/keys?limit=0'), 'AUTH_REQUIRED')
  })
})
