// The hub's bounds and costs (docs/design.md §13b, §16): distinct results per project are
// limited, identical queries share one result, a change outside every window serializes
// nothing, and the content is read once per project however many queries it has.
import { describe, expect, it } from 'vitest'
import type { ChangeEntry } from '../../shared/events.js'
import type { JsonObject } from '../../shared/json.js'
import { parseQuery } from '../../shared/query.js'
import { LiveResult, OrderedChildren, type ChildReader } from '../../server/queries/live-result.js'
import { QueryHub, type QueryEvent } from '../../server/queries/query-hub.js'
import { textSource } from './text-source.js'

function harness (content: JsonObject, resultsPerProject = 3) {
  let reads = 0
  const listeners = new Set<(change: ChangeEntry) => void>()
  const hub = new QueryHub(
    textSource({ readContent: async () => { reads++; return { version: 1, content } } }),
    { subscribe: (_p, listener) => { listeners.add(listener); return () => listeners.delete(listener) } },
    { resultsPerProject }
  )
  let version = 1
  const send = (change: Partial<ChangeEntry>) => {
    version++
    for (const l of listeners) l({ project: '@a/p', version, at: '', actor: { type: 'system', name: 't' }, op: 'set', ...change } as ChangeEntry)
  }
  return { hub, send, reads: () => reads, listeners: () => listeners.size }
}

describe('QueryHub', () => {
  it('bounds distinct results per project; identical queries share one; closing frees the slot', async () => {
    const { hub } = harness({ board: { a: { s: 1 } } }, 2)
    const q1 = parseQuery({ orderBy: 's', limit: 1 })
    const q2 = parseQuery({ orderBy: 's', limit: 2 })
    const first = await hub.open('p', 'board', q1, () => {})
    await hub.open('p', 'board', q1, () => {}) // shared, not a new result
    const second = await hub.open('p', 'board', q2, () => {})
    await expect(hub.open('p', 'board', parseQuery({ orderBy: 'key', limit: 1 }), () => {})).rejects.toMatchObject({ code: 'TOO_MANY_SUBSCRIPTIONS' })
    // Another project has its own budget.
    await hub.open('other', 'board', parseQuery({ orderBy: 'key', limit: 1 }), () => {})
    second.close()
    await expect(hub.open('p', 'board', parseQuery({ orderBy: 'key', limit: 1 }), () => {})).resolves.toMatchObject({ version: 1 })
    first.close()
  })

  it('reads the content once per project, stops listening when the last query closes', async () => {
    const h = harness({ board: { a: { s: 1 } } }, 10)
    const opens = await Promise.all([1, 2, 3].map(limit => h.hub.open('p', 'board', parseQuery({ orderBy: 's', limit }), () => {})))
    expect(h.reads()).toBe(1)
    expect(h.listeners()).toBe(1)
    for (const o of opens) o.close()
    expect(h.listeners()).toBe(0)
    expect(h.hub.projectCount).toBe(0)
  })

  it('refuses a path holding a scalar with INVALID_QUERY, and empties a result whose path turns scalar later', async () => {
    const h = harness({ text: 'x', board: { a: 1 } })
    await expect(h.hub.open('p', 'text', parseQuery({ orderBy: 'key', limit: 1 }), () => {})).rejects.toMatchObject({ code: 'INVALID_QUERY' })
    const events: QueryEvent[] = []
    await h.hub.open('p', 'board', parseQuery({ orderBy: 'key', limit: 1 }), e => events.push(e))
    h.send({ op: 'set', path: 'board', value: 7 })
    expect(events).toEqual([{ version: 2, items: [] }])
  })

  it('holds at most 1,000 changes while the content is read, and reads it again for the ones it let go', async () => {
    const listeners = new Set<(change: ChangeEntry) => void>()
    let release: () => void = () => {}
    const reads: number[] = []
    const hub = new QueryHub(
      textSource({
        readContent: async () => {
          reads.push(reads.length)
          // The first read is slow: 1,500 changes are heard meanwhile. Later reads see them all.
          if (reads.length === 1) { await new Promise<void>(resolve => { release = resolve }); return { version: 1, content: { board: { n: 0 } } } }
          return { version: 1501, content: { board: { n: 1500 } } }
        }
      }),
      { subscribe: (_p, l) => { listeners.add(l); return () => listeners.delete(l) } },
      { resultsPerProject: 5 }
    )
    const opened = hub.open('p', 'board', parseQuery({ orderBy: 'key', limit: 5 }), () => {})
    await new Promise(resolve => setImmediate(resolve))
    for (let version = 2; version <= 1501; version++) {
      for (const l of listeners) l({ project: '@a/p', version, at: '', actor: { type: 'system', name: 't' }, op: 'increment', path: 'board.n', value: 1 } as ChangeEntry)
    }
    release()
    const live = await opened
    await new Promise(resolve => setTimeout(resolve, 10))
    expect(reads).toHaveLength(2)
    expect(live).toMatchObject({ items: [{ key: 'n', value: expect.any(Number) }] })
    live.close()
  })

  it('a missed version makes it read the content again rather than drift', async () => {
    let content: JsonObject = { board: { a: { s: 1 }, b: { s: 2 } } }
    const listeners = new Set<(change: ChangeEntry) => void>()
    let version = 1
    const hub = new QueryHub(
      textSource({ readContent: async () => ({ version, content: structuredClone(content) }) }),
      { subscribe: (_p, l) => { listeners.add(l); return () => listeners.delete(l) } },
      { resultsPerProject: 5 }
    )
    const events: QueryEvent[] = []
    await hub.open('p', 'board', parseQuery({ orderBy: 's', direction: 'desc', limit: 1 }), e => events.push(e))
    // Version 2 is never heard; version 3 arrives.
    content = { board: { a: { s: 10 }, b: { s: 2 } } }
    version = 3
    for (const l of listeners) l({ project: '@a/p', version: 3, op: 'set', path: 'board.a.s', value: 10, at: '', actor: { type: 'system', name: 't' } })
    await new Promise(resolve => setTimeout(resolve, 10))
    expect(events).toEqual([{ version: 3, items: [{ key: 'a', value: { s: 10 } }] }])
  })
})

