// Live paths (docs/design.md §15), pure: what a change touches, what a path subscription is
// sent, and that a value rebuilt from what is sent always equals the value at the path.
import { describe, expect, it } from 'vitest'
import { operationOfChange, type ChangeEntry } from '../../shared/events.js'
import { applyContentOperation } from '../../shared/compound.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { applyPathChange, changeTouches, indexPathsOf, pathChangeOf, pathLookup, projectedChange, valueAtPath, type PathValue } from '../../shared/live-path.js'
import { dotSegments } from '../../shared/path.js'

const base = { project: '@a/p', version: 1, at: '2026-01-01T00:00:00.000Z', actor: { type: 'user', name: '@a' } } as const
const entry = (parts: Partial<ChangeEntry>): ChangeEntry => ({ ...base, op: 'set', ...parts }) as ChangeEntry
const touches = (parts: Partial<ChangeEntry>, path: string) => changeTouches(entry(parts), dotSegments(path))

describe('what a change touches', () => {
  it.each([
    [{ op: 'set', path: 'votes' }, 'votes', true],
    [{ op: 'set', path: 'votes.a' }, 'votes', true],
    [{ op: 'set', path: 'votes' }, 'votes.a', true],
    [{ op: 'set', path: 'votesX' }, 'votes', false],
    [{ op: 'set', path: 'other' }, 'votes', false],
    [{ op: 'increment', path: 'a.b' }, 'a.c', false],
    [{ op: 'update' }, 'anything.at.all', true],
    [{ op: 'revert' }, 'x', true],
    [{ op: 'delete', path: 'list.2' }, 'list.5.x', true],
    [{ op: 'delete', path: 'list.2' }, 'list.1', false],
    [{ op: 'delete', path: 'list.2' }, 'list', true],
    [{ op: 'insert', path: 'list', index: 3 }, 'list.0', true],
    [{ op: 'push', path: 'list' }, 'list.7', true],
    [{ op: 'batch', operations: [{ op: 'test', path: 'votes', value: 1 }, { op: 'set', path: 'x', value: 1 }] }, 'votes', false],
    [{ op: 'batch', operations: [{ op: 'set', path: 'x', value: 1 }, { op: 'increment', path: 'votes.a', value: 1 }] }, 'votes', true],
    [{ op: 'patch', operations: [{ op: 'move', from: '/votes', path: '/x' }] }, 'votes', true],
    [{ op: 'patch', operations: [{ op: 'copy', from: '/votes', path: '/x' }] }, 'votes', false],
    [{ op: 'patch', operations: [{ op: 'add', path: '/list/1', value: 1 }] }, 'list.4', true],
    [{ op: 'patch', operations: [{ op: 'add', path: '/list/1', value: 1 }] }, 'list.0', false],
    [{ op: 'patch', operations: [{ op: 'test', path: '/votes', value: 1 }] }, 'votes', false]
  ] as Array<[Partial<ChangeEntry>, string, boolean]>)('%j touches %s: %s', (parts, path, expected) => {
    expect(touches(parts, path)).toBe(expected)
  })

  it('indexes written paths, and finds them through the root, ancestors, the path and its descendants', () => {
    expect(indexPathsOf(entry({ op: 'delete', path: 'list.2' }))).toEqual(['list.2', 'list'])
    expect(indexPathsOf(entry({ op: 'update' }))).toEqual([''])
    expect(pathLookup('a.b')).toEqual({ exact: ['', 'a', 'a.b'], below: 'a.b.', belowEnd: 'a.b/' })
  })
})

describe('what a path subscription is sent', () => {
  it('a change at or below the path, as it is', () => {
    const change = entry({ op: 'increment', path: 'votes.a', value: 1 })
    expect(pathChangeOf(change, 'votes')).toBe(change)
  })

  it('a batch filtered to its operations at or below the path, tests dropped', () => {
    const change = entry({ op: 'batch', operations: [{ op: 'test', path: 'votes.a', value: 1 }, { op: 'set', path: 'secret', value: 's' }, { op: 'increment', path: 'votes.a', value: 1 }] })
    expect(pathChangeOf(change, 'votes')).toEqual({ ...change, operations: [{ op: 'increment', path: 'votes.a', value: 1 }] })
  })

  it('a set above the path, projected with the path inside its value, nothing else', () => {
    const sent = pathChangeOf(entry({ op: 'set', path: 'a', value: { votes: 3, secret: 's' } }), 'a.votes')
    expect(sent).toEqual({ ...base, op: 'set', path: 'a.votes', value: 3, projected: true })
    expect(JSON.stringify(sent)).not.toContain('secret')
  })

  it('an update that leaves nothing at the path: a projected delete', () => {
    expect(pathChangeOf(entry({ op: 'update', value: { other: 1 } }), 'votes')).toEqual({ ...base, op: 'delete', path: 'votes', projected: true })
  })

  it('a push above the path needs the content (null)', () => {
    expect(pathChangeOf(entry({ op: 'push', path: 'list', value: 1 }), 'list.3')).toBeNull()
  })

  it('never reads a prototype member', () => {
    expect(valueAtPath({} as Json, ['constructor'])).toEqual({ exists: false })
    expect(valueAtPath([1, 2], ['length'])).toEqual({ exists: false })
  })
})

