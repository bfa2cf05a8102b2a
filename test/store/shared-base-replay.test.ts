// SharedBaseReplay (server/store/shared-base-replay.ts): replays onto a cached checkpoint
// without changing it. The base is deep-frozen, so any write into it throws (ES modules are
// strict); every result must equal the same operations applied in place to a private copy.
import { describe, expect, it } from 'vitest'
import { applyContentOperation, type ContentOperation } from '../../shared/compound.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { SharedBaseReplay, sharedJsonOf } from '../../server/store/shared-base-replay.js'

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
  // Large enough that its JSON is kept between replays (sharedJsonOf).
  big: { rows: Array.from({ length: 200 }, (_, i) => ({ i, text: `row ${i} \u00e9 "quoted"` })) },
  // A member named like the prototype accessor, as JSON.parse makes it: an own property.
  weird: JSON.parse('{"__proto__": {"x": 1}, "0": "zero"}') as JsonObject
})

const p = (text: string) => text.split('.')

/** Replays `operations` onto a frozen base; checks against in-place application on a copy. */
function check (operations: ContentOperation[]): JsonObject {
  const shared = deepFreeze(base())
  const replay = new SharedBaseReplay(shared)
  let expected = base()
  for (const operation of operations) {
    replay.apply(structuredClone(operation))
    expected = applyContentOperation(expected, structuredClone(operation))
  }
  expect(replay.result).toEqual(expected)
  expect(replay.serialize()).toBe(JSON.stringify(expected))
  expect(shared).toEqual(base())
  return replay.result
}

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
      // Into values set earlier in the replay, and twice into the same containers.
      { op: 'push', path: p('settings.new.deep.er.a'), value: 2 },
      { op: 'increment', path: p('counter'), value: 1 }
    ])
  })

  it('copies only the containers on the written paths', () => {
    const shared = deepFreeze(base())
    const replay = new SharedBaseReplay(shared)
    replay.apply({ op: 'increment', path: p('counter'), value: 1 })
    replay.apply({ op: 'push', path: p('items.0.tags'), value: 'z' })
    const result = replay.result
    expect(result).not.toBe(shared)
    expect(result.settings).toBe(shared.settings)
    expect((result.items as Json[])[1]).toBe((shared.items as Json[])[1])
    expect((result.items as Json[])[0]).not.toBe((shared.items as Json[])[0])
  })

  it('serializes as JSON.stringify does, reusing what it kept of the base, replay after replay', () => {
    const shared = deepFreeze(base())
    for (let n = 1; n <= 3; n++) {
      const replay = new SharedBaseReplay(shared)
      replay.apply({ op: 'increment', path: p('counter'), value: n })
      replay.apply({ op: 'set', path: p('weird.1'), value: n })
      replay.apply({ op: 'push', path: p('big.rows'), value: { n } })
      const expected = applyContentOperation(applyContentOperation(applyContentOperation(base(), { op: 'increment', path: p('counter'), value: n }),
        { op: 'set', path: p('weird.1'), value: n }), { op: 'push', path: p('big.rows'), value: { n } })
      expect(replay.serialize()).toBe(JSON.stringify(expected))
    }
    expect(sharedJsonOf(shared)).toBe(JSON.stringify(base()))
    expect(sharedJsonOf(shared.big as JsonObject)).toBe(JSON.stringify(base().big))
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

  it('leaves the base as it was when an operation is refused', () => {
    const shared = deepFreeze(base())
    const replay = new SharedBaseReplay(shared)
    expect(() => { replay.apply({ op: 'push', path: p('counter'), value: 1 }) }).toThrow()
    expect(() => { replay.apply({ op: 'set', path: p('items.7.x'), value: 1 }) }).toThrow()
    expect(shared).toEqual(base())
  })
})
