// Presence between nodes without Socket.IO's Redis adapter (issue 27): each node sends a
// presence event to its own room and hands it to the change feed's relay
// (server/feed/redis-relay.ts), whose other nodes send it to theirs.
//
// Two nodes in this process on one SQLite data directory and a real redis-server, wired by
// createNode: Socket.IO keeps its in-memory adapter and Redis has no subscriber but the
// feed's channel; the events of members on one node reach observers on both nodes exactly
// once each, the same events in the same order. Then, without Redis: a publish Redis refuses
// is logged and counted, and nothing crashes.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { createClient } from 'redis'
import type { Socket } from 'socket.io-client'
import { Adapter } from 'socket.io-adapter'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ChangeFeed } from '../../server/feed/change-feed.js'
import { connectRedisRelay } from '../../server/feed/redis-relay.js'
import { Metrics } from '../../server/observability/metrics.js'
import type { RedisConnection } from '../../server/redis-connection.js'
import { RoomAdapter } from '../../server/realtime/room-adapter.js'
import { AccessEvents } from '../../server/services/access-events.js'
import type { PresenceSetAck } from '../../shared/presence.js'
import { ownerWithProject } from '../support/http.js'
import { requireRedisUnlessAbsentLocally, startRedisServer, type RedisServer } from '../support/redis-server.js'
import { PROJECT_ROOT } from '../support/server-process.js'
import { startNode, type Node } from '../limits/app-with-redis.js'
import { connect, Recorder, subscribe } from './client.js'

const hasRedis = requireRedisUnlessAbsentLocally()
const PROJECT = '@relaypres/demo'

const presenceSet = (socket: Socket, state: unknown) =>
  socket.timeout(10_000).emitWithAck('presence:set', { project: PROJECT, state }) as Promise<PresenceSetAck>

