// Properties of the pure core over random operation sequences with hostile keys and paths
// (docs/design.md §2-§4). Seeds are fixed so a failure replays; fast-check prints the
// counterexample, shrunk.
//
// Operations are applied two ways: as requests (string paths through toOperation, as over
// HTTP) and raw (pre-split paths straight into applyOperation, as a client applying change
// events or a store would), so the core must hold its promises without parsePath's help.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { assertWritableValue, type Json, type JsonObject } from '../../shared/json.js'
import { applyOperation, growthBound, type Operation } from '../../shared/operations.js'
import { isCanonicalIndex } from '../../shared/path.js'
import { isSameJson, toOperation } from '../cases/operation-cases.js'

const RUNS = { numRuns: 250, seed: 20251121, endOnFailure: true }

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf']
const SEGMENTS = [...PROTOTYPE_NAMES, 'a', 'b', '0', '1', '2', '07', '-1', '$x', '']
const SAFE_KEYS = SEGMENTS.filter(s => !['__proto__', '-1', '$x', ''].includes(s))
const HOSTILE_KEYS = [...SEGMENTS, 'a.b']

/** Objects built through JSON.parse, so a "__proto__" key is an own key, as in a request body. */
const objectFrom = (entries: Array<[string, unknown]>): JsonObject =>
  JSON.parse(JSON.stringify(Object.fromEntries(entries))) as JsonObject

function jsonArbitrary (keys: readonly string[]) {
  return fc.letrec<{ value: Json, array: Json[], object: JsonObject }>(tie => ({
    value: fc.oneof({ depthSize: 'small' },
      fc.constant(null), fc.boolean(), fc.integer({ min: -3, max: 3 }), fc.constantFrom(0.5, 1e308, -1e308), fc.constantFrom('x', ''),
      tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 3 }),
    object: fc.array(fc.tuple(fc.constantFrom(...keys), tie('value')), { maxLength: 3 }).map(objectFrom)
  }))
}

const hostileValue = jsonArbitrary(HOSTILE_KEYS).value
const startingDocument = jsonArbitrary(SAFE_KEYS).object
const segments = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 4 })

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ op: fc.constantFrom('increment' as const, 'decrement' as const), path: segments, value: fc.constantFrom(1, -2, 0.5, 1e308) }),
  fc.record({ op: fc.constantFrom('set' as const, 'push' as const), path: segments, value: hostileValue }),
  fc.record({ op: fc.constant('delete' as const), path: segments }),
  fc.record({ op: fc.constant('insert' as const), path: segments, value: hostileValue, index: fc.integer({ min: -1, max: 3 }) }),
  // Sometimes not an object at all: the core must refuse it.
  fc.record({ op: fc.constant('update' as const), value: hostileValue as fc.Arbitrary<JsonObject> })
)

/** Applied raw, or as the request a client would send (string path). */
const step = fc.record({ operation, asRequest: fc.boolean() })
const sequence = fc.record({ start: startingDocument, steps: fc.array(step, { minLength: 1, maxLength: 12 }) })

function apply (doc: JsonObject, { operation: op, asRequest }: { operation: Operation, asRequest: boolean }): JsonObject {
  if (!asRequest) return applyOperation(doc, op)
  const request = op.op === 'update' ? { op: op.op, value: op.value } : { ...op, path: op.path.join('.') }
  return applyOperation(doc, toOperation(request))
}

// --- invariants --------------------------------------------------------------------------

const PROTOTYPES = [Object.prototype, Array.prototype, Function.prototype]
const ownNames = () => PROTOTYPES.map(p => Reflect.ownKeys(p).map(String).sort().join(','))
const PRISTINE = ownNames()

function expectPrototypesUntouched (): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined()
  expect(ownNames()).toEqual(PRISTINE)
}

/** Every container in the document is an ordinary array or plain object. */
function expectOrdinaryContainers (value: Json): void {
  if (value === null || typeof value !== 'object') return
  if (Array.isArray(value)) {
    expect(Object.getPrototypeOf(value)).toBe(Array.prototype)
    value.forEach(expectOrdinaryContainers)
    return
  }
  expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
  Object.values(value).forEach(expectOrdinaryContainers)
}

