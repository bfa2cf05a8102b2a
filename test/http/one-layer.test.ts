// asOneLayer (server/http/fast-path.ts) runs the app's before-routing middleware as one
// router layer, and the quiet request log carries the metrics on its one 'finish' listener:
// both must behave as the separate layers and listeners did.
import express, { type RequestHandler } from 'express'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { asOneLayer, type RequestFollower } from '../../server/http/fast-path.js'
import { requestLog } from '../../server/http/request-log.js'
import { until } from '../support/wait.js'

const servers: Array<{ close (): void }> = []
afterEach(() => { for (const s of servers.splice(0)) s.close() })

async function listen (app: express.Express): Promise<string> {
  const server = app.listen(0, '127.0.0.1')
  servers.push(server)
  await new Promise(resolve => server.once('listening', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('asOneLayer', () => {
  async function appWith (handlers: RequestHandler[]) {
    const ran: string[] = []
    const app = express()
    app.use(asOneLayer(handlers.map((handler, i) => ((req, res, next) => { ran.push(`h${i}`); handler(req, res, next) }) as RequestHandler)))
    app.get('/x', (_req, res) => { ran.push('route'); res.json({ ok: true }) })
    app.use(((error: Error, _req, res, _next) => { ran.push('error'); res.status(418).json({ error: error.message }) }) as express.ErrorRequestHandler)
    return { base: await listen(app), ran }
  }

  it('runs the handlers in order, then routing', async () => {
    const { base, ran } = await appWith([(_q, res, next) => { res.setHeader('X-A', '1'); next() }, (_q, res, next) => { res.setHeader('X-B', '2'); next() }])
    const r = await fetch(`${base}/x`)
    expect(r.status).toBe(200)
    expect([r.headers.get('x-a'), r.headers.get('x-b')]).toEqual(['1', '2'])
    expect(ran).toEqual(['h0', 'h1', 'route'])
  })

  it('stops where a handler answers, and sends a thrown or passed error to the error handler', async () => {
    const answers = await appWith([(_q, res) => { res.status(204).end() }, (_q, _r, next) => { next() }])
    expect((await fetch(`${answers.base}/x`)).status).toBe(204)
    expect(answers.ran).toEqual(['h0'])

    const throws = await appWith([(_q, _r, next) => { next() }, () => { throw new Error('thrown') }, (_q, _r, next) => { next() }])
    const thrown = await fetch(`${throws.base}/x`)
    expect([thrown.status, await thrown.json()]).toEqual([418, { error: 'thrown' }])
    expect(throws.ran).toEqual(['h0', 'h1', 'error'])

    const passes = await appWith([(_q, _r, next) => { next(new Error('passed')) }, (_q, _r, next) => { next() }])
    const passed = await fetch(`${passes.base}/x`)
    expect([passed.status, await passed.json()]).toEqual([418, { error: 'passed' }])
    expect(passes.ran).toEqual(['h0', 'error'])
  })
})

describe.each(['info', 'warn'] as const)('the request log with a follower, at level %s', level => {
  it('begins and ends the follower once per request, after the log has its status', async () => {
    const sink = new Writable({ write (_chunk, _enc, done) { done() } })
    const events: string[] = []
    const follower: RequestFollower = {
      begin: () => { events.push('begin') },
      end: res => { events.push(`end ${res.statusCode}`) }
    }
    // Node's own 'finish' listener is there on every response; count what the log adds.
    let nodeOwn = -1
    const bare = express()
    bare.get('/x', (_req, res) => { nodeOwn = res.listenerCount('finish'); res.end() })
    await fetch(`${await listen(bare)}/x`)
    let listeners = -1
    const app = express()
    app.use(requestLog(pino({ level }, sink), follower))
    app.get('/x', (_req, res) => { listeners = res.listenerCount('finish'); res.status(201).json({ ok: true }) })
    const base = await listen(app)
    await fetch(`${base}/x`)
    await fetch(`${base}/x`)
    await until(() => events.length >= 4, 'two requests followed')
    expect(events).toEqual(['begin', 'end 201', 'begin', 'end 201'])
    // Above info the log's one listener carries the follower; at info pino-http has its own.
    expect(nodeOwn).toBeGreaterThanOrEqual(0)
    if (level === 'warn') expect(listeners).toBe(nodeOwn + 1)
    else expect(listeners).toBeGreaterThanOrEqual(nodeOwn + 2)
  })
})
