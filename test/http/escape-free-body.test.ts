// A write's value is checked for lone surrogates only where one can be: decoded UTF-8 never
// holds one (the bytes that would spell one become U+FFFD), so only a \u escape of the body
// can put one in a string or key, and a body read by server/http/body.ts without any escape
// vouches for the whole value (shared/json.ts skips reading its strings). These writes go
// through the real route, as raw bytes, so every spelling of an escape is the client's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
let owner: Awaited<ReturnType<typeof ownerWithProject>>

beforeAll(async () => {
  app = await startTestApp()
  owner = await ownerWithProject(app.url, 'escapes')
})
afterAll(async () => {
  await app?.close()
})

/** POSTs `body` (raw bytes, as sent) to …/content/set; the status and the error code, if any. */
async function set (body: string | Uint8Array): Promise<{ status: number, code?: string }> {
  const r = await call(app.url, 'POST', `${owner.path}/content/set`, { token: owner.key, raw: body, headers: { 'content-type': 'application/json' } })
  return { status: r.status, ...(r.status === 200 ? {} : { code: (r.body as { code: string }).code }) }
}

async function valueAt (path: string): Promise<unknown> {
  const r = await call(app.url, 'GET', `${owner.path}/content?path=${path}`, { token: owner.key })
  expect(r.status, r.text).toBe(200)
  return r.body
}

describe('lone surrogates in a set body', () => {
  it.each([
    ['an escaped one in a string', '{"path":"a","value":{"s":["ok","x\\ud800"]}}'],
    ['an escaped one in a string, upper-case hex', '{"path":"a","value":"x\\uD800"}'],
    ['an escaped low one in a key', '{"path":"a","value":{"k\\uDFFF":1}}'],
    ['an escaped one after an escaped backslash', '{"path":"a","value":"\\\\\\udc00"}']
  ])('are refused: %s', async (_name, body) => {
    expect(await set(body)).toEqual({ status: 400, code: 'INVALID_VALUE' })
  })

  it('escaped pairs, in either case, are accepted and kept', async () => {
    expect(await set('{"path":"pair","value":{"k\\uD83C\\uDF0D":"\\ud83c\\udf0d and \\u00e9"}}')).toEqual({ status: 200 })
    expect(await valueAt('pair')).toEqual({ 'k🌍': '🌍 and é' })
  })

  it('non-ASCII text and keys, and an escaped backslash before "ud", are accepted and kept', async () => {
    expect(await set(new TextEncoder().encode('{"path":"plain","value":{"🌍":["é","日本", "a\\\\ud800"]}}'))).toEqual({ status: 200 })
    expect(await valueAt('plain')).toEqual({ '🌍': ['é', '日本', 'a\\ud800'] })
  })

  it('bytes that would spell a surrogate in UTF-8 arrive as U+FFFD, never as a lone surrogate', async () => {
    const body = Buffer.concat([Buffer.from('{"path":"bytes","value":"a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('b"}')])
    expect(await set(new Uint8Array(body))).toEqual({ status: 200 })
    expect(await valueAt('bytes')).toBe('a\ufffd\ufffd\ufffdb')
  })
})
