// The SDK's presence (docs/sdk.md#presence) against the real server process: a live member
// list with this client's own member, updates and leaves, one server subscription shared
// with the content copies, sets coalesced before they leave the client, refusals as
// ContentdErrors, and the member shown again after the server restarts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, ContentdError, type ContentdClient, type PresenceMember } from '../../shared/client/index.js'
import { call, createKey, createProject, signup } from '../support/http.js'
import { metricValue } from '../support/metrics.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'

const METRICS_TOKEN = 'metrics-token-for-the-presence-sdk-tests'
const events = (name: string) => `contentd_realtime_events_total{event="${name}"}`

let server: ServerProcess
let session: string
let laptop: { id: string, key: string }
const clients: ContentdClient[] = []
const client = (token: string, socketOptions: Record<string, unknown> = {}) => {
  const c = createClient({ baseUrl: server.url, token, socketOptions: { transports: ['websocket'], ...socketOptions } })
  clients.push(c)
  return c
}
const states = (members: PresenceMember[]) => members.map(m => m.state)

beforeAll(async () => {
  server = await startServerProcess({ env: { METRICS_TOKEN } })
  session = await signup(server.url, 'sdkpres')
  for (const slug of ['demo', 'shared', 'coalesce', 'big', 'restart', 'revoke']) await createProject(server.url, session, slug)
  laptop = await createKey(server.url, session, { name: 'laptop', permission: 'write' })
})
afterAll(async () => {
  for (const c of clients) c.close()
  await server.stop()
})