describe('LiveResult costs', () => {
  it('a change to a child outside the window and not entering it is not walked or serialized', () => {
    const board: Record<string, { s: number }> = {}
    for (let i = 0; i < 1000; i++) board[`p${i}`] = { s: i }
    let texts = 0
    const reader: ChildReader = { value: key => board[key], text: key => { texts++; return JSON.stringify(board[key]) } }
    const plan = parseQuery({ orderBy: 's', direction: 'desc', limit: 10 })
    const index = new OrderedChildren(plan)
    index.rebuild(Object.entries(board))
    const result = new LiveResult(plan, index)
    result.reset(reader)
    texts = 0
    board.p5 = { s: 6 }
    const move = index.update('p5', board.p5)
    expect(result.concerns(move)).toBe(false)
    expect(texts).toBe(0)
    // Entering the window: walked, and only the new child serialized.
    board.p5 = { s: 5000 }
    const entering = index.update('p5', board.p5)
    expect(result.concerns(entering)).toBe(true)
    const items = result.refresh(reader, new Set(['p5']))
    expect(items?.[0]).toEqual({ key: 'p5', value: { s: 5000 } })
    expect(items?.slice(1).every(item => !('value' in item))).toBe(true)
    expect(texts).toBe(1)
  })
})

describe('QUERY_CONTENT_BYTES', () => {
  it('refuses a query on one more project once the copies held reach the limit, and frees it on close', async () => {
    const listeners = new Set<(change: ChangeEntry) => void>()
    const contents: Record<string, JsonObject> = { a: { board: { x: 'a'.repeat(600) } }, b: { board: { y: 'b'.repeat(600) } } }
    const hub = new QueryHub(
      textSource({ readContent: async id => ({ version: 1, content: contents[id] as JsonObject }) }),
      { subscribe: (_p, l) => { listeners.add(l); return () => listeners.delete(l) } },
      { resultsPerProject: 10, contentBytes: 1000 }
    )
    const q = parseQuery({ orderBy: 'key', limit: 1 })
    const first = await hub.open('a', 'board', q, () => {})
    await expect(hub.open('b', 'board', q, () => {})).rejects.toMatchObject({ code: 'TOO_MANY_SUBSCRIPTIONS' })
    // The same project again costs nothing more.
    await hub.open('a', 'board', parseQuery({ orderBy: 'key', limit: 2 }), () => {})
    expect(hub.projectCount).toBe(1)
    first.close()
  })
})

describe('QUERY_ORDERS_PER_PROJECT', () => {
  it('bounds distinct (path, orderBy) indexes; queries on an existing order still fit; closing frees one', async () => {
    const hub = new QueryHub(
      textSource({ readContent: async () => ({ version: 1, content: { board: { a: { s: 1, t: 2 } }, other: {} } }) }),
      { subscribe: () => () => {} },
      { resultsPerProject: 10, ordersPerProject: 2 }
    )
    const byS = await hub.open('p', 'board', parseQuery({ orderBy: 's', limit: 1 }), () => {})
    await hub.open('p', 'board', parseQuery({ orderBy: 't', limit: 1 }), () => {})
    await expect(hub.open('p', 'other', parseQuery({ orderBy: 's', limit: 1 }), () => {})).rejects.toMatchObject({ code: 'TOO_MANY_SUBSCRIPTIONS' })
    // Another window on an order that exists needs no index.
    const desc = await hub.open('p', 'board', parseQuery({ orderBy: 's', direction: 'desc', limit: 5 }), () => {})
    byS.close()
    // The index stays while a result uses it…
    await expect(hub.open('p', 'other', parseQuery({ orderBy: 's', limit: 1 }), () => {})).rejects.toMatchObject({ code: 'TOO_MANY_SUBSCRIPTIONS' })
    desc.close()
    // …and goes with the last one.
    await expect(hub.open('p', 'other', parseQuery({ orderBy: 's', limit: 1 }), () => {})).resolves.toMatchObject({ version: 1 })
  })
})

describe('a failed read', () => {
  it('fails the open that waited for it, and the next open reads again', async () => {
    let calls = 0
    const hub = new QueryHub(
      textSource({ readContent: async () => { calls++; if (calls === 1) throw new Error('store down'); return { version: 4, content: { board: { a: 1 } } } } }),
      { subscribe: () => () => {} },
      { resultsPerProject: 5 }
    )
    const q = parseQuery({ orderBy: 'key', limit: 1 })
    await expect(hub.open('p', 'board', q, () => {})).rejects.toThrow('store down')
    await expect(hub.open('p', 'board', q, () => {})).resolves.toMatchObject({ version: 4, items: [{ key: 'a', value: 1 }] })
    expect(calls).toBe(2)
  })
})
