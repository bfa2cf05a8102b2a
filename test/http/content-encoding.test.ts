// The whole content compressed as negotiated (server/http/encoded-content.ts, docs/api.md#compressed-reads):
// raw bytes through node:http (fetch would decode them), decoded and compared with the
// uncompressed answer byte for byte.
import { request } from 'node:http'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMPRESS_MIN_BYTES } from '../../server/http/encoded-content.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

interface Raw { status: number, headers: Record<string, string | string[] | undefined>, body: Buffer }

function raw (base: string, method: string, path: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { method, headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

const records = Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['alpha', 'beta'], active: i % 2 === 0 }))
const LARGE = { counter: 0, items: records }

let app: TestApp
let key: string
let path: string

beforeAll(async () => {
  app = await startTestApp()
  ;({ key, path } = await ownerWithProject(app.url, 'alice'))
  expect((await call(app.url, 'POST', `${path}/content`, { token: key, body: LARGE })).status).toBe(200)
})
afterAll(async () => { await app.close() })

const get = (headers: Record<string, string> = {}, query = '', method = 'GET') =>
  raw(app.url, method, `${path}/content${query}`, { authorization: `Bearer ${key}`, ...headers })

const decode = { br: brotliDecompressSync, gzip: gunzipSync } as const

describe('GET …/content, whole content', () => {
  it('without Accept-Encoding answers the JSON as it is, with Vary: Accept-Encoding', async () => {
    const r = await get()
    expect(r.status).toBe(200)
    expect(r.headers['content-encoding']).toBeUndefined()
    expect(r.headers.vary).toMatch(/accept-encoding/i)
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(Number(r.headers['content-length'])).toBe(r.body.length)
    expect(JSON.parse(r.body.toString())).toEqual(LARGE)
  })

  for (const [accept, coding] of [['gzip', 'gzip'], ['br', 'br'], ['gzip, deflate, br, zstd', 'br'], ['br;q=0.5, gzip', 'gzip'], ['*', 'br'], ['br;q=0, *', 'gzip']] as const) {
    it(`Accept-Encoding: ${accept} → ${coding}, decoding to exactly the uncompressed body`, async () => {
      const plain = await get()
      const r = await get({ 'accept-encoding': accept })
      expect(r.status).toBe(200)
      expect(r.headers['content-encoding']).toBe(coding)
      expect(r.headers.vary).toMatch(/accept-encoding/i)
      expect(r.headers.etag).toBe(plain.headers.etag)
      expect(Number(r.headers['content-length'])).toBe(r.body.length)
      expect(r.body.length).toBeLessThan(plain.body.length / 4)
      expect(decode[coding](r.body).equals(plain.body)).toBe(true)
    })
  }

  for (const accept of ['identity', 'gzip;q=0, br;q=0', 'deflate']) {
    it(`Accept-Encoding: ${accept} → not compressed`, async () => {
      const r = await get({ 'accept-encoding': accept })
      expect(r.status).toBe(200)
      expect(r.headers['content-encoding']).toBeUndefined()
      expect(JSON.parse(r.body.toString())).toEqual(LARGE)
    })
  }

  it('answers a version the same bytes every time, and new bytes once a write makes a new version', async () => {
    const first = await get({ 'accept-encoding': 'br' })
    const again = await get({ 'accept-encoding': 'br' })
    expect(again.headers.etag).toBe(first.headers.etag)
    expect(again.body.equals(first.body)).toBe(true)
    expect((await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'counter', value: 5 } })).status).toBe(200)
    for (const coding of ['br', 'gzip'] as const) {
      const after = await get({ 'accept-encoding': coding })
      expect(after.headers.etag).not.toBe(first.headers.etag)
      const content = JSON.parse(decode[coding](after.body).toString()) as typeof LARGE
      expect(content.counter).toBe(5)
      expect(content.items).toEqual(records)
    }
  })

  it('HEAD answers the headers of the compressed GET, without a body', async () => {
    const full = await get({ 'accept-encoding': 'gzip' })
    const head = await get({ 'accept-encoding': 'gzip' }, '', 'HEAD')
    expect(head.status).toBe(200)
    expect(head.body.length).toBe(0)
    expect(head.headers['content-encoding']).toBe('gzip')
    expect(head.headers['content-length']).toBe(full.headers['content-length'])
    expect(head.headers.etag).toBe(full.headers.etag)
  })

  it('If-None-Match of the current version is still 304 with no body, whatever the encoding, and names Vary', async () => {
    const { headers } = await get()
    const r = await get({ 'accept-encoding': 'br', 'if-none-match': String(headers.etag) })
    expect(r.status).toBe(304)
    expect(r.body.length).toBe(0)
    expect(r.headers['content-encoding']).toBeUndefined()
    expect(r.headers.etag).toBe(headers.etag)
    expect(r.headers.vary).toMatch(/accept-encoding/i)
  })

  it(`leaves a content under ${COMPRESS_MIN_BYTES} bytes of JSON uncompressed`, async () => {
    const carol = await ownerWithProject(app.url, 'carol')
    expect((await call(app.url, 'POST', `${carol.path}/content`, { token: carol.key, body: { small: 'x'.repeat(COMPRESS_MIN_BYTES - 20) } })).status).toBe(200)
    const r = await raw(app.url, 'GET', `${carol.path}/content`, { authorization: `Bearer ${carol.key}`, 'accept-encoding': 'gzip, br' })
    expect(r.body.length).toBeLessThan(COMPRESS_MIN_BYTES)
    expect(r.headers['content-encoding']).toBeUndefined()
    expect(r.headers.vary).toMatch(/accept-encoding/i)
  })

  it('?path= and ?version= answers are not compressed', async () => {
    const part = await get({ 'accept-encoding': 'gzip, br' }, '?path=items')
    expect(part.headers['content-encoding']).toBeUndefined()
    expect(JSON.parse(part.body.toString())).toEqual(records)
    const past = await get({ 'accept-encoding': 'gzip, br' }, '?version=1')
    expect(past.status).toBe(200)
    expect(past.headers['content-encoding']).toBeUndefined()
    expect(JSON.parse(past.body.toString())).toEqual(LARGE)
  })
})
