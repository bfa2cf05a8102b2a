// MAX_KEYS_PER_USER and MAX_PROJECTS_PER_USER (docs/design.md §13): the limit passes, one
// past it is 403 QUOTA_EXCEEDED and adds nothing; a deleted key or project frees its place;
// memberships in other people's projects do not count. And the count cannot be raced: two
// server processes on one SQLite file, 40 creates at once, exactly the quota succeeds.
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectErrorShape } from '../api/scenario.js'
import { call, createKey, createProject, signup, type CallResult } from '../support/http.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

async function all (url: string, token: string, list: 'keys' | 'projects'): Promise<Array<{ id?: string, slug?: string, name: string }>> {
  const items = []
  let cursor: string | null = null
  do {
    const r: CallResult = await call(url, 'GET', `/api/${list}${cursor ? `?cursor=${cursor}` : ''}`, { token })
    expect(r.status).toBe(200)
    items.push(...r.body[list])
    cursor = r.body.nextCursor
  } while (cursor !== null)
  return items
}

describe('quotas over HTTP', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp({ MAX_KEYS_PER_USER: '3', MAX_PROJECTS_PER_USER: '2' }) })
  afterAll(async () => { await app.close() })

  it('MAX_PROJECTS_PER_USER: 2 projects, the third is 403 QUOTA_EXCEEDED; memberships do not count; deleting frees a place', async () => {
    const owner = await signup(app.url, 'quota-owner')
    const friend = await signup(app.url, 'quota-friend')
    await createProject(app.url, friend, 'theirs')
    expect((await call(app.url, 'PUT', '/api/@quota-friend/theirs/members/quota-owner', { token: friend, body: { role: 'editor' } })).status).toBe(200)
    await createProject(app.url, owner, 'one')
    await createProject(app.url, owner, 'two')
    const refused = await call(app.url, 'POST', '/api/projects', { token: owner, body: { slug: 'three' } })
    expect(refused.status).toBe(403)
    expectErrorShape(refused, 'QUOTA_EXCEEDED')
    expect(refused.body.message).toBe('This account has reached its limit: a user may have at most 2 projects')
    expect((await call(app.url, 'GET', '/api/@quota-owner/three', { token: owner })).body.code).toBe('PROJECT_NOT_FOUND')
    expect((await all(app.url, owner, 'projects')).map(p => p.slug).sort()).toEqual(['one', 'theirs', 'two'])
    expect((await call(app.url, 'DELETE', '/api/@quota-owner/one', { token: owner })).status).toBe(200)
    expect((await call(app.url, 'POST', '/api/projects', { token: owner, body: { slug: 'three' } })).status).toBe(201)
  })

  it('MAX_KEYS_PER_USER: 3 keys, the fourth is 403 QUOTA_EXCEEDED; revoking frees a place; another user is not affected', async () => {
    const session = await signup(app.url, 'quota-keys')
    const made = []
    for (let i = 0; i < 3; i++) made.push(await createKey(app.url, session, { name: `k${i}`, permission: 'read' }))
    const refused = await call(app.url, 'POST', '/api/keys', { token: session, body: { name: 'k3', permission: 'read' } })
    expect(refused.status).toBe(403)
    expectErrorShape(refused, 'QUOTA_EXCEEDED')
    expect(refused.body.message).toBe('This account has reached its limit: a user may have at most 3 API keys')
    expect((await all(app.url, session, 'keys')).map(k => k.name)).toEqual(['k0', 'k1', 'k2'])
    await createKey(app.url, await signup(app.url, 'quota-other'), { name: 'theirs', permission: 'read' })
    expect((await call(app.url, 'DELETE', `/api/keys/${made[0]?.id}`, { token: session })).status).toBe(200)
    expect((await call(app.url, 'POST', '/api/keys', { token: session, body: { name: 'k3', permission: 'read' } })).status).toBe(201)
  })
})

describe('quotas cannot be raced: two processes on one SQLite file', () => {
  let dataDir: string
  let first: ServerProcess
  let second: ServerProcess
  beforeAll(async () => {
    dataDir = makeDataDir()
    const env = { MAX_KEYS_PER_USER: '5', MAX_PROJECTS_PER_USER: '5' }
    first = await startServerProcess({ dataDir, env })
    second = await startServerProcess({ dataDir, env })
  })
  afterAll(async () => {
    await first?.stop()
    await second?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  // A racy count-then-insert lets a sixth through in most rounds: three rounds make missing it unlikely.
  it.each([1, 2, 3])('round %i: 40 concurrent key creates and 40 project creates, half to each process: exactly 5 of each succeed', async (round) => {
    const session = await signup(first.url, `racer-${round}`)
    const servers = [first, second]
    const keys = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      call((servers[i % 2] as ServerProcess).url, 'POST', '/api/keys', { token: session, body: { name: `k${i}`, permission: 'write' } })))
    const projects = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      call((servers[i % 2] as ServerProcess).url, 'POST', '/api/projects', { token: session, body: { slug: `p${i}` } })))
    for (const results of [keys, projects]) {
      expect(results.filter(r => r.status === 201)).toHaveLength(5)
      expect(results.filter(r => r.status !== 201).map(r => r.body.code)).toEqual(Array(35).fill('QUOTA_EXCEEDED'))
    }
    expect(await all(second.url, session, 'keys')).toHaveLength(5)
    expect(await all(first.url, session, 'projects')).toHaveLength(5)
  })
})
