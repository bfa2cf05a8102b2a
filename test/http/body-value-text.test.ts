// A write's value JSON taken from the request's own text (server/http/body.ts takeSourceJson,
// shared/json-text.ts, issue 35) changes no byte of what is stored or sent: whatever the body's
// spelling, the change log holds JSON.stringify of the value, and the content is the value.
// Over a real server and SQLite file; the bodies are raw text, as clients write them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
let owner: Awaited<ReturnType<typeof ownerWithProject>>

beforeAll(async () => {
  app = await startTestApp()
  owner = await ownerWithProject(app.url, 'spelt')
})
afterAll(async () => {
  await app?.close()
})

/** The stored entries after `since`, as the changes route sends them (the stored text). */
async function storedSince (since: number): Promise<string> {
  const r = await call(app.url, 'GET', `${owner.path}/content/changes?since=${since}`, { token: owner.key })
  expect(r.status, r.text).toBe(200)
  return r.text
}

const record = (i: number) => ({ id: i, name: `item ${i}`, tags: ['alpha', 'beta'], score: i * 7 % 101, active: i % 2 === 0 })
const value = { items: [record(1), record(2)], title: 'x', n: -12, big: 123456789012345, none: null }

// The same write spelt several ways: only the first two are what JSON.stringify writes.
const bodies: Array<[string, string]> = [
  ['as JSON.stringify writes it', JSON.stringify({ path: 'a', value })],
  ['value first', JSON.stringify({ value, path: 'a' })],
  ['indented', JSON.stringify({ path: 'a', value }, null, 2)],
  ['a repeated key', `{"path":"a","value":${JSON.stringify({ ...value, title: 'first' }).replace('"title":"first"', '"title":"first","title":"x"')}}`],
  ['a number spelt 1.0', `{"path":"a","value":${JSON.stringify(value).replace('"n":-12', '"n":-12.0')}}`],
  ['an array-index key', `{"path":"a","value":{"b":1,"7":2}}`],
  ['an escape', `{"path":"a","value":{"s":"\\u0041\\n"}}`]
]

describe('the value\'s JSON from the body\'s text', () => {
  it.each(bodies)('set, %s: the entry holds JSON.stringify of the value', async (_name, text) => {
    const before = (await call(app.url, 'GET', `${owner.path}/content`, { token: owner.key })).headers.get('etag')
    const since = Number(JSON.parse(before as string))
    const r = await call(app.url, 'POST', `${owner.path}/content/set`, { token: owner.key, raw: text, headers: { 'content-type': 'application/json' } })
    expect(r.status, r.text).toBe(200)
    const sent = JSON.parse(text) as { value: unknown }
    const stored = await storedSince(since)
    expect(stored).toContain(`"value":${JSON.stringify(sent.value)},"at":`)
    const content = await call(app.url, 'GET', `${owner.path}/content?path=a`, { token: owner.key })
    expect(content.text).toBe(JSON.stringify(sent.value))
  })

  it('update as JSON.stringify writes it: the entry holds the content as sent', async () => {
    const text = JSON.stringify({ a: value, list: [1, 2, 3] })
    const since = Number(JSON.parse((await call(app.url, 'GET', `${owner.path}/content`, { token: owner.key })).headers.get('etag') as string))
    const r = await call(app.url, 'POST', `${owner.path}/content`, { token: owner.key, raw: text, headers: { 'content-type': 'application/json' } })
    expect(r.status, r.text).toBe(200)
    expect(await storedSince(since)).toContain(`"op":"update","value":${text},"at":`)
    expect((await call(app.url, 'GET', `${owner.path}/content`, { token: owner.key })).text).toBe(text)
  })
})
