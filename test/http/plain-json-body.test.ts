// jsonBody (server/http/body.ts) reads the common request itself (Content-Length, no coding,
// no Content-Type or exactly application/json) and leaves the rest to body-parser. The same
// bytes sent both ways (`application/json`, and `application/json; charset=utf-8`, which
// body-parser reads) must get the same answer, byte for byte.
import express from 'express'
import fc from 'fast-check'
import type { AddressInfo } from 'node:net'
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { jsonBody, plainJsonLength } from '../../server/http/body.js'
import { errorHandler } from '../../server/http/errors.js'

const LIMIT = 1024
let base = ''
let close = () => {}

beforeAll(async () => {
  const app = express()
  app.post('/echo', jsonBody(LIMIT), (req, res) => { res.json({ body: req.body as unknown }) })
  app.use(errorHandler)
  const server = app.listen(0, '127.0.0.1')
  await new Promise(resolve => server.once('listening', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  close = () => server.close()
})
afterAll(() => { close() })

async function send (body: Buffer, contentType: string): Promise<string> {
  const r = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': contentType }, body: new Uint8Array(body) })
  return `${r.status} ${await r.text()}`
}

/** The answer read here and the answer body-parser gives, for the same bytes. */
async function bothWays (body: Buffer): Promise<[string, string]> {
  return [await send(body, 'application/json'), await send(body, 'application/json; charset=utf-8')]
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf])

describe('jsonBody read without body-parser', () => {
  it.each([
    ['an object', Buffer.from('{"path":"counter","value":1}')],
    ['a number', Buffer.from('42')],
    ['a string with spaces around', Buffer.from('  "x"\n')],
    ['null', Buffer.from('null')],
    ['invalid JSON', Buffer.from('{"a":')],
    ['a byte order mark, then JSON', Buffer.concat([BOM, Buffer.from('{"a":1}')])],
    ['a byte order mark alone', BOM],
    ['invalid UTF-8 inside a string', Buffer.from([0x22, 0xc3, 0x28, 0xff, 0xe2, 0x82, 0x22])],
    ['non-ASCII text', Buffer.from('{"k":"é ✓ 😀"}')],
    ['whitespace only', Buffer.from('   ')]
  ])('answers %s as body-parser does', async (_name, body) => {
    const [plain, parsed] = await bothWays(body)
    expect(plain).toBe(parsed)
  })

  it('answers random bytes as body-parser does', async () => {
    await fc.assert(fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 64 }), async bytes => {
      const [plain, parsed] = await bothWays(Buffer.from(bytes))
      expect(plain).toBe(parsed)
    }), { numRuns: 60 })
  })

  it('answers a body cut short (the client gone) without taking the server down', async () => {
    await new Promise<void>(resolve => {
      const req = request(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '100' } })
      req.on('error', () => resolve())
      req.write('{"a":')
      setTimeout(() => { req.destroy(); resolve() }, 50)
    })
    expect(await send(Buffer.from('{"after":true}'), 'application/json')).toBe('200 {"body":{"after":true}}')
  })

  it('takes only the plain requests; body-parser reads the others', () => {
    const req = (headers: Record<string, string>) => ({ headers, readable: true, socket: { writable: true } }) as never
    expect(plainJsonLength(req({ 'content-length': '10' }), LIMIT)).toBe(10)
    expect(plainJsonLength(req({ 'content-length': '10', 'content-type': 'application/json' }), LIMIT)).toBe(10)
    expect(plainJsonLength(req({ 'content-length': String(LIMIT) }), LIMIT)).toBe(LIMIT)
    const others: Array<Record<string, string>> = [
      { 'content-length': '0' },
      { 'content-length': String(LIMIT + 1) },
      { 'transfer-encoding': 'chunked' },
      { 'content-length': '10', 'content-encoding': 'gzip' },
      { 'content-length': '10', 'content-encoding': 'identity' },
      { 'content-length': '10', 'content-type': 'application/json; charset=utf-16' },
      { 'content-length': '10', 'content-type': 'text/plain' },
      {}
    ]
    for (const headers of others) expect(plainJsonLength(req(headers), LIMIT), JSON.stringify(headers)).toBeNull()
    expect(plainJsonLength({ headers: { 'content-length': '10' }, readable: false, socket: { writable: true } } as never, LIMIT)).toBeNull()
  })
})