function childOf (container: Json, segment: string): Json | undefined {
  if (Array.isArray(container)) return isCanonicalIndex(segment) ? container[Number(segment)] : undefined
  if (container === null || typeof container !== 'object') return undefined
  return Object.prototype.hasOwnProperty.call(container, segment) ? container[segment] : undefined
}

/**
 * The subtree a successful path operation may change: its path, or its first segment that
 * did not exist before (everything created hangs there); for a delete inside an array, the
 * array, whose later elements shift.
 */
function affectedPath (before: JsonObject, path: readonly string[], op: Operation['op']): string[] {
  let current: Json = before
  for (let i = 0; i < path.length; i++) {
    const child = childOf(current, path[i] as string)
    if (child === undefined) return path.slice(0, i + 1)
    if (i === path.length - 1) return op === 'delete' && Array.isArray(current) ? path.slice(0, i) : [...path]
    current = child
  }
  return [...path]
}

/** A copy of the document without the subtree at `path`. */
function without (doc: JsonObject, path: readonly string[]): JsonObject {
  const copy = structuredClone(doc)
  let parent: Json = copy
  for (const segment of path.slice(0, -1)) parent = childOf(parent, segment) ?? null
  const last = path[path.length - 1] as string
  if (childOf(parent, last) === undefined) return copy
  if (Array.isArray(parent)) parent.splice(Number(last), 1)
  else delete (parent as JsonObject)[last]
  return copy
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '')

// --- properties --------------------------------------------------------------------------

describe('the core over random operation sequences with hostile keys and paths', () => {
  it('never reaches Object.prototype or any object\'s prototype', () => {
    fc.assert(fc.property(sequence, ({ start, steps }) => {
      let doc = structuredClone(start)
      for (const s of structuredClone(steps)) {
        try { doc = apply(doc, s) } catch (e) { expect(e).toBeInstanceOf(ContentdError) }
        expectPrototypesUntouched()
        expectOrdinaryContainers(doc)
      }
    }), RUNS)
  })

  it('leaves the document exactly as it was when an operation fails, and fails only with catalogued errors', () => {
    let failures = 0
    fc.assert(fc.property(sequence, ({ start, steps }) => {
      let doc = structuredClone(start)
      for (const s of structuredClone(steps)) {
        const snapshot = structuredClone(doc)
        const text = JSON.stringify(doc)
        try {
          doc = apply(doc, s)
        } catch (e) {
          failures++
          expect(e).toBeInstanceOf(ContentdError)
          expect(isSameJson(doc, snapshot)).toBe(true)
          expect(JSON.stringify(doc)).toBe(text)
        }
      }
    }), RUNS)
    // The generators are hostile enough that failures really were exercised.
    expect(failures).toBeGreaterThan(100)
  })

  it('keeps valid JSON content and changes nothing outside the operation\'s subtree', () => {
    let successes = 0
    fc.assert(fc.property(sequence, ({ start, steps }) => {
      let doc = structuredClone(start)
      for (const s of structuredClone(steps)) {
        const before = structuredClone(doc)
        let after: JsonObject
        try { after = apply(doc, s) } catch { continue }
        successes++
        expect(isSameJson(JSON.parse(JSON.stringify(after)), after)).toBe(true)
        expect(() => assertWritableValue(after)).not.toThrow()
        const op = s.operation
        if (op.op !== 'update') {
          const affected = affectedPath(before, op.path, op.op)
          expect(isSameJson(without(after, affected), without(before, affected))).toBe(true)
        }
        doc = after
      }
    }), RUNS)
    expect(successes).toBeGreaterThan(100)
  })

  it('never grows the serialized document by more than growthBound (the store relies on it)', () => {
    fc.assert(fc.property(sequence, ({ start, steps }) => {
      let doc = structuredClone(start)
      for (const s of structuredClone(steps)) {
        const op = s.operation
        const before = bytes(doc)
        const valueBytes = 'value' in op ? bytes(op.value) : 0
        try { doc = apply(doc, s) } catch { continue }
        expect(bytes(doc) - before).toBeLessThanOrEqual(growthBound(op, valueBytes))
      }
    }), RUNS)
  })
})
