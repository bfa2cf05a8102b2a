// Issue 26, finding 1 (docs/design.md §13b, "Batches and patches"): a 2 KB JSON Patch of
// copies, each copying the value the one before made, asks for a content that doubles per
// operation. Against the real server process at the default CONTENT_LIMIT (8 MiB) it must be
// refused with 413 CONTENT_TOO_LARGE before the content is built: nothing changes, the
// process stays up, and another user's write sent meanwhile is answered. The process gets a
// small heap (256 MiB), so building even a part of the gigabyte asked for would end it.
// Copies that each replace the last grow nothing, but each clones its value: one patch may
// copy at most CONTENT_LIMIT bytes in all, so its work stays bounded too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PATCH_MEDIA_TYPE } from '../../shared/json-patch.js'
import { call, ownerWithProject } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

describe('a JSON Patch of doubling copies', () => {
  let server: ServerProcess
  beforeAll(async () => { server = await startServerProcess({ env: { NODE_OPTIONS: '--max-old-space-size=256' } }) }, 30_000)
  afterAll(async () => { await server?.stop() })

  it.each([24, 30])('%i copies: 413 CONTENT_TOO_LARGE, nothing changed, the process alive, another user answered', async (copies) => {
    const attacker = await ownerWithProject(server.url, `mallory${copies}`)
    const other = await ownerWithProject(server.url, `alice${copies}`)
    const start = { d: ['x'.repeat(64)] }
    expect((await call(server.url, 'POST', `${attacker.path}/content`, { token: attacker.key, body: start })).status).toBe(200)
    const before = await call(server.url, 'GET', `${attacker.path}/content`, { token: attacker.key })

    const patch = JSON.stringify(Array.from({ length: copies }, () => ({ op: 'copy', from: '/d', path: '/d/-' })))
    expect(patch.length).toBeLessThanOrEqual(2048)
    const attack = call(server.url, 'PATCH', `${attacker.path}/content`, { token: attacker.key, raw: patch, headers: { 'content-type': PATCH_MEDIA_TYPE } })
    const increment = call(server.url, 'POST', `${other.path}/content/increment`, { token: other.key, body: { path: 'n' } })
    const [refused, answered] = await Promise.all([attack, increment])

    expect(refused.status, refused.text).toBe(413)
    expect(refused.body).toMatchObject({ code: 'CONTENT_TOO_LARGE', operation: expect.any(Number) })
    expect(answered.status, answered.text).toBe(200)
    const after = await call(server.url, 'GET', `${attacker.path}/content`, { token: attacker.key })
    expect(after.body).toEqual(start)
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'))
    expect((await call(server.url, 'GET', '/healthz')).status).toBe(200)
    expect(server.child.exitCode).toBeNull()
  }, 60_000)

  it('100 copies of a 2 MB value, each replacing the last: 413 once they have copied CONTENT_LIMIT bytes, nothing changed', async () => {
    const owner = await ownerWithProject(server.url, 'recopier')
    const other = await ownerWithProject(server.url, 'bob')
    const patchOf = (operations: unknown[]) => call(server.url, 'PATCH', `${owner.path}/content`, { token: owner.key, raw: JSON.stringify(operations), headers: { 'content-type': PATCH_MEDIA_TYPE } })
    expect((await call(server.url, 'POST', `${owner.path}/content`, { token: owner.key, body: { d: ['x'.repeat(64)] } })).status).toBe(200)
    // 15 doublings: d is about 2.2 MB, within the 8 MiB limit.
    expect((await patchOf(Array.from({ length: 15 }, () => ({ op: 'copy', from: '/d', path: '/d/-' })))).status).toBe(200)
    const before = await call(server.url, 'GET', `${owner.path}/content`, { token: owner.key })

    const [refused, answered] = await Promise.all([
      patchOf(Array.from({ length: 100 }, () => ({ op: 'copy', from: '/d', path: '/e' }))),
      call(server.url, 'POST', `${other.path}/content/increment`, { token: other.key, body: { path: 'n' } })
    ])
    expect(refused.status, refused.text).toBe(413)
    // 8 MiB / 2.2 MB: the fourth copy is past what one patch may copy.
    expect(refused.body).toMatchObject({ code: 'CONTENT_TOO_LARGE', operation: 3 })
    expect(answered.status, answered.text).toBe(200)
    const after = await call(server.url, 'GET', `${owner.path}/content`, { token: owner.key })
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'))
    expect(after.text).toBe(before.text)
  }, 60_000)
})
