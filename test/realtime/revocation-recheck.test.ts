// Revocation always reaches live streams (docs/design.md §13b, issue 26 finding 5): two real
// server processes on one SQLite file with a real redis-server between them. A key revoked
// by the admin CLI (a third process, whose access event reaches no node), and revocations
// made while Redis is down (the one message is lost), still end every Server-Sent Events
// stream and Socket.IO subscription of that identity on both nodes within 5 s: each node
// re-checks its live streams against the store.
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, createKey, ownerWithProject, signup } from '../support/http.js'
import { openEvents, type SseStream } from '../support/sse.js'
import { makeDataDir, PROJECT_ROOT, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { requireRedisUnlessAbsentLocally, startRedisServer, type RedisServer } from '../support/redis-server.js'
import { connect, Recorder, subscribe } from './client.js'

const hasRedis = requireRedisUnlessAbsentLocally()
const CLI = join(PROJECT_ROOT, 'dist/server/cli/main.js')
/** docs/design.md §13b: every stream of the identity ends within 5 s of the revocation. */
const WITHIN_MS = 5000

describe.skipIf(!hasRedis)('revocation reaches live streams on every node (two nodes, Redis)', () => {
  let redis: RedisServer
  let nodes: ServerProcess[] = []
  const dataDir = makeDataDir()
  const sockets: Socket[] = []
  const streams: SseStream[] = []

  beforeAll(async () => {
    redis = await startRedisServer()
    const env = { REDIS_URL: redis.url }
    nodes = [await startServerProcess({ dataDir, env }), await startServerProcess({ dataDir, env })]
  })
  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    for (const stream of streams) stream.close()
    await Promise.all(nodes.map(node => node.stop()))
    await redis?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  /** On every node: an SSE stream and a subscribed socket, both with `token`. */
  const watchEverywhere = async (token: string, project: string, path: string) => {
    const watchers = []
    for (const node of nodes) {
      const stream = await openEvents(node.url, `${path}/content/events`, { token })
      streams.push(stream)
      expect(stream.status).toBe(200)
      await stream.until(() => stream.events.some(e => e.event === 'snapshot'), 'the snapshot')
      const socket = await connect(node.url, token)
      sockets.push(socket)
      const recorder = new Recorder(socket)
      expect(await subscribe(socket, project)).toMatchObject({ ok: true })
      watchers.push({ stream, recorder })
    }
    return watchers
  }

  const cli = (args: string[]) => new Promise<number | null>((resolve, reject) => {
    // No REDIS_URL: as an operator runs it, the CLI reaches the store only.
    const child = spawn(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, stdio: 'ignore' })
    child.on('error', reject)
    child.on('close', resolve)
  })

  it('a key revoked with `contentd key revoke` ends its SSE streams and Socket.IO connections on both nodes within 5 s', async () => {
    const { session, path } = await ownerWithProject(nodes[0]!.url, 'clirevoke')
    const doomed = await createKey(nodes[0]!.url, session, { name: 'doomed', permission: 'read' })
    const watchers = await watchEverywhere(doomed.key, '@clirevoke/demo', path)
    // The owner's own streams, on another credential, are not touched.
    const [bystander] = await watchEverywhere(session, '@clirevoke/demo', path)

    expect(await cli(['key', 'revoke', doomed.id])).toBe(0)
    for (const { stream, recorder } of watchers) {
      await stream.until(() => stream.ended, 'the SSE stream to end', WITHIN_MS)
      expect(stream.events.at(-1)).toMatchObject({ event: 'revoked' })
      expect(JSON.parse(stream.events.at(-1)!.data)).toMatchObject({ code: 'INVALID_TOKEN' })
      await recorder.until(() => recorder.disconnectReason !== null, 'the socket to be disconnected', WITHIN_MS)
      expect(recorder.revoked).toMatchObject([{ code: 'INVALID_TOKEN' }])
    }
    expect(bystander!.stream.ended).toBe(false)
    expect(bystander!.recorder.socket.connected).toBe(true)
  })

  it('with Redis down at the time: a revoked key, a logout and a removed member end the streams on the other node within 5 s', async () => {
    const owner = await ownerWithProject(nodes[0]!.url, 'outagerevoke')
    const project = '@outagerevoke/demo'
    const doomed = await createKey(nodes[0]!.url, owner.session, { name: 'doomed', permission: 'read' })
    const second = (await call(nodes[0]!.url, 'POST', '/api/auth/login', { body: { username: 'outagerevoke', password: 'correct horse battery staple' } })).body.token as string
    const member = await signup(nodes[0]!.url, 'outagerevoke-member')
    expect((await call(nodes[0]!.url, 'PUT', `${owner.path}/members/@outagerevoke-member`, { token: owner.session, body: { role: 'viewer' } })).status).toBe(200)
    const byKey = await watchEverywhere(doomed.key, project, owner.path)
    const bySession = await watchEverywhere(second, project, owner.path)
    const byMember = await watchEverywhere(member, project, owner.path)

    await redis.stop()
    try {
      // All made through node 1: node 2 never hears of them.
      expect((await call(nodes[0]!.url, 'DELETE', `/api/keys/${doomed.id}`, { token: owner.session })).status).toBe(200)
      expect((await call(nodes[0]!.url, 'POST', '/api/auth/logout', { token: second })).status).toBe(200)
      expect((await call(nodes[0]!.url, 'DELETE', `${owner.path}/members/@outagerevoke-member`, { token: owner.session })).status).toBe(200)
      const onNode2 = [byKey[1]!, bySession[1]!]
      for (const { stream, recorder } of onNode2) {
        await stream.until(() => stream.ended, 'the SSE stream to end', WITHIN_MS)
        expect(JSON.parse(stream.events.at(-1)!.data)).toMatchObject({ code: 'INVALID_TOKEN' })
        await recorder.until(() => recorder.disconnectReason !== null, 'the socket to be disconnected', WITHIN_MS)
      }
      const removed = byMember[1]!
      await removed.stream.until(() => removed.stream.ended, 'the removed member\'s SSE stream to end', WITHIN_MS)
      expect(JSON.parse(removed.stream.events.at(-1)!.data)).toMatchObject({ code: 'FORBIDDEN' })
      await removed.recorder.until(() => removed.recorder.revoked.length > 0, 'the removed member\'s subscription to end', WITHIN_MS)
      expect(removed.recorder.revoked).toMatchObject([{ project, code: 'FORBIDDEN' }])
      // Node 1 made them: its own streams ended at once.
      for (const { stream } of [byKey[0]!, bySession[0]!, byMember[0]!]) expect(stream.ended).toBe(true)
    } finally {
      redis = await startRedisServer(redis.port)
    }
  })

  it('a project deleted while Redis is down ends its streams on the other node within 5 s', async () => {
    const owner = await ownerWithProject(nodes[0]!.url, 'outagedelete')
    const watchers = await watchEverywhere(owner.key, '@outagedelete/demo', owner.path)
    await redis.stop()
    try {
      expect((await call(nodes[0]!.url, 'DELETE', owner.path, { token: owner.session })).status).toBe(200)
      const { stream, recorder } = watchers[1]!
      await stream.until(() => stream.ended, 'the SSE stream to end', WITHIN_MS)
      expect(JSON.parse(stream.events.at(-1)!.data)).toMatchObject({ code: 'PROJECT_NOT_FOUND' })
      await recorder.until(() => recorder.revoked.length > 0, 'the subscription to end', WITHIN_MS)
      expect(recorder.revoked).toMatchObject([{ project: '@outagedelete/demo', code: 'PROJECT_NOT_FOUND' }])
    } finally {
      redis = await startRedisServer(redis.port)
    }
  })
})