describe.skipIf(!hasRedis)('presence between two nodes over the change feed\'s relay', () => {
  let redis: RedisServer
  let a: Node
  let b: Node
  let owner: Awaited<ReturnType<typeof ownerWithProject>>
  const dir = mkdtempSync(join(tmpdir(), 'contentd-presence-relay-'))
  const sockets: Socket[] = []

  /** A connection to `node`, subscribed to the project, recording what it hears. */
  const onNode = async (node: Node, token: string) => {
    const recorder = new Recorder(await connect(node.url, token))
    sockets.push(recorder.socket)
    expect(await subscribe(recorder.socket, PROJECT)).toMatchObject({ ok: true })
    return recorder
  }

  beforeAll(async () => {
    redis = await startRedisServer()
    a = await startNode({ RATE_LIMIT: '0' }, redis.url, dir, { realtime: true })
    b = await startNode({ RATE_LIMIT: '0' }, redis.url, dir, { realtime: true })
    owner = await ownerWithProject(a.url, 'relaypres')
  })
  afterEach(() => { while (sockets.length) sockets.pop()?.disconnect() })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await redis?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('Socket.IO has no adapter between nodes: its own in-memory one, and no Socket.IO channel in Redis', async () => {
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>, devDependencies?: Record<string, string> }
    expect(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })).not.toContain('@socket.io/redis-adapter')
    // The in-memory adapter, or contentd's subclass of it that only walks a one-room broadcast itself (room-adapter.ts).
    for (const node of [a, b]) expect(node.node.realtime?.io.of('/').adapter.constructor).toBe(RoomAdapter)
    expect(Object.getPrototypeOf(RoomAdapter)).toBe(Adapter)
    const client = createClient({ url: redis.url })
    await client.connect()
    try {
      // Both nodes listen on the feed's one channel, and nobody on a pattern (the adapter did).
      expect(await client.sendCommand(['PUBSUB', 'CHANNELS'])).toEqual(['contentd:feed'])
      expect(await client.sendCommand(['PUBSUB', 'NUMSUB', 'contentd:feed'])).toEqual(['contentd:feed', 2])
      expect(await client.sendCommand(['PUBSUB', 'NUMPAT'])).toBe(0)
    } finally {
      await client.close()
    }
  })

  it('members on node A: observers on A and on B each get every event once, the same events in the same order; and back from B', async () => {
    const onA = await onNode(a, owner.session)
    const onB = await onNode(b, owner.session)
    const m1 = await onNode(a, owner.key)
    const m2 = await onNode(a, owner.key)
    const m3 = await onNode(a, owner.session)
    expect(await presenceSet(m1.socket, { n: 1 })).toEqual({ ok: true })
    expect(await presenceSet(m2.socket, { n: 2 })).toEqual({ ok: true })
    expect(await presenceSet(m3.socket, { n: 3 })).toEqual({ ok: true })
    expect(await presenceSet(m1.socket, { n: 1, editing: 'title' })).toEqual({ ok: true })
    expect(await m2.socket.timeout(10_000).emitWithAck('presence:leave', { project: PROJECT })).toEqual({ ok: true })
    const id3 = m3.socket.id
    m3.socket.disconnect()
    const expected = [
      ['join', m1.socket.id, { n: 1 }],
      ['join', m2.socket.id, { n: 2 }],
      ['join', id3, { n: 3 }],
      ['update', m1.socket.id, { n: 1, editing: 'title' }],
      ['leave', m2.socket.id, { n: 2 }],
      ['leave', id3, { n: 3 }]
    ]
    const seen = (recorder: Recorder) => recorder.presence.map(e => [e.type, e.member.id, e.member.state])
    for (const observer of [onA, onB]) await observer.until(() => observer.presence.length >= expected.length, 'the six events')
    // A double would come right behind its first (the sending node hearing its own message).
    await new Promise(resolve => setTimeout(resolve, 300))
    expect(seen(onA)).toEqual(expected)
    expect(seen(onB)).toEqual(expected)
    expect(onB.presence).toEqual(onA.presence)
    expect(onA.presence[0]).toEqual({ project: PROJECT, type: 'join', member: { id: m1.socket.id, actor: { type: 'key', id: expect.any(String), name: 'writer' }, state: { n: 1 }, since: expect.any(String) } })

    // And the other way: a member on B is announced once on A (and once on B).
    const m4 = await onNode(b, owner.key)
    expect(await presenceSet(m4.socket, { n: 4 })).toEqual({ ok: true })
    for (const observer of [onA, onB]) await observer.until(() => observer.presence.length > expected.length, 'the join from node B')
    await new Promise(resolve => setTimeout(resolve, 300))
    for (const observer of [onA, onB]) expect(seen(observer).slice(expected.length)).toEqual([['join', m4.socket.id, { n: 4 }]])
  })
})

describe('the relay when Redis refuses a publish', () => {
  it('logs it and counts it by kind, and the node goes on', async () => {
    const lines: string[] = []
    const logger = pino({ level: 'warn' }, { write: (line: string) => { lines.push(line) } })
    const metrics = new Metrics()
    // A Redis whose connections connect and subscribe but refuse every publish.
    const connection = {
      on: () => connection,
      connect: async () => {},
      subscribe: async () => {},
      publish: async () => { throw new Error('the connection is closed') },
      close: async () => {}
    }
    const base = { duplicate: () => connection } as unknown as RedisConnection
    const feed = new ChangeFeed({ onCommit: () => {} }, new AccessEvents())
    const relay = await connectRedisRelay(base, feed, logger, metrics)
    feed.announcePresence('prj_1', '{"type":"join"}')
    feed.announcePresence('prj_1', '{"type":"leave"}')
    feed.announceWebhooks('prj_1')
    await new Promise(resolve => setImmediate(resolve))
    const text = await metrics.registry.metrics()
    expect(text).toContain('contentd_relay_lost_messages_total{kind="presence"} 2')
    expect(text).toContain('contentd_relay_lost_messages_total{kind="webhooks"} 1')
    expect(lines.filter(line => line.includes('a change feed message to other nodes was lost'))).toHaveLength(3)
    await relay.close()
  })
})
