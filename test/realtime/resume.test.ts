// Resuming over Socket.IO and SSE (docs/design.md §9) against real server processes:
// `subscribe {project, since}` answers the missed changes in its ack and continues live with
// no gap and no duplicate, even while writers are busy; HISTORY_EXPIRED when too old; and
// with two nodes and a real redis-server, SSE streams on one node hear changes made on the
// other, in order, and revocations made on the other.
import { rmSync } from 'node:fs'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChangeEntry, SubscribeAck } from '../../shared/events.js'
import { call, createKey, ownerWithProject } from '../support/http.js'
import { requireRedisUnlessAbsentLocally, startRedisServer, type RedisServer } from '../support/redis-server.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { openEvents, type SseStream } from '../support/sse.js'
import { connect, Recorder } from './client.js'

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
const resume = (socket: Socket, request: unknown) => socket.timeout(10_000).emitWithAck('subscribe', request) as Promise<SubscribeAck>

describe('Socket.IO subscribe with since', { timeout: 60_000 }, () => {
  let server: ServerProcess
  const sockets: Socket[] = []
  const open = async (token: string) => {
    const socket = await connect(server.url, token)
    sockets.push(socket)
    return new Recorder(socket)
  }
  const increment = (path: string, token: string) => call(server.url, 'POST', `${path}/content/increment`, { token, body: { path: 'n' } })

  beforeAll(async () => { server = await startServerProcess({ env: { HISTORY_LIMIT: '100' } }) })
  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    await server?.stop()
    rmSync(server.dataDir, { recursive: true, force: true })
  })

  it('answers the changes after since in the ack (no content), then live changes follow', async () => {
    const { key, keyId, path } = await ownerWithProject(server.url, 'resumeack')
    for (let i = 0; i < 5; i++) await increment(path, key)
    const recorder = await open(key)
    const ack = await resume(recorder.socket, { project: '@resumeack/demo', since: 2 })
    expect(ack).toEqual({
      ok: true,
      project: '@resumeack/demo',
      version: 5,
      changes: range(3, 5).map(version => ({ project: '@resumeack/demo', version, op: 'increment', path: 'n', value: 1, at: expect.any(String), actor: { type: 'key', id: keyId, name: 'writer' } }))
    })
    await increment(path, key)
    await recorder.untilVersion(6)
    expect(recorder.changes.map(c => c.version)).toEqual([6])
    // since = the current version: nothing missed.
    const other = await open(key)
    expect(await resume(other.socket, { project: '@resumeack/demo', since: 6 })).toEqual({ ok: true, project: '@resumeack/demo', version: 6, changes: [] })
  })

  it('no gap and no duplicate when resuming while writers are busy', async () => {
    const { key, path } = await ownerWithProject(server.url, 'resumerace')
    const total = 90
    const writes: Array<Promise<unknown>> = []
    const resumed: Array<Promise<{ recorder: Recorder, ack: SubscribeAck, since: number }>> = []
    // Writes acknowledged so far: the project's version is at least that, so a resume from a
    // few versions before it is legal (a count of writes sent could be above the version).
    let acknowledged = 0
    for (let i = 0; i < total; i++) {
      writes.push(increment(path, key).then(result => { acknowledged++; return result }))
      if (i % 15 === 5) {
        const since = Math.max(0, acknowledged - 3)
        resumed.push(open(key).then(async recorder => ({ recorder, since, ack: await resume(recorder.socket, { project: '@resumerace/demo', since }) })))
      }
      if (i % 10 === 0) await new Promise(resolve => setTimeout(resolve, 5))
    }
    await Promise.all(writes)
    for (const { recorder, ack, since } of await Promise.all(resumed)) {
      if (!ack.ok || !('changes' in ack)) throw new Error(`resume refused: ${JSON.stringify(ack)}`)
      if (ack.version < total) await recorder.untilVersion(total)
      const seen = [...ack.changes, ...recorder.changes].map(c => c.version)
      expect(seen).toEqual(range(since + 1, total))
    }
  })

  it('HISTORY_EXPIRED beyond retention, INVALID_VERSION for a bad or future since', async () => {
    const { key, path } = await ownerWithProject(server.url, 'resumeold')
    for (let i = 0; i < 110; i += 10) await Promise.all(range(1, 10).map(() => increment(path, key)))
    const recorder = await open(key)
    expect(await resume(recorder.socket, { project: '@resumeold/demo', since: 9 })).toMatchObject({ ok: false, code: 'HISTORY_EXPIRED', message: expect.any(String) })
    expect(await resume(recorder.socket, { project: '@resumeold/demo', since: 10 })).toMatchObject({ ok: true, version: 110 })
    for (const since of [-1, 1.5, '3', null, 1e20]) {
      expect(await resume(recorder.socket, { project: '@resumeold/demo', since })).toMatchObject({ ok: false, code: 'INVALID_VERSION' })
    }
    expect(await resume(recorder.socket, { project: '@resumeold/demo', since: 111 })).toMatchObject({ ok: false, code: 'INVALID_VERSION' })
  })
})

const hasRedis = requireRedisUnlessAbsentLocally()

describe.skipIf(!hasRedis)('SSE across two nodes with Redis', { timeout: 90_000 }, () => {
  let redis: RedisServer
  let node1: ServerProcess
  let node2: ServerProcess
  const dataDir = makeDataDir()
  const streams: SseStream[] = []

  beforeAll(async () => {
    redis = await startRedisServer()
    node1 = await startServerProcess({ dataDir, env: { REDIS_URL: redis.url } })
    node2 = await startServerProcess({ dataDir, env: { REDIS_URL: redis.url } })
  })
  afterAll(async () => {
    for (const stream of streams) stream.close()
    await Promise.all([node1?.stop(), node2?.stop()])
    await redis?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('streams on each node see every change from both nodes once, in order', async () => {
    const { key, path } = await ownerWithProject(node1.url, 'ssemulti')
    const onNode1 = await openEvents(node1.url, `${path}/content/events`, { token: key })
    const onNode2 = await openEvents(node2.url, `${path}/content/events?since=0`, { token: key })
    streams.push(onNode1, onNode2)
    await onNode1.until(() => onNode1.events.length === 1, 'the snapshot')
    const total = 60
    const writes = range(1, total).map(i => call(i % 2 === 0 ? node1.url : node2.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } }))
    expect((await Promise.all(writes)).every(r => r.status === 200)).toBe(true)
    for (const stream of [onNode1, onNode2]) {
      await stream.until(() => stream.changes().some(c => c.version === total), `version ${total}`)
      expect(stream.changes().map(c => c.version)).toEqual(range(1, total))
      expect((stream.changes() as unknown as ChangeEntry[]).every(c => c.actor.type === 'key')).toBe(true)
    }
  })

  it('revoking a key through node 1 ends its stream on node 2', async () => {
    const { session, path } = await ownerWithProject(node1.url, 'ssemultirevoke')
    const doomed = await createKey(node1.url, session, { name: 'doomed', permission: 'read' })
    const stream = await openEvents(node2.url, `${path}/content/events`, { token: doomed.key })
    streams.push(stream)
    await stream.until(() => stream.events.length === 1, 'the snapshot')
    expect((await call(node1.url, 'DELETE', `/api/keys/${doomed.id}`, { token: session })).status).toBe(200)
    await stream.until(() => stream.ended, 'the end of the stream')
    expect(JSON.parse(stream.events.at(-1)?.data ?? '{}')).toMatchObject({ code: 'INVALID_TOKEN' })
  })
})
