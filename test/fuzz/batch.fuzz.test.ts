// Batches and patches against the pure core (docs/design.md §10): a random batch or patch
// applied by the engine must agree with applying its operations one by one on a copy. When
// every operation succeeds the results are equal; when operation i is the first to fail,
// the engine fails with the same code and `operation: i`, and the document is untouched
// (all or nothing). Seeds as in arbitraries.ts.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { applyBatch, assertTest, type BatchOperation } from '../../shared/batch.js'
import { parseBatch } from '../../shared/batch-request.js'
import { ContentdError, OperationError } from '../../shared/errors.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { jsonEqual } from '../../shared/json-equal.js'
import { applyPatch, parsePatch, type PatchOperation } from '../../shared/json-patch.js'
import { applyOperation } from '../../shared/operations.js'
import { fuzzSeed, jsonValue } from './arbitraries.js'

const KEYS = ['a', 'b', '0', '1', 'constructor']
const document = fc.dictionary(fc.constantFrom(...KEYS), fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom(...KEYS), fc.oneof(fc.integer(), fc.array(fc.integer(), { maxLength: 2 })), { maxKeys: 3 })
), { maxKeys: 4 }).map(doc => JSON.parse(JSON.stringify(doc)) as JsonObject)
const dotPath = fc.array(fc.constantFrom(...KEYS, '2'), { minLength: 1, maxLength: 2 }).map(s => s.join('.'))
const pointer = fc.array(fc.constantFrom(...KEYS, '2', '-', 'x~1y'), { minLength: 1, maxLength: 2 }).map(s => '/' + s.join('/'))

// Mostly small numbers, so tests pass now and then; sometimes any JSON (hostile keys included).
const value = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -1, max: 1 }) }, { weight: 1, arbitrary: jsonValue })
const batchItem = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('increment', 'decrement'), path: dotPath, value: fc.integer({ min: -3, max: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('set', 'push'), path: dotPath, value }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('test'), path: dotPath, value }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete'), path: dotPath }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('insert'), path: dotPath, value: fc.integer(), index: fc.integer({ min: 0, max: 2 }) }) }
)
const patchItem = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('add', 'replace'), path: pointer, value }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('test'), path: pointer, value }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('remove'), path: pointer }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('move', 'copy'), from: pointer, path: pointer }) }
)

type Outcome = { doc: JsonObject } | { code: string, operation: number }

/** The reference: each operation alone, on a copy, in order; stop at the first failure. */
function oneByOne<T> (doc: JsonObject, operations: T[], applyOne: (doc: JsonObject, operation: T) => JsonObject): Outcome {
  let current = structuredClone(doc)
  for (let i = 0; i < operations.length; i++) {
    try {
      current = applyOne(structuredClone(current), structuredClone(operations[i] as T))
    } catch (error) {
      if (!(error instanceof ContentdError)) throw error
      return { code: error.code, operation: i }
    }
  }
  return { doc: current }
}

function engine (doc: JsonObject, run: (doc: JsonObject) => JsonObject): Outcome {
  try {
    return { doc: run(doc) }
  } catch (error) {
    if (!(error instanceof OperationError)) throw error
    return { code: error.code, operation: error.operation }
  }
}

function applyOneBatchOperation (doc: JsonObject, operation: BatchOperation): JsonObject {
  if (operation.op === 'test') { assertTest(doc, operation.path, operation.value as Json); return doc }
  return applyOperation(doc, operation)
}

// Both kinds of outcome must be common, or the property proves little.
const seen = { applied: 0, failed: 0 }
const tally = (outcome: Outcome) => { if ('doc' in outcome) seen.applied++; else seen.failed++ }

describe('batches and patches agree with their operations applied one by one', () => {
  it('batch', () => {
    fc.assert(fc.property(document, fc.array(batchItem, { minLength: 1, maxLength: 6 }), (doc, items) => {
      let operations: BatchOperation[]
      try {
        operations = parseBatch({ operations: structuredClone(items) }, 100)
      } catch (error) {
        // Refused as a request (a "$x" key, say): then it names an operation that is refused alone.
        expect(error).toBeInstanceOf(OperationError)
        const index = (error as OperationError).operation
        expect(() => parseBatch({ operations: [items[index]] }, 100)).toThrow(ContentdError)
        return
      }
      const before = structuredClone(doc)
      const expected = oneByOne(doc, operations, applyOneBatchOperation)
      const actual = engine(doc, d => applyBatch(d, operations))
      tally(actual)
      expect(actual).toEqual(expected)
      if ('doc' in actual && 'doc' in expected) expect(jsonEqual(actual.doc, expected.doc)).toBe(true)
      expect(jsonEqual(doc, before)).toBe(true)
    }), { numRuns: 600, seed: fuzzSeed('batch') })
  })

  it('patch', () => {
    fc.assert(fc.property(document, fc.array(patchItem, { minLength: 1, maxLength: 6 }), (doc, items) => {
      let operations: PatchOperation[]
      try {
        operations = parsePatch(structuredClone(items), 100)
      } catch (error) {
        expect(error).toBeInstanceOf(OperationError)
        return
      }
      const before = structuredClone(doc)
      const expected = oneByOne(doc, operations, (d, operation) => applyPatch(d, [operation]))
      const actual = engine(doc, d => applyPatch(d, operations))
      tally(actual)
      expect(actual).toEqual(expected)
      expect(jsonEqual(doc, before)).toBe(true)
    }), { numRuns: 600, seed: fuzzSeed('patch') })
  })

  it('saw batches and patches both applied and failing', () => {
    console.log('batch/patch fuzz outcomes', seen)
    expect(seen.applied).toBeGreaterThan(100)
    expect(seen.failed).toBeGreaterThan(100)
  })
})
