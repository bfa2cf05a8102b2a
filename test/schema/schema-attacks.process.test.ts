// The schema attacks of issue 26 (finding 4) against the real server process (docs/design.md
// §13b): while one user sets each attack schema and writes against it, another user's
// increment is sent; it must answer 200 and the process must stay up. Outcomes only, no
// timing: the latencies are measured by hand (bench/schema-attacks.mjs, SECURITY.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { MAX_SUBSCHEMAS } from '../../server/schema/schema-cost.js'

let server: ServerProcess
let mallory: Awaited<ReturnType<typeof ownerWithProject>>
let victor: Awaited<ReturnType<typeof ownerWithProject>>

beforeAll(async () => {
  server = await startServerProcess()
  mallory = await ownerWithProject(server.url, 'mallory')
  victor = await ownerWithProject(server.url, 'victor')
})

afterAll(async () => {
  await server.stop()
})

/** Runs `attack` with victor's increment sent while it runs; returns what the attack returned. */
async function whileVictorIncrements<T> (attack: () => Promise<T>): Promise<T> {
  const attacking = attack()
  const increment = call(server.url, 'POST', `${victor.path}/content/increment`, { token: victor.key, body: { path: 'n' } })
  const [result, victim] = await Promise.all([attacking, increment])
  expect(victim.status, victim.text).toBe(200)
  expect(server.child.exitCode).toBeNull()
  expect((await call(server.url, 'GET', '/healthz')).status).toBe(200)
  return result
}

const putSchema = (schema: unknown) => call(server.url, 'PUT', `${mallory.path}/schema`, { token: mallory.session, body: schema })
const write = (op: string, body: unknown) => call(server.url, 'POST', `${mallory.path}/content/${op}`, { token: mallory.key, body })

describe('a schema cannot stall another user (docs/design.md §13b)', () => {
  it('format "url" is refused at PUT, naming it; the 59 KiB string it would have stalled on is then just a string', async () => {
    const put = await whileVictorIncrements(() => putSchema({ type: 'object', properties: { u: { type: 'string', format: 'url' } } }))
    expect(put.status, put.text).toBe(400)
    expect(put.body.code).toBe('INVALID_SCHEMA')
    expect(put.body.message).toContain('format "url"')
    const set = await whileVictorIncrements(() => write('set', { path: 'u', value: `http://a@${'::'.repeat(30_000)}\u0000` }))
    expect(set.status, set.text).toBe(200)
  })

  it('uniqueItems over 15,000 objects: the write and a later push are checked, and a duplicate is refused', async () => {
    expect((await call(server.url, 'POST', `${mallory.path}/content`, { token: mallory.session, body: {} })).status).toBe(200)
    const put = await whileVictorIncrements(() => putSchema({ type: 'object', properties: { l: { type: 'array', uniqueItems: true } } }))
    expect(put.status, put.text).toBe(200)
    const items = Array.from({ length: 15_000 }, (_, i) => ({ id: i, name: `item ${i}` }))
    const set = await whileVictorIncrements(() => write('set', { path: 'l', value: items }))
    expect(set.status, set.text).toBe(200)
    const push = await whileVictorIncrements(() => write('push', { path: 'l', value: { id: -1 } }))
    expect(push.status, push.text).toBe(200)
    const duplicate = await whileVictorIncrements(() => write('push', { path: 'l', value: { name: 'item 7', id: 7 } }))
    expect(duplicate.status, duplicate.text).toBe(422)
    expect(duplicate.body.errors[0].message).toMatch(/duplicate items \(items ## 7 and 15001 are identical\)/)
    expect((await call(server.url, 'DELETE', `${mallory.path}/schema`, { token: mallory.session })).status).toBe(200)
  })

  it(`2,000 patternProperties (a 56 KiB schema) are refused at PUT: more than ${MAX_SUBSCHEMAS} subschemas`, async () => {
    const patternProperties = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`^p${i}$`, { type: 'integer' }]))
    const put = await whileVictorIncrements(() => putSchema({ type: 'object', patternProperties }))
    expect(put.status, put.text).toBe(400)
    expect(put.body.code).toBe('INVALID_SCHEMA')
    expect(put.body.message).toContain(`at most ${MAX_SUBSCHEMAS}`)
  })
})
