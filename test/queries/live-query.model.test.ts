// The model test of live queries (issue 30, docs/design.md §16): thousands of random changes
// to an object and an array, replayed through the QueryHub as the change feed would deliver
// them, with several queries of every order form. After every change each subscriber's
// result, rebuilt from the `query` events alone (keys, plus values only for new or changed
// children), must equal the query computed from scratch on the content; a change that does
// not alter a result must send nothing, and an event must always alter it.
import { describe, expect, it } from 'vitest'
import { applyContentOperation, type ContentOperation } from '../../shared/compound.js'
import { operationOfChange, type ChangeEntry } from '../../shared/events.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { evaluateQuery, parseQuery, type QueryItem } from '../../shared/query.js'
import { QueryHub, valueAt, type QueryEvent } from '../../server/queries/query-hub.js'
import { textSource } from './text-source.js'

/** A small seeded generator (mulberry32), so a failure replays. */
function random (seed: number) {
  let a = seed
  const next = () => {
    a = (a + 0x6D2B79F5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
    chance: (p: number) => next() < p
  }
}
type Random = ReturnType<typeof random>

const KEYS = ['a', 'b', 'c', 'zed', 'Z', '0', '3', '10', '007', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9']

function scoreValue (r: Random): Json {
  return r.pick<() => Json>([
    () => r.int(20),
    () => r.int(20) - 10,
    () => r.int(5) + 0.5,
    () => null,
    () => r.chance(0.5),
    () => r.pick(['x', 'y', 'X', 'é']),
    () => [r.int(3)],
    () => ({ n: r.int(3) })
  ])()
}

function childValue (r: Random): Json {
  if (r.chance(0.15)) return scoreValue(r)
  const child: JsonObject = { name: r.pick(['ann', 'bob', 'cy']) }
  if (r.chance(0.9)) child.score = scoreValue(r)
  if (r.chance(0.5)) child.meta = { rank: r.int(6) }
  return child
}

/** One random change as the change log would record it (op, path, value, index, operations). */
function randomChange (r: Random, doc: JsonObject): Omit<ChangeEntry, 'project' | 'version' | 'at' | 'actor'> {
  const board = r.chance(0.5)
  if (board) {
    const key = r.pick(KEYS)
    return r.pick<() => Omit<ChangeEntry, 'project' | 'version' | 'at' | 'actor'>>([
      () => ({ op: 'increment', path: `board.${key}.score`, value: r.int(7) - 3 }),
      () => ({ op: 'increment', path: `board.${key}.score`, value: 0 }),
      () => ({ op: 'set', path: `board.${key}`, value: childValue(r) }),
      () => ({ op: 'set', path: `board.${key}.score`, value: scoreValue(r) }),
      () => ({ op: 'set', path: `board.${key}.name`, value: r.pick(['ann', 'bob', 'cy']) }),
      () => ({ op: 'set', path: `board.${key}.meta.rank`, value: r.int(6) }),
      () => ({ op: 'delete', path: `board.${key}` }),
      () => ({ op: 'delete', path: `board.${key}.score` }),
      () => ({ op: 'batch', operations: [{ op: 'set', path: `board.${key}`, value: childValue(r) }, { op: 'increment', path: `board.${r.pick(KEYS)}.score`, value: 1 }, { op: 'test', path: 'other', value: 1 }] }),
      () => ({ op: 'patch', operations: [{ op: 'add', path: `/board/${key}`, value: childValue(r) }, { op: 'remove', path: `/board/${r.pick(KEYS)}` } as Json] }),
      () => ({ op: 'patch', operations: [{ op: 'move', from: `/board/${key}`, path: `/board/${r.pick(KEYS)}` }] }),
      () => ({ op: 'patch', operations: [{ op: 'copy', from: `/board/${key}`, path: `/board/${r.pick(KEYS)}` }] }),
      () => ({ op: 'set', path: 'other', value: r.int(100) }),
      () => ({ op: 'set', path: 'board', value: Object.fromEntries(KEYS.filter(() => r.chance(0.4)).map(k => [k, childValue(r)])) }),
      () => ({ op: 'set', path: 'board', value: r.pick<Json>([7, 'text', null]) }),
      () => ({ op: 'update', value: { ...doc, board: Object.fromEntries(KEYS.filter(() => r.chance(0.5)).map(k => [k, childValue(r)])) } })
    ])()
  }
  const length = Array.isArray(doc.chat) ? doc.chat.length : 0
  const index = r.int(length + 1)
  return r.pick<() => Omit<ChangeEntry, 'project' | 'version' | 'at' | 'actor'>>([
    () => ({ op: 'push', path: 'chat', value: childValue(r) }),
    () => ({ op: 'push', path: 'chat', value: childValue(r) }),
    () => ({ op: 'insert', path: 'chat', value: childValue(r), index }),
    () => ({ op: 'delete', path: `chat.${r.int(Math.max(1, length))}` }),
    () => ({ op: 'set', path: `chat.${r.int(Math.max(1, length))}.score`, value: scoreValue(r) }),
    () => ({ op: 'increment', path: `chat.${r.int(Math.max(1, length))}.score`, value: 1 }),
    () => ({ op: 'patch', operations: [{ op: 'add', path: '/chat/-', value: childValue(r) }] }),
    () => ({ op: 'patch', operations: [{ op: 'add', path: `/chat/${index}`, value: childValue(r) }] }),
    () => ({ op: 'batch', operations: [{ op: 'push', path: 'chat', value: childValue(r) }, { op: 'delete', path: 'chat.0' } as Json] }),
    () => ({ op: 'set', path: 'chat', value: length > 30 ? [] : (doc.chat as Json) ?? [] })
  ])()
}

const QUERIES = [
  { orderBy: 'score', direction: 'desc', limit: 3 },
  { orderBy: 'score', limit: 5 },
  { orderBy: 'score', limit: 4, startAt: 0, endAt: 10 },
  { orderBy: 'score', direction: 'desc', limit: 2, startAt: 'x' },
  { orderBy: 'meta.rank', limit: 3 },
  { orderBy: 'value', limit: 4 },
  { orderBy: 'value', direction: 'desc', limit: 6, endAt: true },
  { orderBy: 'key', limit: 4 },
  { orderBy: 'key', direction: 'desc', limit: 3, startAt: '3', endAt: 'p5' },
  { orderBy: 'name', limit: 1000 }
]

interface Subscriber { path: string, query: unknown, items: QueryItem[], events: QueryEvent[] }

describe('live queries against a from-scratch model', () => {
  it.each([20261127, 7])('stay equal to the query over the content after 6,000 random changes (seed %i)', async seed => {
    const r = random(seed)
    let doc: JsonObject = { board: { a: { name: 'ann', score: 3 }, b: { name: 'bob', score: 5 } }, chat: [{ name: 'cy', score: 1 }] }
    let version = 1
    const listeners = new Set<(change: ChangeEntry) => void>()
    const hub = new QueryHub(
      textSource({ readContent: async () => ({ version, content: structuredClone(doc) }) }),
      { subscribe: (_project, listener) => { listeners.add(listener); return () => listeners.delete(listener) } },
      { resultsPerProject: 100 }
    )
    const subscribers: Subscriber[] = []
    for (const path of ['board', 'chat']) {
      for (const query of QUERIES) {
        const subscriber: Subscriber = { path, query, items: [], events: [] }
        const open = await hub.open('p', path, parseQuery(query), event => subscriber.events.push(event))
        subscriber.items = open.items
        subscribers.push(subscriber)
      }
    }
    // Two subscribers of one query share its result and both hear it.
    const twin: Subscriber = { path: 'board', query: QUERIES[0], items: [], events: [] }
    twin.items = (await hub.open('p', 'board', parseQuery(QUERIES[0]), event => twin.events.push(event))).items
    subscribers.push(twin)

    let applied = 0
    let events = 0
    for (let attempt = 0; applied < 6000 && attempt < 20000; attempt++) {
      const body = randomChange(r, doc)
      let next: JsonObject
      try {
        next = applyContentOperation(structuredClone(doc), operationOfChange(body) as ContentOperation)
      } catch {
        continue // not a change the store would have committed
      }
      doc = next
      version++
      applied++
      const entry: ChangeEntry = { project: '@t/p', version, at: new Date(0).toISOString(), actor: { type: 'system', name: 'test' }, ...structuredClone(body) }
      for (const listener of listeners) listener(entry)
      for (const subscriber of subscribers) {
        const expected = evaluateQuery(valueAt(doc, [subscriber.path]), parseQuery(subscriber.query))
        const heard = subscriber.events.splice(0)
        expect(heard.length, `${subscriber.path} ${JSON.stringify(subscriber.query)} after ${JSON.stringify(body)}`).toBeLessThanOrEqual(1)
        const event = heard[0]
        if (event) {
          events++
          expect(event.version).toBe(version)
          const before = new Map(subscriber.items.map(item => [item.key, JSON.stringify(item.value)]))
          subscriber.items = event.items.map(item => {
            if ('value' in item) {
              // A value is sent only for a child new to the result or changed.
              expect(before.get(item.key)).not.toBe(JSON.stringify(item.value))
              return { key: item.key, value: item.value as Json }
            }
            expect(before.has(item.key)).toBe(true)
            return { key: item.key, value: JSON.parse(before.get(item.key) as string) as Json }
          })
          // An event always alters the result.
          expect(JSON.stringify(subscriber.items)).not.toBe(JSON.stringify([...before].map(([key, text]) => ({ key, value: JSON.parse(text) as Json }))))
        }
        // Compared as text first: toEqual on every step would dominate the run.
        if (JSON.stringify(subscriber.items) !== JSON.stringify(expected)) {
          expect(subscriber.items, `${subscriber.path} ${JSON.stringify(subscriber.query)} at ${version} after ${JSON.stringify(body)}`).toEqual(expected)
        }
      }
    }
    expect(applied).toBe(6000)
    expect(events).toBeGreaterThan(1000)
  }, 120_000)
})
