// The SDK's live queries (docs/design.md §16): project.query(path, q).get() and
// .subscribe(items => …) against a real server, through the real socket.io-client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type ContentdClient, type QueryItem } from '../../shared/client/index.js'
import { ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
let key: string
const clients: ContentdClient[] = []
const client = () => { const c = createClient({ baseUrl: app.url, token: key }); clients.push(c); return c }

beforeAll(async () => {
  app = await startTestApp({}, { realtime: true })
  ;({ key } = await ownerWithProject(app.url, 'sdkq'))
})
afterAll(async () => { for (const c of clients) c.close(); await app.close() })

const until = async (condition: () => boolean, what: string) => {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

describe('project.query', () => {
  it('reads once and keeps a live, ordered result', async () => {
    const demo = client().project('@sdkq/demo')
    await demo.set('board', { a: { score: 3 }, b: { score: 1 }, c: { score: 2 } })
    const top2 = demo.query('board', { orderBy: 'score', direction: 'desc', limit: 2 })
    expect((await top2.get()).items).toEqual([{ key: 'a', value: { score: 3 } }, { key: 'c', value: { score: 2 } }])

    const seen: QueryItem[][] = []
    const sub = top2.subscribe(items => seen.push(items))
    await sub.ready
    expect(sub.items.map(i => i.key)).toEqual(['a', 'c'])
    await demo.increment('board.b.score', 5)
    await until(() => sub.items[0]?.key === 'b', 'b on top')
    expect(sub.items).toEqual([{ key: 'b', value: { score: 6 } }, { key: 'a', value: { score: 3 } }])
    // Unchanged children keep the values the client had.
    await demo.set('board.a.name', 'ann')
    await until(() => (sub.items[1]?.value as { name?: string }).name === 'ann', 'the new name')
    expect(sub.items).toEqual([{ key: 'b', value: { score: 6 } }, { key: 'a', value: { score: 3, name: 'ann' } }])
    sub.close()
  })

  it('is also project.ref(path).query(q), the form of issue 30', async () => {
    const demo = client().project('@sdkq/demo')
    await demo.set('scores', { x: { n: 1 }, y: { n: 9 }, z: { n: 5 } })
    const top = demo.ref('scores').query({ orderBy: 'n', direction: 'desc', limit: 2 })
    expect((await top.get()).items.map(i => i.key)).toEqual(['y', 'z'])
    const sub = top.subscribe(() => {})
    await sub.ready
    await demo.increment('scores.x.n', 20)
    await until(() => sub.items[0]?.key === 'x', 'x on top')
    expect(sub.items.map(i => i.key)).toEqual(['x', 'y'])
    sub.close()
  })

  it('reports a refused query through ready and onError', async () => {
    const demo = client().project('@sdkq/demo')
    await demo.set('text', 'hello')
    const errors: string[] = []
    const sub = demo.query('text', { orderBy: 'key', limit: 3 }).subscribe(() => {}, { onError: e => errors.push(e.code) })
    await expect(sub.ready).rejects.toMatchObject({ code: 'INVALID_QUERY' })
    expect(errors).toEqual(['INVALID_QUERY'])
    await expect(demo.query('board', { orderBy: 'score', limit: 0 }).get()).rejects.toMatchObject({ code: 'INVALID_QUERY', status: 400 })
  })
})
