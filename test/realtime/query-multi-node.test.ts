// Live queries on two real server processes sharing one SQLite data directory, with a real
// redis-server between them (docs/design.md §16): a query subscriber on node 2 follows writes
// made through both nodes at once, every event chaining by `prev`, and its result always ends
// equal to the one-shot read. Skipped, loudly, only off CI when redis-server is missing.
import { describe, expect, it } from 'vitest'
import type { QueryEventPayload } from '../../shared/api/queries.js'
import { call, ownerWithProject } from '../support/http.js'
import { hasRedis, twoNodesWithRedis } from './two-nodes.js'

describe.skipIf(!hasRedis)('live queries on two nodes with Redis', () => {
  const nodes = twoNodesWithRedis()

  it('a subscriber on node 2 follows writes made through both nodes', async () => {
    const { key, path } = await ownerWithProject(nodes.node1.url, 'mq')
    const players = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, { score: i }]))
    expect((await call(nodes.node1.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'board', value: players } })).status).toBe(200)
    const socket = await nodes.connect(nodes.node2.url, key)
    const events: QueryEventPayload[] = []
    socket.on('query', (e: QueryEventPayload) => events.push(e))
    const query = { orderBy: 'score', direction: 'desc', limit: 5 }
    const ack = await socket.timeout(10_000).emitWithAck('subscribe', { project: '@mq/demo', path: 'board', query }) as { ok: boolean, version: number, items: Array<{ key: string, value: unknown }> }
    expect(ack).toMatchObject({ ok: true, version: 1 })
    expect(ack.items.map(i => i.key)).toEqual(['p29', 'p28', 'p27', 'p26', 'p25'])

    const writes = Array.from({ length: 40 }, (_, i) => call(i % 2 === 0 ? nodes.node1.url : nodes.node2.url, 'POST', `${path}/content/increment`,
      { token: key, body: { path: `board.p${(i * 7) % 30}.score`, value: 3 } }))
    expect((await Promise.all(writes)).every(r => r.status === 200)).toBe(true)

    const expected = (await call(nodes.node1.url, 'GET', `${path}/content?path=board&orderBy=score&direction=desc&limit=5`, { token: key })).body as { version: number, items: Array<{ key: string, value: unknown }> }
    expect(expected.version).toBe(41)
    // Replay the events over the ack: keys in order, values kept for the unchanged.
    let items = ack.items
    let last = ack.version
    const deadline = Date.now() + 10_000
    while (JSON.stringify(items) !== JSON.stringify(expected.items) && Date.now() < deadline) {
      await new Promise(resolve => setTimeout(resolve, 20))
      for (const event of events.splice(0)) {
        expect(event.prev).toBe(last)
        last = event.version
        const before = new Map(items.map(i => [i.key, i.value]))
        items = event.items.map(i => ({ key: i.key, value: 'value' in i ? i.value : before.get(i.key) }))
      }
    }
    expect(items).toEqual(expected.items)
  })
})
