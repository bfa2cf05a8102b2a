// The request log middleware in both modes: full pino-http (LOG_LEVEL info and below) and the
// quiet path used above info, which must still echo request ids and log server errors.
import express from 'express'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { requestLog } from '../../server/http/request-log.js'
import { until } from '../support/wait.js'

const servers: Array<{ close (): void }> = []
afterEach(() => { for (const s of servers.splice(0)) s.close() })

async function appWith (level: 'info' | 'warn') {
  const lines: Array<Record<string, any>> = []
  const sink = new Writable({ write (chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const logger = pino({ level }, sink)
  const app = express()
  app.use(requestLog(logger))
  // The request log writes its line when a response finishes; this listener comes after its
  // own, so once it has counted a response, that response's line (if any) is written.
  let finished = 0
  app.use((_req, res, next) => { res.on('finish', () => { finished++ }); next() })
  app.get('/ok', (_req, res) => { res.json({ ok: true }) })
  app.get('/boom', (req, res) => { req.log.warn('about to fail'); res.status(500).json({ ok: false }) })
  const server = app.listen(0, '127.0.0.1')
  servers.push(server)
  await new Promise(resolve => server.once('listening', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  /** Resolves once `count` responses have finished (and been logged). */
  const logged = (count: number) => until(() => finished >= count, `${count} finished responses`)
  return { base, lines, logged }
}

describe.each(['info', 'warn'] as const)('request log at level %s', level => {
  it('echoes a sane X-Request-Id and makes one up otherwise', async () => {
    const { base } = await appWith(level)
    expect((await fetch(`${base}/ok`, { headers: { 'x-request-id': 'trace-1' } })).headers.get('x-request-id')).toBe('trace-1')
    const made = (await fetch(`${base}/ok`, { headers: { 'x-request-id': 'bad id with spaces' } })).headers.get('x-request-id')
    expect(made).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('logs a server error with the request id, through req.log too', async () => {
    const { base, lines, logged } = await appWith(level)
    await fetch(`${base}/boom`, { headers: { 'x-request-id': 'trace-500' } })
    await logged(1)
    const errorLine = lines.find(l => l.level === 50)
    expect(errorLine?.req?.id).toBe('trace-500')
    expect(errorLine?.res?.statusCode).toBe(500)
    expect(lines.find(l => l.msg === 'about to fail')?.req?.id).toBe('trace-500')
  })
})

it('logs successful requests at info and not above it', async () => {
  const info = await appWith('info')
  await fetch(`${info.base}/ok`)
  const warn = await appWith('warn')
  await fetch(`${warn.base}/ok`)
  await info.logged(1)
  await warn.logged(1)
  expect(info.lines.filter(l => l.res?.statusCode === 200)).toHaveLength(1)
  expect(warn.lines).toHaveLength(0)
})
