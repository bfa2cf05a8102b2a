// Finding "concurrent subscribes get a false 403" (SECURITY.md), client side: several live
// copies of one project share one server subscription, and after a reconnect the SDK
// re-subscribes once per project, not once per copy. Against the real server process; the
// server's count of subscribe events comes from /metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type Subscription } from '../../shared/client/index.js'
import type { JsonObject } from '../../shared/json.js'
import { call, createProject, ownerWithProject } from '../support/http.js'
import { metricValue } from '../support/metrics.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

const METRICS_TOKEN = 'metrics-token-for-the-sdk-tests'
const SUBSCRIBES = 'contentd_realtime_events_total{event="subscribe"}'

let server: ServerProcess
let owner: { session: string, key: string, path: string }

beforeAll(async () => {
  server = await startServerProcess({ env: { METRICS_TOKEN } })
  owner = await ownerWithProject(server.url, 'copies')
  await createProject(server.url, owner.session, 'other')
})
afterAll(async () => { await server.stop() })

/** Resolves when `sub`'s copy reaches `version`. */
function reach (sub: Subscription, version: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  return new Promise((resolve, reject) => {
    const check = () => {
      if ((sub.version ?? -1) >= version) { resolve(); return }
      if (Date.now() > deadline) { reject(new Error(`copy stuck at version ${sub.version}, wanted ${version}`)); return }
      setTimeout(check, 10)
    }
    check()
  })
}

describe('live copies of one project share one subscription', () => {
  it('three subscribe() calls on one project all get the content, and the server sees one subscribe (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const before = await metricValue(server.url, METRICS_TOKEN, SUBSCRIBES)
      const client = createClient({ baseUrl: server.url, token: owner.key, socketOptions: { transports: ['websocket'] } })
      try {
        const copies = [0, 1, 2].map(() => client.project('@copies/demo').subscribe(() => {}))
        await Promise.all(copies.map(c => c.ready))
        const write = await call(server.url, 'POST', `${owner.path}/content/increment`, { token: owner.key, body: { path: 'round' } })
        const version = Number(JSON.parse(write.headers.get('etag') ?? '0'))
        await Promise.all(copies.map(c => reach(c, version)))
        for (const copy of copies) expect(copy.content, `round ${round}`).toEqual({ round: round + 1 })
        expect(await metricValue(server.url, METRICS_TOKEN, SUBSCRIBES) - before, `round ${round}`).toBe(1)
      } finally {
        client.close()
      }
    }
  })

  it('after a reconnect, one subscribe per project — not one per copy — and every copy catches up', async () => {
    const client = createClient({ baseUrl: server.url, token: owner.key, socketOptions: { transports: ['websocket'], reconnectionDelay: 100, reconnectionDelayMax: 200 } })
    let restarted: ServerProcess | undefined
    try {
      const demo = [0, 1, 2].map(() => client.project('@copies/demo').subscribe(() => {}))
      const other = [0, 1].map(() => client.project('@copies/other').subscribe(() => {}))
      await Promise.all([...demo, ...other].map(c => c.ready))
      // A real reconnect: the server goes away and comes back on the same port and data.
      await server.stop()
      restarted = await startServerProcess({ port: server.port, dataDir: server.dataDir, env: { METRICS_TOKEN } })
      server = restarted
      const write = await call(server.url, 'POST', `${owner.path}/content/set`, { token: owner.key, body: { path: 'after', value: true } })
      const version = Number(JSON.parse(write.headers.get('etag') ?? '0'))
      await Promise.all(demo.map(c => reach(c, version)))
      for (const copy of demo) expect(copy.content).toMatchObject({ after: true } satisfies JsonObject)
      // Each copy resumed from its version (subscribe with since), none took a new snapshot.
      expect(demo.map(c => [c.snapshots, c.resumes])).toEqual([[1, 1], [1, 1], [1, 1]])
      expect(await metricValue(server.url, METRICS_TOKEN, SUBSCRIBES)).toBe(2)
    } finally {
      client.close()
    }
  })
})