// A seeded generator, so a failure names its seed and replays.
function generator (seed: number) {
  let state = seed >>> 0
  const next = () => { state = (state * 1664525 + 1013904223) >>> 0; return state / 2 ** 32 }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T
  return { next, int, pick }
}

const PATHS = ['a', 'a.b', 'a.b.c', 'a.d', 'list', 'list.0', 'list.1', 'list.2', 'list.0.x', 'n', 'votes', 'votes.up', 'votes.down']
const WATCHED = ['a.b', 'list.1', 'list', 'votes.up', 'votes', 'a', 'list.0.x', 'n']

function randomValue (g: ReturnType<typeof generator>): Json {
  switch (g.int(5)) {
    case 0: return g.int(10)
    case 1: return { b: { c: g.int(3) }, x: g.int(3), up: g.int(3) }
    case 2: return [g.int(3), { x: g.int(3) }]
    case 3: return 'text'
    default: return null
  }
}

const pointer = (path: string) => '/' + path.split('.').join('/')

function randomSingle (g: ReturnType<typeof generator>): Record<string, Json> {
  const op = g.pick(['increment', 'decrement', 'set', 'delete', 'push', 'insert', 'set', 'increment'] as const)
  const path = g.pick(PATHS)
  if (op === 'delete') return { op, path }
  if (op === 'increment' || op === 'decrement') return { op, path, value: g.int(5) + 1 }
  if (op === 'insert') return { op, path, value: randomValue(g), index: g.int(3) }
  return { op, path, value: randomValue(g) }
}

function randomChange (g: ReturnType<typeof generator>, doc: JsonObject, version: number): ChangeEntry {
  const kind = g.int(10)
  let parts: Partial<ChangeEntry>
  if (kind === 0) parts = { op: 'update', value: { a: { b: { c: 1 } }, list: [1, { x: 2 }, 3], votes: { up: 1 } } }
  else if (kind === 1) parts = { op: 'revert', revertedTo: 1, value: { votes: { up: 5, down: 2 }, n: 3 } }
  else if (kind === 2) {
    const operations: Json[] = Array.from({ length: 1 + g.int(3) }, () => randomSingle(g))
    if (g.int(2) === 0) operations.push({ op: 'test', path: g.pick(PATHS), value: valueAtPath(doc, dotSegments(g.pick(PATHS))).value ?? null })
    parts = { op: 'batch', operations }
  } else if (kind === 3) {
    const from = g.pick(PATHS)
    const path = g.pick(PATHS)
    const operations = [
      g.pick([
        { op: 'add', path: pointer(path), value: randomValue(g) },
        { op: 'remove', path: pointer(path) },
        { op: 'replace', path: pointer(path), value: randomValue(g) },
        { op: 'move', from: pointer(from), path: pointer(path) },
        { op: 'copy', from: pointer(from), path: pointer(path) },
        { op: 'add', path: '/list/-', value: randomValue(g) }
      ] as Json[])
    ]
    parts = { op: 'patch', operations }
  } else parts = randomSingle(g) as Partial<ChangeEntry>
  return entry({ ...parts, version })
}

describe('a value rebuilt from what is sent equals the value at the path (property)', () => {
  it('10,000 random operations, 8 watched paths', () => {
    const g = generator(29)
    let doc: JsonObject = { a: { b: { c: 1 } }, list: [{ x: 1 }, 2, 3], votes: { up: 0 } }
    const states = new Map<string, PathValue>(WATCHED.map(path => [path, valueAtPath(doc, dotSegments(path))]))
    let applied = 0
    let sentCount = 0
    for (let step = 0; step < 10_000; step++) {
      const change = randomChange(g, doc, applied + 1)
      let next: JsonObject
      try {
        next = applyContentOperation(structuredClone(doc), operationOfChange(change))
      } catch { continue }
      applied += 1
      for (const path of WATCHED) {
        const segments = dotSegments(path)
        const after = valueAtPath(next, segments)
        if (!changeTouches(change, segments)) {
          // Not touched: the value did not change.
          expect(after, `step ${step}, ${path}, ${JSON.stringify(change)}`).toEqual(valueAtPath(doc, segments))
          continue
        }
        const sent = pathChangeOf(change, path) ?? projectedChange(change, path, after)
        sentCount += 1
        const state = applyPathChange(structuredClone(states.get(path) as PathValue), path, sent)
        expect(state, `step ${step}, ${path}, ${JSON.stringify(change)}`).toEqual(after)
        states.set(path, state)
      }
      doc = next
    }
    expect(applied).toBeGreaterThan(3000)
    expect(sentCount).toBeGreaterThan(applied)
  })
})