describe('presence in the SDK', () => {
  it('members is a live list with this client in it; set joins and updates, leave takes it out; listeners hear each change', async () => {
    const alice = client(laptop.key).project('@sdkpres/demo').presence
    const viewer = client(session).project('@sdkpres/demo').presence
    const seen: PresenceMember[][] = []
    viewer.on('change', members => seen.push(members))
    await alice.set({ path: 'title' })
    expect(alice.self).toEqual({ id: expect.any(String), actor: { type: 'key', id: laptop.id, name: 'laptop' }, state: { path: 'title' }, since: expect.any(String) })
    await until(() => viewer.members.length === 1, 'alice in the viewer\'s list')
    expect(viewer.members).toEqual([alice.self])
    // The viewer is not a member until it sets a state.
    expect(viewer.self).toBeUndefined()
    expect(alice.members).toEqual([alice.self])

    await viewer.set({ path: 'posts.0' })
    await until(() => alice.members.length === 2, 'the viewer in alice\'s list')
    expect(states(alice.members)).toEqual([{ path: 'title' }, { path: 'posts.0' }])
    expect(alice.members[1]?.actor).toEqual({ type: 'user', name: '@sdkpres' })

    await alice.set({ path: 'body' })
    await until(() => viewer.members[0]?.state.path === 'body', 'alice\'s update')
    await alice.leave()
    await until(() => viewer.members.length === 1, 'alice gone')
    expect(viewer.members).toEqual([viewer.self])
    expect(seen.map(states)).toEqual([
      [],
      [{ path: 'title' }],
      [{ path: 'title' }, { path: 'posts.0' }],
      [{ path: 'body' }, { path: 'posts.0' }],
      [{ path: 'posts.0' }]
    ])
    // ProjectClient objects for the same project share the presence.
    expect(clients[0]?.project('@SDKPRES/demo').presence).toBe(alice)
  })

  it('shares the one server subscription with the content copies, which stay live', async () => {
    const before = await metricValue(server.url, METRICS_TOKEN, events('subscribe'))
    const c = client(laptop.key)
    const project = c.project('@sdkpres/shared')
    const live = project.subscribe(() => {})
    await live.ready
    await project.presence.set({ here: true })
    project.presence.on('change', () => {})
    await call(server.url, 'POST', '/api/@sdkpres/shared/content/increment', { token: laptop.key, body: { path: 'n' } })
    await until(() => live.version === 1, 'the change')
    expect(await metricValue(server.url, METRICS_TOKEN, events('subscribe')) - before).toBe(1)
    // Closing the content copy keeps the presence (and so the subscription) alive.
    live.close()
    const other = client(session).project('@sdkpres/shared').presence
    other.on('change', () => {})
    await until(() => other.members.length === 1, 'the member seen by another client')
    project.presence.close()
    await until(() => other.members.length === 0, 'the member gone after close()')
  })

  it('a burst of set() calls sends only a few, every call resolves, and the last state wins', async () => {
    const presence = client(laptop.key).project('@sdkpres/coalesce').presence
    const watcher = client(session).project('@sdkpres/coalesce').presence
    watcher.on('change', () => {})
    // Before the subscription is in place, only the latest state is kept.
    let before = await metricValue(server.url, METRICS_TOKEN, events('presence:set'))
    await Promise.all(Array.from({ length: 50 }, (_, i) => presence.set({ i })))
    expect(presence.self?.state).toEqual({ i: 49 })
    expect(await metricValue(server.url, METRICS_TOKEN, events('presence:set')) - before).toBe(1)
    // Joined: the first goes out at once, the rest wait for the 100 ms pause and go as one.
    before = await metricValue(server.url, METRICS_TOKEN, events('presence:set'))
    await Promise.all(Array.from({ length: 50 }, (_, i) => presence.set({ i: 100 + i })))
    expect(presence.self?.state).toEqual({ i: 149 })
    await until(() => watcher.members[0]?.state.i === 149, 'the last state')
    const sent = await metricValue(server.url, METRICS_TOKEN, events('presence:set')) - before
    expect(sent).toBeGreaterThanOrEqual(1)
    expect(sent).toBeLessThanOrEqual(2)
  })

  it('a refused set rejects with a ContentdError and the state shown before stays', async () => {
    const presence = client(laptop.key).project('@sdkpres/big').presence
    await presence.set({ small: true })
    const error = await presence.set({ big: 'x'.repeat(2000) }).then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(ContentdError)
    expect(error).toMatchObject({ status: 413, code: 'PRESENCE_STATE_TOO_LARGE' })
    expect(presence.self?.state).toEqual({ small: true })
    await expect(presence.set([] as never)).rejects.toThrow(TypeError)
  })

  it('a stranger is refused: set rejects and error listeners hear FORBIDDEN', async () => {
    const stranger = await signup(server.url, 'sdkpres-stranger')
    const presence = client(stranger).project('@sdkpres/demo').presence
    const errors: ContentdError[] = []
    presence.on('error', e => errors.push(e))
    await expect(presence.set({})).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' })
    expect(errors.map(e => e.code)).toEqual(['FORBIDDEN'])
    expect(presence.members).toEqual([])
  })

  it('revoking the key: the others see the member leave, and its presence reports INVALID_TOKEN', async () => {
    const doomed = await createKey(server.url, session, { name: 'doomed', permission: 'read' })
    const presence = client(doomed.key).project('@sdkpres/revoke').presence
    const errors: string[] = []
    presence.on('error', e => errors.push(e.code))
    await presence.set({ soon: 'gone' })
    const watcher = client(session).project('@sdkpres/revoke').presence
    watcher.on('change', () => {})
    await until(() => watcher.members.length === 1, 'the member')
    expect((await call(server.url, 'DELETE', `/api/keys/${doomed.id}`, { token: session })).status).toBe(200)
    await until(() => watcher.members.length === 0, 'the leave')
    await until(() => errors.length > 0, 'the error')
    expect(errors).toEqual(['INVALID_TOKEN'])
    expect(presence.members).toEqual([])
  })

  it('after the server restarts, the client shows its state again (a new member id) and lists the others', async () => {
    const options = { reconnectionDelay: 100, reconnectionDelayMax: 200 }
    const presence = client(laptop.key, options).project('@sdkpres/restart').presence
    const watcher = client(session, options).project('@sdkpres/restart').presence
    watcher.on('change', () => {})
    await presence.set({ cursor: 7 })
    await until(() => watcher.members.length === 1, 'the member')
    const before = presence.self?.id
    await server.stop()
    await until(() => watcher.members.length === 0 && presence.members.length === 0, 'empty lists while disconnected')
    server = await startServerProcess({ port: server.port, dataDir: server.dataDir, env: { METRICS_TOKEN } })
    await until(() => watcher.members.length === 1 && presence.self !== undefined, 'the member shown again', 10_000)
    expect(presence.self?.id).not.toBe(before)
    expect(watcher.members).toEqual([{ ...presence.self, state: { cursor: 7 } }])
  })
})
