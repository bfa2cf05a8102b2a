// precomputedHeaders() (server/http/fast-path.ts) precomputes what helmet() and cors() send. These tests put it side by
// side with the two packages in front of the same routes and compare every header of the
// answers, for ordinary requests, preflights and both CORS settings.
import cors from 'cors'
import express, { type RequestHandler } from 'express'
import helmet from 'helmet'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { precomputedHeaders } from '../../server/http/fast-path.js'

const EXPOSED = ['ETag', 'X-Request-Id', 'Retry-After']

function appWith (...headers: RequestHandler[]) {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use(...headers)
  app.post('/thing', (_req, res) => { res.json({ ok: true }) })
  app.get('/thing', (_req, res) => { res.json({ ok: true }) })
  return app
}

const servers: Array<{ close (): void }> = []
async function listen (app: express.Express): Promise<string> {
  const server = app.listen(0, '127.0.0.1')
  servers.push(server)
  await new Promise(resolve => server.once('listening', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function comparable (response: Response): Record<string, string> {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => { headers[name] = value })
  delete headers.date
  delete headers['keep-alive']
  return headers
}

const REQUESTS: Array<{ name: string, init: RequestInit }> = [
  { name: 'POST without Origin', init: { method: 'POST', body: '{}' } },
  { name: 'GET with Origin', init: { headers: { origin: 'http://allowed.example' } } },
  { name: 'GET from another origin', init: { headers: { origin: 'http://other.example' } } },
  { name: 'preflight', init: { method: 'OPTIONS', headers: { origin: 'http://allowed.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } } }
]

describe.each([
  { origins: '*' as const },
  { origins: ['http://allowed.example'] }
])('precomputedHeaders with CORS_ORIGINS $origins', ({ origins }) => {
  let reference: string
  let precomputed: string
  beforeAll(async () => {
    reference = await listen(appWith(helmet(), cors({ origin: origins, exposedHeaders: EXPOSED })))
    precomputed = await listen(appWith(precomputedHeaders(origins, EXPOSED)))
  })

  it.each(REQUESTS)('$name: the same status and headers as helmet() + cors()', async ({ init }) => {
    const [expected, actual] = await Promise.all([fetch(`${reference}/thing`, init), fetch(`${precomputed}/thing`, init)])
    expect(actual.status).toBe(expected.status)
    expect(comparable(actual)).toEqual(comparable(expected))
    expect(actual.headers.get('content-security-policy')).toContain("default-src 'self'")
  })
})

afterAll(() => { for (const server of servers) server.close() })
