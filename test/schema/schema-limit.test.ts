// SCHEMA_LIMIT at its boundary (docs/design.md §13b): a schema of exactly the limit, in bytes of
// its compact JSON, is set; one byte more is 400 INVALID_SCHEMA and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

/** A schema of exactly `bytes` bytes of compact JSON, padded with a description of "é" (2 bytes) and "a". */
function schemaOf (bytes: number): Record<string, unknown> {
  const frame = Buffer.byteLength(JSON.stringify({ type: 'object', description: '' }))
  const pad = bytes - frame
  const description = 'é'.repeat(Math.floor(pad / 2)) + 'a'.repeat(pad % 2)
  const schema = { type: 'object', description }
  expect(Buffer.byteLength(JSON.stringify(schema))).toBe(bytes)
  return schema
}

for (const [label, env, limit] of [['the default', {}, 65_536], ['SCHEMA_LIMIT=2048', { SCHEMA_LIMIT: '2048' }, 2048]] as const) {
  describe(`SCHEMA_LIMIT, ${label}`, () => {
    let app: TestApp
    let owner: Awaited<ReturnType<typeof ownerWithProject>>
    beforeAll(async () => {
      app = await startTestApp(env)
      owner = await ownerWithProject(app.url, 'alice')
    })
    afterAll(async () => { await app.close() })

    const put = (schema: unknown, raw?: string) => call(app.url, 'PUT', `${owner.path}/schema`, { token: owner.session, ...(raw === undefined ? { body: schema } : { raw, headers: { 'content-type': 'application/json' } }) })

    it(`sets a schema of exactly ${limit} bytes`, async () => {
      const schema = schemaOf(limit)
      const r = await put(schema)
      expect(r.status, r.text).toBe(200)
      expect((await call(app.url, 'GET', `${owner.path}/schema`, { token: owner.session })).body).toEqual(schema)
    })

    it(`refuses ${limit + 1} bytes with 400 INVALID_SCHEMA, keeping the schema set before`, async () => {
      const r = await put(schemaOf(limit + 1))
      expect(r.status, r.text).toBe(400)
      expect(r.body.code).toBe('INVALID_SCHEMA')
      expect(r.body.message).toContain(`${limit + 1} bytes`)
      expect(r.body.message).toContain('SCHEMA_LIMIT')
      expect((await call(app.url, 'GET', `${owner.path}/schema`, { token: owner.session })).body).toEqual(schemaOf(limit))
    })

    it('counts the compact JSON: whitespace in the body does not count', async () => {
      const r = await put(undefined, JSON.stringify(schemaOf(limit), null, 8))
      expect(r.status, r.text).toBe(200)
    })
  })
}
