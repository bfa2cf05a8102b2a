// Everything survives a clean restart: SIGTERM ends the process with 0, and a new process on
// the same DATA_DIR serves the same sessions, keys, projects, members and content.
import { rmSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { call, createKey, createProject, signup } from '../support/http.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'

describe('restart on the same DATA_DIR', () => {
  const dataDir = makeDataDir()
  const running: ServerProcess[] = []
  afterAll(async () => {
    for (const server of running) await server.stop('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('keeps sessions, keys, projects, members and content', { timeout: 60_000 }, async () => {
    const first = await startServerProcess({ dataDir })
    running.push(first)
    const owner = await signup(first.url, 'keeper')
    const viewer = await signup(first.url, 'watcher')
    await createProject(first.url, owner, 'notes')
    await createProject(first.url, owner, 'extra')
    const path = '/api/@keeper/notes'
    const writeKey = await createKey(first.url, owner, { name: 'writer', permission: 'write', projects: ['@keeper/notes'] })
    const revoked = await createKey(first.url, owner, { name: 'old', permission: 'write' })
    expect((await call(first.url, 'DELETE', `/api/keys/${revoked.id}`, { token: owner })).status).toBe(200)
    expect((await call(first.url, 'PUT', `${path}/members/watcher`, { token: owner, body: { role: 'viewer' } })).status).toBe(200)
    for (const [op, body] of [
      ['set', { path: 'title', value: 'Ünïcödé ✓' }],
      ['increment', { path: 'stats.views', value: 41 }],
      ['increment', { path: 'stats.views' }],
      ['push', { path: 'tags', value: 'a' }],
      ['insert', { path: 'tags', value: 'first', index: 0 }],
      ['set', { path: 'nested.deep.value', value: { x: [null, true, 1.5] } }],
      ['delete', { path: 'nested.deep.value.x.0' }]
    ] as const) {
      expect((await call(first.url, 'POST', `${path}/content/${op}`, { token: writeKey.key, body })).status).toBe(200)
    }
    const contentBefore = await call(first.url, 'GET', `${path}/content`, { token: owner })
    const projectsBefore = await call(first.url, 'GET', '/api/projects', { token: owner })
    const membersBefore = await call(first.url, 'GET', `${path}/members`, { token: owner })
    const keysBefore = await call(first.url, 'GET', '/api/keys', { token: owner })
    expect(contentBefore.body).toEqual({ title: 'Ünïcödé ✓', stats: { views: 42 }, tags: ['first', 'a'], nested: { deep: { value: { x: [true, 1.5] } } } })
    expect(contentBefore.headers.get('etag')).toBe('"7"')

    expect(await first.stop('SIGTERM')).toBe(0)
    running.pop()

    const second = await startServerProcess({ dataDir })
    running.push(second)
    const contentAfter = await call(second.url, 'GET', `${path}/content`, { token: writeKey.key })
    expect(contentAfter.status).toBe(200)
    expect(contentAfter.body).toEqual(contentBefore.body)
    expect(contentAfter.headers.get('etag')).toBe('"7"')
    expect((await call(second.url, 'GET', `${path}/content`, { token: owner })).body).toEqual(contentBefore.body)
    expect((await call(second.url, 'GET', '/api/me', { token: owner })).body).toMatchObject({ username: '@keeper' })
    expect((await call(second.url, 'GET', '/api/projects', { token: owner })).body).toEqual(projectsBefore.body)
    expect((await call(second.url, 'GET', `${path}/members`, { token: owner })).body).toEqual(membersBefore.body)
    expect((await call(second.url, 'GET', '/api/keys', { token: owner })).body).toEqual(keysBefore.body)

    // Rights survive too: the viewer reads but cannot write, the scoped key stays scoped,
    // the revoked key stays revoked, and the password still logs in.
    expect((await call(second.url, 'GET', `${path}/content?path=title`, { token: viewer })).body).toBe('Ünïcödé ✓')
    expect((await call(second.url, 'POST', `${path}/content/set`, { token: viewer, body: { path: 'x', value: 1 } })).status).toBe(403)
    expect((await call(second.url, 'GET', '/api/@keeper/extra/content', { token: writeKey.key })).status).toBe(403)
    expect((await call(second.url, 'GET', '/api/me', { token: revoked.key })).status).toBe(401)
    expect((await call(second.url, 'POST', '/api/auth/login', { body: { username: 'keeper', password: 'correct horse battery staple' } })).status).toBe(200)

    // And it keeps counting from where it was.
    const next = await call(second.url, 'POST', `${path}/content/increment`, { token: writeKey.key, body: { path: 'stats.views' } })
    expect(next.headers.get('etag')).toBe('"8"')
    expect((await call(second.url, 'GET', `${path}/content?path=stats.views`, { token: owner })).body).toBe(43)
    expect(await second.stop('SIGTERM')).toBe(0)
    running.pop()
  })

  it('a SIGTERM during a burst of writes still exits 0 and keeps every acknowledged write', { timeout: 60_000 }, async () => {
    const server = await startServerProcess({ dataDir })
    running.push(server)
    const session = await signup(server.url, 'burst')
    await createProject(server.url, session, 'b')
    const { key } = await createKey(server.url, session, { name: 'w', permission: 'write' })
    const writes = Array.from({ length: 100 }, () =>
      call(server.url, 'POST', '/api/@burst/b/content/increment', { token: key, body: { path: 'n' } }).then(r => r.status, () => 0))
    // The signal lands once the server is answering the burst, with most writes still in flight.
    await Promise.race(writes)
    const exit = server.stop('SIGTERM')
    const statuses = await Promise.all(writes)
    expect(await exit).toBe(0)
    running.pop()
    const acknowledged = statuses.filter(s => s === 200).length

    const again = await startServerProcess({ dataDir })
    running.push(again)
    const n = (await call(again.url, 'GET', '/api/@burst/b/content', { token: key })).body as { n?: number }
    // Acknowledged writes are durable; a write cut off mid-flight may or may not have landed.
    expect(n.n ?? 0).toBeGreaterThanOrEqual(acknowledged)
    expect(n.n ?? 0).toBeLessThanOrEqual(100)
    expect(await again.stop('SIGTERM')).toBe(0)
    running.pop()
  })
})
