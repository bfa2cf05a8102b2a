// The change feed between two nodes over a real redis-server (feed/redis-relay.ts): both nodes
// in this process on one SQLite data directory, wired by createNode. A change committed on one
// reaches the other's feed as the same wire text (parsed there once, serialized nowhere
// again), and its Server-Sent Events streams; an access event ends streams on the other node.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChangeEntry } from '../../shared/events.js'
import { wireOf } from '../../server/feed/wire.js'
import { call, ownerWithProject } from '../support/http.js'
import { requireRedisUnlessAbsentLocally, startRedisServer, type RedisServer } from '../support/redis-server.js'
import { openEvents } from '../support/sse.js'
import { until } from '../support/wait.js'
import { startNode, type Node } from '../limits/app-with-redis.js'

const hasRedis = requireRedisUnlessAbsentLocally()

describe.skipIf(!hasRedis)('the change feed between two nodes (Redis)', () => {
  let redis: RedisServer
  let a: Node
  let b: Node
  const dir = mkdtempSync(join(tmpdir(), 'contentd-feed-relay-'))

  beforeAll(async () => {
    redis = await startRedisServer()
    a = await startNode({ RATE_LIMIT: '0' }, redis.url, dir)
    b = await startNode({ RATE_LIMIT: '0' }, redis.url, dir)
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await redis?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a commit on node A reaches node B\'s feed once, as the very text A sent, and B\'s SSE streams', async () => {
    const owner = await ownerWithProject(a.url, 'relayed')
    const projectId = (await a.node.services.projects.find('@relayed', 'demo')).id
    const onB: ChangeEntry[] = []
    const onA: ChangeEntry[] = []
    b.node.feed.subscribe(projectId, c => onB.push(c))
    a.node.feed.subscribe(projectId, c => onA.push(c))
    const stream = await openEvents(b.url, `${owner.path}/content/events`, { token: owner.key })
    expect(stream.status).toBe(200)
    await stream.until(() => stream.events.some(e => e.event === 'snapshot'), 'the snapshot')

    const write = await call(a.url, 'POST', `${owner.path}/content/set`, { token: owner.key, body: { path: 'greeting', value: { text: 'hello\nfrom A' } } })
    expect(write.status).toBe(200)
    await until(() => onB.length === 1, 'node B\'s feed hears the change')
    await stream.until(() => stream.events.some(e => e.event === 'change'), 'the change on node B\'s stream')
    expect(onA).toHaveLength(1)
    expect(onB[0]).toEqual(onA[0])
    expect(onB[0]).toMatchObject({ project: '@relayed/demo', version: 1, op: 'set', path: 'greeting', value: { text: 'hello\nfrom A' } })
    // One wire text: what B's stream sent is what A made.
    expect(wireOf(onB[0] as ChangeEntry)).toBe(wireOf(onA[0] as ChangeEntry))
    expect(stream.events.find(e => e.event === 'change')?.data).toBe(wireOf(onA[0] as ChangeEntry))
    // Not echoed back to A.
    await new Promise(resolve => setTimeout(resolve, 100))
    expect(onA).toHaveLength(1)
    stream.close()
  })

  // These nodes run without Socket.IO, hence without the periodic access re-check
  // (access-recheck.ts, started by the realtime layer): only the relay can end B's stream.
  it('a key revoked through node A ends the stream it opened on node B', async () => {
    const owner = await ownerWithProject(a.url, 'revoked')
    const stream = await openEvents(b.url, `${owner.path}/content/events`, { token: owner.key })
    expect(stream.status).toBe(200)
    await stream.until(() => stream.events.some(e => e.event === 'snapshot'), 'the snapshot')
    const keys = await call(a.url, 'GET', '/api/keys', { token: owner.session })
    const id = (keys.body.keys as Array<{ id: string }>)[0]?.id as string
    const revoked = await call(a.url, 'DELETE', `/api/keys/${id}`, { token: owner.session })
    expect(revoked.status, revoked.text).toBeLessThan(300)
    await stream.until(() => stream.ended, 'the stream on node B ends')
    expect(stream.events.find(e => e.event === 'revoked')?.data).toContain('INVALID_TOKEN')
  })
})
