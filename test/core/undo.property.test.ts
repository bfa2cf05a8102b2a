// prepareUndo (shared/undo.ts) takes back an operation applied in place, leaving the
// document exactly as it was: same JSON, same key order, same containers. The stores rely
// on it when a schema refuses an operation's result (docs/design.md §12).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Json, JsonObject } from '../../shared/json.js'
import { applyOperation, type Operation } from '../../shared/operations.js'
import { prepareUndo } from '../../shared/undo.js'

// Integer-like keys sort first in JavaScript objects; order-sensitive cases need both kinds.
const KEYS = ['a', 'b', 'c', 'zz', '0', '1', '2', '10']
const key = fc.constantFrom(...KEYS)

const json: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>(tie => ({
  value: fc.oneof({ depthSize: 'small' },
    fc.constantFrom<Json>(null, true, 0, 1, -2, 0.5, 'x', ''),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie('value')), { maxLength: 5 }).map(entries => Object.fromEntries(entries) as Json))
})).value

const document = fc.array(fc.tuple(key, json), { maxLength: 6 }).map(entries => Object.fromEntries(entries) as JsonObject)
const path = fc.array(fc.oneof(key, fc.constantFrom('3', '4', '01')), { minLength: 1, maxLength: 4 })
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ op: fc.constantFrom('increment' as const, 'decrement' as const), path, value: fc.constantFrom(1, 2.5) }),
  fc.record({ op: fc.constantFrom('set' as const, 'push' as const), path, value: json }),
  fc.record({ op: fc.constant('delete' as const), path }),
  fc.record({ op: fc.constant('insert' as const), path, value: json, index: fc.integer({ min: 0, max: 4 }) })
)

/** Every container of a document, in walk order, to check that undo keeps their identity. */
function containers (value: Json, into: object[] = []): object[] {
  if (value !== null && typeof value === 'object') {
    into.push(value)
    for (const member of Object.values(value)) containers(member, into)
  }
  return into
}

describe('prepareUndo', () => {
  it('restores the document exactly after any successful path operation', () => {
    let undone = 0
    fc.assert(fc.property(document, fc.array(operation, { minLength: 1, maxLength: 10 }), (doc, operations) => {
      for (const op of operations) {
        const before = JSON.stringify(doc)
        const identities = containers(doc)
        const undo = prepareUndo(doc, op)
        try {
          applyOperation(doc, structuredClone(op))
        } catch {
          expect(JSON.stringify(doc), 'a failed operation touched nothing').toBe(before)
          continue
        }
        const after = JSON.stringify(doc)
        undo()
        undone += 1
        expect(JSON.stringify(doc), `undo of ${JSON.stringify(op)} on ${before} (after: ${after})`).toBe(before)
        const restored = containers(doc)
        expect(restored.length).toBe(identities.length)
        if (restored.some((container, i) => container !== identities[i])) expect.fail(`undo of ${JSON.stringify(op)} replaced a container`)
        // Keep going from the changed document, so later operations meet fuller ones.
        applyOperation(doc, structuredClone(op))
      }
    }), { numRuns: 500, seed: 16021127, endOnFailure: true })
    expect(undone).toBeGreaterThan(1000)
  })

  it('puts a deleted member back in its place among the others', () => {
    const doc: JsonObject = { a: 1, b: 2, c: 3, 1: 'one' }
    const undo = prepareUndo(doc, { op: 'delete', path: ['a'] })
    applyOperation(doc, { op: 'delete', path: ['a'] })
    expect(Object.keys(doc)).toEqual(['1', 'b', 'c'])
    undo()
    expect(Object.keys(doc)).toEqual(['1', 'a', 'b', 'c'])
  })

  it('has nothing to undo for update, which leaves the old document alone', () => {
    const doc: JsonObject = { a: 1 }
    const undo = prepareUndo(doc, { op: 'update', value: { b: 2 } })
    expect(applyOperation(doc, { op: 'update', value: { b: 2 } })).toEqual({ b: 2 })
    undo()
    expect(doc).toEqual({ a: 1 })
  })
})
