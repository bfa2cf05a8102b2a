// Idempotency-Key records live in the store (docs/design.md §10): a retry reaching another
// process on the same data (two servers on one SQLite file, as two nodes) is replayed, and so
// is a retry after both were killed with SIGKILL and one started again.
import { rmSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'

describe('Idempotency-Key across processes and restarts', () => {
  const dataDir = makeDataDir()
  const running: ServerProcess[] = []
  afterAll(async () => {
    for (const server of running) await server.stop('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('replays on another process and after kill -9, never applying twice', async () => {
    const a = await startServerProcess({ dataDir })
    const b = await startServerProcess({ dataDir })
    running.push(a, b)
    const { key, path } = await ownerWithProject(a.url, 'ivy')
    const request = { token: key, headers: { 'idempotency-key': 'invoice-7' }, body: { operations: [{ op: 'increment', path: 'total', value: 70 }, { op: 'push', path: 'paid', value: 7 }] } }
    const first = await call(a.url, 'POST', `${path}/content/batch`, request)
    expect(first.status, first.text).toBe(200)
    const onB = await call(b.url, 'POST', `${path}/content/batch`, request)
    expect([onB.status, onB.text, onB.headers.get('idempotent-replayed')]).toEqual([200, first.text, 'true'])

    await a.stop('SIGKILL')
    await b.stop('SIGKILL')
    const c = await startServerProcess({ dataDir })
    running.push(c)
    const afterRestart = await call(c.url, 'POST', `${path}/content/batch`, request)
    expect([afterRestart.status, afterRestart.text, afterRestart.headers.get('idempotent-replayed')]).toEqual([200, first.text, 'true'])
    const content = await call(c.url, 'GET', `${path}/content`, { token: key })
    expect([content.body, content.headers.get('etag')]).toEqual([{ total: 70, paid: [7] }, '"1"'])
  })
})
