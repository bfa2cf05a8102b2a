// The console's feature probe (console/features.ts), over real HTTP: against contentd as it
// is (the change log and webhooks, not yet Server-Sent Events or the schema), and against a server that answers some of the
// endpoints the way docs/design.md §9–§12 says they will, including an event stream that
// never ends (the probe must not wait for it).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { probeFeatures } from '../../console/features.js'
import { signup, createProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
let token: string
let other: Server
let otherUrl: string
const seen: string[] = []

beforeAll(async () => {
  app = await startTestApp()
  token = await signup(app.url, 'prober')
  await createProject(app.url, token, 'demo')
  // Answers as a server with Server-Sent Events and a schema store, but no change log or webhooks.
  other = createServer((req, res) => {
    seen.push(`${req.url} ${req.headers.authorization}`)
    const json = (status: number, body: object) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    if (req.url === '/api/@prober/demo/content/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(': open\n\n') // and never ends
      return
    }
    if (req.url === '/api/@prober/demo/schema') return json(404, { message: 'This project has no schema', code: 'SCHEMA_NOT_FOUND' })
    json(404, { message: 'No such endpoint', code: 'NOT_FOUND' })
  })
  await new Promise<void>(resolve => other.listen(0, '127.0.0.1', resolve))
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`
})
afterAll(async () => {
  other?.closeAllConnections()
  await new Promise(resolve => other?.close(resolve))
  await app?.close()
})

describe('probeFeatures', () => {
  it('finds the change log, Server-Sent Events, webhooks and the schema on contentd as it is, and not the features still being built', async () => {
    expect(await probeFeatures(app.url, '@prober/demo', token)).toEqual({ history: true, events: true, webhooks: true, schema: true, keyNarrowing: false, presence: true })
  })

  it('finds the endpoints a server has, without waiting for an event stream to end', { timeout: 10_000 }, async () => {
    expect(await probeFeatures(otherUrl, '@prober/demo', 'cds_token')).toEqual({ history: false, events: true, webhooks: false, schema: true, keyNarrowing: false, presence: true })
    expect(seen.sort()).toEqual([
      '/api/@prober/demo/content/changes?limit=1 Bearer cds_token',
      '/api/@prober/demo/content/events Bearer cds_token',
      '/api/@prober/demo/schema Bearer cds_token',
      '/api/@prober/demo/webhooks Bearer cds_token'
    ])
  })

  it('counts a server it cannot reach as having none of them', async () => {
    const closed = createServer()
    await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`
    await new Promise(resolve => closed.close(resolve))
    // Presence cannot be probed: this build of the console assumes it (features.ts, static).
    expect(await probeFeatures(url, '@prober/demo', token)).toEqual({ history: false, events: false, webhooks: false, schema: false, keyNarrowing: false, presence: true })
  })
})
