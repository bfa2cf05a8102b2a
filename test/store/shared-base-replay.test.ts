// SharedBaseReplay and PastContent (server/store/shared-base-replay.ts): replays onto a cached
// checkpoint's text without changing what it shares. The base's parsed members are
// deep-frozen, so any write into them throws (ES modules are strict); every result and its
// JSON must equal the same operations applied in place to a private copy.
import { describe, expect, it } from 'vitest'
import { applyContentOperation, type ContentOperation } from '../../shared/compound.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { memberSpans } from '../../server/store/json-members.js'
import { PastContent, SharedBaseReplay } from '../../server/store/shared-base-replay.js'

function deepFreeze<T extends Json> (value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

const base = (): JsonObject => ({
  counter: 0,
  items: [{ id: 0, tags: ['a'] }, { id: 1, tags: ['b'] }, { id: 2, tags: [] }],
  settings: { theme: { dark: false }, list: [1, 2, 3] },
  // Members named like the prototype accessor, or like an index, as JSON.parse makes them.
  weird: JSON.parse('{"__proto__": {"x": 1}, "0": "zero", "quote\\"d": "\\\\\\"}{]["}') as JsonObject,
  // Large enough that its JSON is kept between replays.
  big: { rows: Array.from({ length: 200 }, (_, i) => ({ i, text: `row ${i} \u00e9 "quoted" \\ {[` })) },
  empty: {},
  list: [],
  nothing: null,
  yes: true,
  price: -1.5e-7
})

const p = (text: string) => text.split('.')

/** A base whose every root member is already parsed and frozen: replays share those. */
function frozenBase (): PastContent {
  const past = new PastContent(JSON.stringify(base()))
  while (past.scanOne());
  for (const span of past.found) deepFreeze(past.valueOf(span))
  return past
}

/** Replays `operations` onto a frozen base; checks against in-place application on a copy. */
function check (operations: ContentOperation[], past = frozenBase()): JsonObject {
  const replay = new SharedBaseReplay(past)
  let expected = base()
  for (const operation of operations) {
    replay.apply(structuredClone(operation))
    expected = applyContentOperation(expected, structuredClone(operation))
  }
  expect(replay.serialize()).toBe(JSON.stringify(expected))
  expect(replay.result).toEqual(expected)
  expect(new SharedBaseReplay(past).serialize()).toBe(JSON.stringify(base()))
  return replay.result
}

describe('locating the members of stored JSON', () => {
  it('finds every member of the root, whatever its value holds', () => {
    const text = JSON.stringify(base())
    const spans = memberSpans(text)
    expect(spans.map(s => s.key)).toEqual(Object.keys(base()))
    for (const span of spans) expect(JSON.parse(text.slice(span.start, span.end))).toEqual(base()[span.key])
    expect(memberSpans(' { "a" : [1, {"b": "}"}] ,\n"c":2 } ').map(s => s.key)).toEqual(['a', 'c'])
    expect(memberSpans('{}')).toEqual([])
  })
})

describe('replaying onto a shared base', () => {
  it('applies path operations at every depth without touching the base', () => {
    check([
      { op: 'increment', path: p('counter'), value: 2 },
      { op: 'decrement', path: p('items.1.id'), value: 5 },
      { op: 'set', path: p('settings.theme.dark'), value: true },
      { op: 'set', path: p('settings.new.deep.er'), value: { a: [1] } },
      { op: 'push', path: p('items.0.tags'), value: 'c' },
      { op: 'push', path: p('settings.list'), value: 4 },
      { op: 'insert', path: p('settings.list'), value: 0, index: 0 },
      { op: 'insert', path: p('fresh'), value: 'first', index: 0 },
      { op: 'delete', path: p('items.2') },
      { op: 'delete', path: p('settings.theme') },
      { op: 'set', path: p('weird.0'), value: 'changed' },
      { op: 'delete', path: p('missing.path') },
      { op: 'delete', path: p('yes') },
      { op: 'set', path: p('yes'), value: 'back, at the end' },
      { op: 'set', path: p('7'), value: 'an index-like key goes first' },
      // Into values set earlier in the replay, and twice into the same containers.
      { op: 'push', path: p('settings.new.deep.er.a'), value: 2 },
      { op: 'increment', path: p('counter'), value: 1 },
      { op: 'push', path: p('big.rows'), value: { n: 1 } }
    ])
  })

  it('copies only the containers on the written paths, and locates and parses only the members reached', () => {
    const past = new PastContent(JSON.stringify(base()))
    const replay = new SharedBaseReplay(past)
    replay.apply({ op: 'increment', path: p('counter'), value: 1 })
    replay.apply({ op: 'push', path: p('items.0.tags'), value: 'z' })
    // counter and items come first: nothing after them was looked at.
    expect(past.found.map(span => span.key)).toEqual(['counter', 'items'])
    expect(replay.serialize()).toBe(JSON.stringify({ ...base(), counter: 1, items: [{ id: 0, tags: ['a', 'z'] }, ...(base().items as Json[]).slice(1)] }))
    const member = (key: string) => past.valueOf(past.found.find(span => span.key === key) ?? past.found[0]!)
    const items = member('items') as Json[]
    const result = replay.result
    expect(result.items).not.toBe(items)
    expect((result.items as Json[])[1]).toBe(items[1])
    expect((result.items as Json[])[0]).not.toBe(items[0])
    expect(result.settings).toBe(member('settings'))
    // A replay from the same base that touches a later member locates the rest.
    const later = new SharedBaseReplay(past)
    later.apply({ op: 'set', path: p('price'), value: 2 })
    expect(later.serialize()).toBe(JSON.stringify({ ...base(), price: 2 }))
    const fresh = new SharedBaseReplay(past)
    fresh.apply({ op: 'set', path: p('added'), value: 'last' })
    expect(fresh.serialize()).toBe(JSON.stringify({ ...base(), added: 'last' }))
  })

  it('takes over an update\'s value, and copies the whole document once for a batch or a patch', () => {
    check([
      { op: 'increment', path: p('counter'), value: 1 },
      { op: 'batch', operations: [{ op: 'set', path: p('settings.list.0'), value: 9 }, { op: 'push', path: p('items.1.tags'), value: 'x' }] },
      { op: 'increment', path: p('counter'), value: 1 }
    ])
    check([
      { op: 'patch', operations: [{ op: 'move', from: '/settings/list', path: '/moved' }, { op: 'copy', from: '/items/0', path: '/copied' }] },
      { op: 'push', path: p('copied.tags'), value: 'only the copy' }
    ])
    check([
      { op: 'set', path: p('settings.theme.dark'), value: true },
      { op: 'update', value: { replaced: { list: [1] } } },
      { op: 'push', path: p('replaced.list'), value: 2 }
    ])
  })

  it('serializes alike replay after replay from the same base', () => {
    const past = frozenBase()
    for (let n = 1; n <= 3; n++) {
      check([
        { op: 'increment', path: p('counter'), value: n },
        { op: 'set', path: p('weird.1'), value: n },
        { op: 'push', path: p('big.rows'), value: { n } }
      ], past)
    }
  })

  it('leaves the base as it was when an operation is refused', () => {
    const past = frozenBase()
    const replay = new SharedBaseReplay(past)
    expect(() => { replay.apply({ op: 'push', path: p('counter'), value: 1 }) }).toThrow()
    expect(() => { replay.apply({ op: 'set', path: p('items.7.x'), value: 1 }) }).toThrow()
    expect(new SharedBaseReplay(past).result).toEqual(base())
  })
})
