// Socket.IO path subscriptions (docs/design.md §15) with a real socket.io-client: the snapshot
// of one path, only the changes that touch it (as they are, or projected), `subscription` and
// `prev` on each, several per socket, resume with `since` (and its snapshot fallback), the
// errors, narrowed keys, the shared per-connection limit, and a random workload whose rebuilt
// values always equal `GET ?path=`.
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applyPathChange, type PathChangeEvent, type PathValue } from '../../shared/live-path.js'
import { call, createKey, ownerWithProject, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { connect, Recorder } from './client.js'

type Ack = Record<string, unknown> & { ok: boolean, code?: string }

describe('Socket.IO path subscriptions', { timeout: 60_000 }, () => {
  let app: TestApp
  const sockets: Socket[] = []
  const open = async (token: string) => {
    const socket = await connect(app.url, token)
    sockets.push(socket)
    return new Recorder(socket)
  }
  const ask = (socket: Socket, event: string, request: unknown) => socket.timeout(10_000).emitWithAck(event, request) as Promise<Ack>
  const pathEvents = (recorder: Recorder, path: string) => (recorder.changes as unknown as PathChangeEvent[]).filter(change => change.subscription === path)

  beforeAll(async () => { app = await startTestApp({ HISTORY_LIMIT: '1000', SOCKET_SUBSCRIPTIONS_PER_CONNECTION: '4' }, { realtime: true }) })
  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    await app.close()
  })

  async function project (name: string) {
    const owner = await ownerWithProject(app.url, name)
    const post = async (op: string, body: unknown) => {
      // update is POST …/content with the new content as the body.
      const r = op === 'update'
        ? await call(app.url, 'POST', `${owner.path}/content`, { token: owner.key, body: (body as { value: unknown }).value })
        : await call(app.url, 'POST', `${owner.path}/content/${op}`, { token: owner.key, body })
      expect(r.status, r.text).toBe(200)
      return Number(JSON.parse(r.headers.get('etag') ?? '0'))
    }
    return { ...owner, ref: `@${name}/demo`, post }
  }

  it('acks the value at the path, then sends only the changes that touch it, each with subscription and prev', async () => {
    const p = await project('pathack')
    await p.post('update', { value: { votes: { up: 1 }, secret: 'hidden' } })
    const recorder = await open(p.key)
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'votes' })).toEqual({ ok: true, project: p.ref, path: 'votes', version: 1, exists: true, value: { up: 1 } })
    for (let i = 0; i < 5; i++) await p.post('increment', { path: 'elsewhere' })
    await p.post('increment', { path: 'votes.up' })
    await p.post('batch', { operations: [{ op: 'set', path: 'secret', value: 'still hidden' }, { op: 'increment', path: 'votes.down' }] })
    await p.post('update', { value: { votes: { up: 9 }, secret: 'hidden again' } })
    await recorder.untilVersion(9)
    const events = pathEvents(recorder, 'votes')
    expect(events.map(change => [change.version, change.op, change.prev])).toEqual([[7, 'increment', 1], [8, 'batch', 7], [9, 'set', 8]])
    expect(events[1]).toMatchObject({ operations: [{ op: 'increment', path: 'votes.down', value: 1 }] })
    expect(events[2]).toEqual({ project: p.ref, version: 9, op: 'set', path: 'votes', value: { up: 9 }, projected: true, at: expect.any(String), actor: expect.any(Object), subscription: 'votes', prev: 8 })
    expect(JSON.stringify(recorder.changes)).not.toContain('hidden')
  })

  it('holds several path subscriptions per socket beside a whole-project one; again replaces, unsubscribe ends one', async () => {
    const p = await project('pathmany')
    const recorder = await open(p.key)
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'a' })).toMatchObject({ ok: true, exists: false })
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'b' })).toMatchObject({ ok: true, exists: false })
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'a' })).toMatchObject({ ok: true, path: 'a' })
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref })).toMatchObject({ ok: true, content: {} })
    await p.post('set', { path: 'a', value: 1 })
    await p.post('set', { path: 'b', value: 2 })
    await recorder.until(() => pathEvents(recorder, 'b').length === 1, 'b')
    // One event per subscription, not one per subscribe: the second subscribe to a replaced the first.
    expect(pathEvents(recorder, 'a').map(change => change.version)).toEqual([1])
    expect(recorder.changes.filter(change => !('subscription' in change)).map(change => change.version)).toEqual([1, 2])
    expect(await ask(recorder.socket, 'unsubscribe', { project: p.ref, path: 'a' })).toEqual({ ok: true })
    await p.post('set', { path: 'a', value: 3 })
    await p.post('set', { path: 'b', value: 4 })
    await recorder.until(() => pathEvents(recorder, 'b').length === 2, 'b again')
    expect(pathEvents(recorder, 'a').map(change => change.version)).toEqual([1])
    expect(pathEvents(recorder, 'b').map(change => change.prev)).toEqual([0, 2])
  })

  it('resumes from since: the changes that touch the path in the ack; the next live change follows on from it', async () => {
    const p = await project('pathresume')
    await p.post('set', { path: 'votes', value: 0 })
    for (let i = 0; i < 6; i++) await p.post('increment', { path: i % 2 === 0 ? 'votes' : 'other' })
    const recorder = await open(p.key)
    const ack = await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'votes', since: 1 })
    expect(ack).toMatchObject({ ok: true, project: p.ref, path: 'votes', version: 7 })
    expect((ack.changes as PathChangeEvent[]).map(change => [change.version, change.prev, change.subscription])).toEqual([[2, 1, 'votes'], [4, 2, 'votes'], [6, 4, 'votes']])
    expect(ack).not.toHaveProperty('value')
    await p.post('increment', { path: 'votes' })
    await recorder.untilVersion(8)
    expect(pathEvents(recorder, 'votes').map(change => [change.version, change.prev])).toEqual([[8, 7]])
  })

  it('a resume that needs the content falls back to a snapshot; a resume beyond retention is HISTORY_EXPIRED', async () => {
    const p = await project('pathfallback')
    await p.post('set', { path: 'list', value: [] })
    await p.post('push', { path: 'list', value: 'x' })
    const recorder = await open(p.key)
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'list.0', since: 1 })).toEqual({ ok: true, project: p.ref, path: 'list.0', version: 2, exists: true, value: 'x' })
    for (let i = 0; i < 1010; i++) await p.post('increment', { path: 'n' })
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'n', since: 0 })).toMatchObject({ ok: false, code: 'HISTORY_EXPIRED' })
  })

  it('refuses bad requests and callers as whole-project subscribe does; narrowed keys watch inside their paths', async () => {
    const p = await project('patherrors')
    const recorder = await open(p.key)
    for (const path of ['', 'a..b', '$x', '__proto__', 5, null]) {
      expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path }), JSON.stringify(path)).toMatchObject({ ok: false, code: 'INVALID_PATH' })
    }
    expect(await ask(recorder.socket, 'unsubscribe', { project: p.ref, path: 'a..b' })).toMatchObject({ ok: false, code: 'INVALID_PATH' })
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'a', since: -1 })).toMatchObject({ ok: false, code: 'INVALID_VERSION' })
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'a', filter: 1 })).toMatchObject({ ok: false, code: 'INVALID_BODY' })
    expect(await ask(recorder.socket, 'subscribe', { project: '@patherrors/nope', path: 'a' })).toMatchObject({ ok: false, code: 'PROJECT_NOT_FOUND' })
    const stranger = await open(await signup(app.url, 'pathstranger'))
    expect(await ask(stranger.socket, 'subscribe', { project: p.ref, path: 'a' })).toMatchObject({ ok: false, code: 'FORBIDDEN' })

    const narrowed = await open((await createKey(app.url, p.session, { name: 'votes only', permission: 'read', paths: ['votes'] })).key)
    expect(await ask(narrowed.socket, 'subscribe', { project: p.ref, path: 'votes' })).toMatchObject({ ok: true })
    expect(await ask(narrowed.socket, 'subscribe', { project: p.ref, path: 'votes.up' })).toMatchObject({ ok: true })
    expect(await ask(narrowed.socket, 'subscribe', { project: p.ref, path: 'secret' })).toMatchObject({ ok: false, code: 'KEY_SCOPE_DENIED' })
    expect(await ask(narrowed.socket, 'subscribe', { project: p.ref })).toMatchObject({ ok: false, code: 'KEY_SCOPE_DENIED' })
    const opsOnly = await open((await createKey(app.url, p.session, { name: 'increments', permission: 'write', ops: ['increment'] })).key)
    expect(await ask(opsOnly.socket, 'subscribe', { project: p.ref, path: 'secret' })).toMatchObject({ ok: true })
  })

  it('each path subscription counts against SOCKET_SUBSCRIPTIONS_PER_CONNECTION, with whole-project ones', async () => {
    const p = await project('pathlimit')
    const recorder = await open(p.key)
    for (const path of ['a', 'b', 'c']) expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path })).toMatchObject({ ok: true })
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref })).toMatchObject({ ok: true })
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'd' })).toMatchObject({ ok: false, code: 'TOO_MANY_SUBSCRIPTIONS' })
    // Replacing one is not a new one.
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'a' })).toMatchObject({ ok: true })
    await ask(recorder.socket, 'unsubscribe', { project: p.ref, path: 'b' })
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'd' })).toMatchObject({ ok: true })
  })

  it('a removed member\'s path subscriptions end with revoked naming the project and path', async () => {
    const p = await project('pathrevoke')
    const viewerSession = await signup(app.url, 'pathviewer')
    expect((await call(app.url, 'PUT', `${p.path}/members/pathviewer`, { token: p.session, body: { role: 'viewer' } })).status).toBe(200)
    const recorder = await open(viewerSession)
    expect(await ask(recorder.socket, 'subscribe', { project: p.ref, path: 'votes' })).toMatchObject({ ok: true })
    expect((await call(app.url, 'DELETE', `${p.path}/members/pathviewer`, { token: p.session })).status).toBe(200)
    await recorder.until(() => recorder.revoked.length > 0, 'revoked')
    expect(recorder.revoked[0]).toMatchObject({ code: 'FORBIDDEN', project: p.ref, path: 'votes' })
    await p.post('set', { path: 'votes', value: 1 })
    await new Promise(resolve => setTimeout(resolve, 200))
    expect(pathEvents(recorder, 'votes')).toEqual([])
  })

  it('random writes of every kind: each path\'s value rebuilt from its ack and events equals GET ?path= (property)', async () => {
    const p = await project('pathproperty')
    await p.post('update', { value: { a: { b: { c: 1 } }, list: [{ x: 1 }, 2, 3], votes: { up: 0 } } })
    const watched = ['a.b', 'list.1', 'list', 'votes.up', 'a', 'list.0.x']
    // Two sockets: SOCKET_SUBSCRIPTIONS_PER_CONNECTION is 4 here.
    const recorders = [await open(p.key), await open(p.key)]
    const recorderOf = (path: string) => recorders[watched.indexOf(path) % 2]!
    const states = new Map<string, PathValue>()
    for (const path of watched) {
      const ack = await ask(recorderOf(path).socket, 'subscribe', { project: p.ref, path })
      expect(ack.ok, path).toBe(true)
      states.set(path, ack.exists === true ? { exists: true, value: ack.value as never } : { exists: false })
    }
    // mulberry32: a seeded generator whose low bits are as random as its high ones.
    let seed = 7
    const next = (n: number) => {
      seed = (seed + 0x6D2B79F5) | 0
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n)
    }
    const paths = ['a', 'a.b', 'a.b.c', 'list', 'list.0', 'list.1', 'list.0.x', 'votes.up', 'n']
    const values = [1, { b: { c: 2 }, x: 3 }, [1, { x: 2 }], 'text']
    let version = 1
    for (let step = 0; step < 300; step++) {
      const path = paths[next(paths.length)]
      const kind = next(8)
      const body = kind === 0 ? ['update', { value: { a: { b: { c: step } }, list: [{ x: step }, step], votes: { up: step } } }]
        : kind === 1 ? ['delete', { path }]
          : kind === 2 ? ['push', { path, value: values[next(values.length)] }]
            : kind === 3 ? ['insert', { path, index: next(2), value: values[next(values.length)] }]
              : kind === 4 ? ['batch', { operations: [{ op: 'set', path, value: values[next(values.length)] }, { op: 'increment', path: 'n' }] }]
                : kind === 5 ? ['increment', { path }]
                  : ['set', { path, value: values[next(values.length)] }]
      const r = body[0] === 'update'
        ? await call(app.url, 'POST', `${p.path}/content`, { token: p.key, body: (body[1] as { value: unknown }).value })
        : await call(app.url, 'POST', `${p.path}/content/${body[0] as string}`, { token: p.key, body: body[1] })
      if (r.status === 200) version += 1
    }
    expect(version).toBeGreaterThan(100)
    // Checked before the last write too: an update touches every path, so its event marks the end.
    const rebuilt = async (path: string, upTo: number) => {
      // applyPathChange changes the value it is given: each rebuild starts from its own copy.
      let state = structuredClone(states.get(path)!)
      let last = 1
      for (const change of pathEvents(recorderOf(path), path).filter(change => change.version <= upTo)) {
        expect(change.prev, `${path} prev chain`).toBe(last)
        last = change.version
        state = applyPathChange(state, path, change)
      }
      return state
    }
    const before = Object.fromEntries(await Promise.all(watched.map(async path => {
      const now = await call(app.url, 'GET', `${p.path}/content?path=${path}`, { token: p.key })
      return [path, now.status === 200 ? { exists: true, value: now.body } : { exists: false }]
    })))
    await p.post('update', { value: { end: true } })
    version += 1
    for (const path of watched) await recorderOf(path).until(() => pathEvents(recorderOf(path), path).at(-1)?.version === version, `the last update on ${path}`)
    for (const path of watched) expect(await rebuilt(path, version - 1), `${path} before the last write`).toEqual(before[path])
    for (const path of watched) {
      const now = await call(app.url, 'GET', `${p.path}/content?path=${path}`, { token: p.key })
      expect(await rebuilt(path, version), path).toEqual(now.status === 200 ? { exists: true, value: now.body } : { exists: false })
    }
  })
})
