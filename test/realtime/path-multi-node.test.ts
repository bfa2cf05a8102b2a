// Live paths across two real server processes with a real redis-server between them
// (docs/design.md §15): a path subscription and a path event stream on node 2 get, from
// writers on both nodes at once, exactly the changes that touch the path, each once, in
// order, with an unbroken `prev` chain; a member removed on node 1 loses node 2's path
// subscription. Skipped, loudly, only off CI when redis-server is missing.
import { describe, expect, it } from 'vitest'
import type { PathChangeEvent } from '../../shared/live-path.js'
import { call, ownerWithProject, signup } from '../support/http.js'
import { openEvents } from '../support/sse.js'
import { hasRedis, twoNodesWithRedis } from './two-nodes.js'

describe.skipIf(!hasRedis)('live paths on two nodes with Redis', { timeout: 60_000 }, () => {
  const nodes = twoNodesWithRedis()
  const { open } = nodes

  it('writers on both nodes: node 2\'s path subscription and path stream get exactly the changes that touch the path, in order', async () => {
    const { key, path } = await ownerWithProject(nodes.node1.url, 'pathnodes')
    const watcher = await open(nodes.node2.url, key)
    expect(await watcher.socket.timeout(10_000).emitWithAck('subscribe', { project: '@pathnodes/demo', path: 'votes' })).toMatchObject({ ok: true, version: 0, exists: false })
    const stream = await openEvents(nodes.node2.url, `${path}/content/events?path=votes`, { token: key })
    nodes.closeAfter(stream)
    await stream.until(() => stream.events.length === 1, 'the snapshot')
    const writes = Array.from({ length: 60 }, (_, i) =>
      call(i % 2 === 0 ? nodes.node1.url : nodes.node2.url, 'POST', `${path}/content/increment`, { token: key, body: { path: i % 3 === 0 ? 'votes.up' : 'other' } }))
    const answers = await Promise.all(writes)
    expect(answers.every(r => r.status === 200)).toBe(true)
    const log = await call(nodes.node1.url, 'GET', `${path}/content/changes?limit=1000`, { token: key })
    const touching = (log.body.changes as Array<{ version: number, path: string }>).filter(change => change.path === 'votes.up').map(change => change.version)
    expect(touching).toHaveLength(20)
    await watcher.until(() => watcher.changes.length === 20, '20 path changes')
    await stream.until(() => stream.changes().length === 20, '20 path events')
    const events = watcher.changes as unknown as PathChangeEvent[]
    expect(events.map(change => change.version)).toEqual(touching)
    expect(events.map(change => change.prev)).toEqual([0, ...touching.slice(0, -1)])
    expect(stream.changes().map(change => change.version)).toEqual(touching)
  })

  it('a member removed on node 1 loses its path subscription on node 2', async () => {
    const { session, path } = await ownerWithProject(nodes.node1.url, 'pathnodesrevoke')
    const viewer = await signup(nodes.node1.url, 'pathnodesviewer')
    expect((await call(nodes.node1.url, 'PUT', `${path}/members/pathnodesviewer`, { token: session, body: { role: 'viewer' } })).status).toBe(200)
    const watcher = await open(nodes.node2.url, viewer)
    expect(await watcher.socket.timeout(10_000).emitWithAck('subscribe', { project: '@pathnodesrevoke/demo', path: 'votes' })).toMatchObject({ ok: true })
    expect((await call(nodes.node1.url, 'DELETE', `${path}/members/pathnodesviewer`, { token: session })).status).toBe(200)
    await watcher.until(() => watcher.revoked.length > 0, 'revoked on node 2', 10_000)
    expect(watcher.revoked[0]).toMatchObject({ code: 'FORBIDDEN', project: '@pathnodesrevoke/demo', path: 'votes' })
  })
})
