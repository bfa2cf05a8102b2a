// The MongoDB store's translation (docs/design.md §20) checked against an independent
// implementation of MongoDB's query and update operators: for random documents and random
// operations of every kind (index-like segments, arrays, missing intermediates, paths of up to
// 32 segments, values and keys with lone surrogates, batches and patches), the filter and
// update the store builds (write-path.ts prepareCommit, the function the store sends) are sent
// over BSON and applied by `mingo`; the result must equal the shared core's, byte for byte as
// JSON. An operation the core refuses must be refused before anything is built.
//
// This shows the translation means what the core does wherever mingo behaves as MongoDB does.
// It is not a run against MongoDB: docs/mongodb.md says what only a replica set can show.
import fc from 'fast-check'
import { updateOne } from 'mingo/updater'
import { describe, expect, it } from 'vitest'
import type { ContentOperation } from '../../shared/compound.js'
import { applyWithinLimit, jsonBytes } from '../../shared/content-limit.js'
import { ContentdError, isContentdError } from '../../shared/errors.js'
import type { Json, JsonObject } from '../../shared/json.js'
import type { BatchOperation } from '../../shared/batch.js'
import type { PatchOperation } from '../../shared/json-patch.js'
import { changePartsOf } from '../../server/store/change-entry.js'
import { prepareCommit, type ResolvedWrite } from '../../server/store/mongodb/write-path.js'
import { overTheWire } from '../support/mingo-backend.js'

const LIMIT = 1024 * 1024
const ACTOR = { type: 'user' as const, name: '@tester' }
const SEED = 20261126

// Index-like segments ("0", "3", "07"), ordinary keys, and two lone surrogates.
const KEYS = ['a', 'b', 'x', '0', '1', '2']
const SEGMENTS = [...KEYS, '3', '07', '10']
const LONE = ['\ud800', 'k\udfff']

const jsonValue = fc.letrec<{ value: Json, array: Json[], object: JsonObject }>(tie => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    fc.constant(null), fc.boolean(), fc.integer({ min: -5, max: 5 }), fc.constantFrom(0.5, -0, 2147483647, 2 ** 53, 1e308, -1e308),
    fc.oneof({ weight: 12, arbitrary: fc.constantFrom('s', '', 'é', '😀') }, { weight: 1, arbitrary: fc.constantFrom(...LONE) }),
    tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.array(fc.tuple(fc.oneof({ weight: 20, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: fc.constantFrom(...LONE) }), tie('value')), { maxLength: 4 })
    .map(entries => Object.fromEntries(entries) as JsonObject)
}))

/** Documents built from safe keys and strings only: what a store can hold. */
const safeDocument = fc.letrec<{ value: Json, array: Json[], object: JsonObject }>(tie => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.integer({ min: -5, max: 5 }), fc.constantFrom(0.5, 'v', true), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.array(fc.tuple(fc.constantFrom(...KEYS), tie('value')), { maxLength: 4 }).map(entries => Object.fromEntries(entries) as JsonObject)
})).object

const shortPath = fc.array(fc.oneof({ weight: 30, arbitrary: fc.constantFrom(...SEGMENTS) }, { weight: 1, arbitrary: fc.constantFrom(...LONE) }), { minLength: 1, maxLength: 5 })
// The longest paths: 32 segments, mostly "0" (the shape that made the old guards explode).
const longPath = fc.array(fc.constantFrom('0', '0', '0', '1', 'a'), { minLength: 32, maxLength: 32 })
const path = fc.oneof({ weight: 9, arbitrary: shortPath }, { weight: 1, arbitrary: longPath })
const amount = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(1e308, 0.1))

const batchStep: fc.Arbitrary<BatchOperation> = fc.oneof(
  fc.record({ op: fc.constantFrom('increment' as const, 'decrement' as const), path: shortPath, value: amount }),
  fc.record({ op: fc.constantFrom('set' as const, 'push' as const, 'test' as const), path: shortPath, value: jsonValue.value }),
  fc.record({ op: fc.constant('delete' as const), path: shortPath }),
  fc.record({ op: fc.constant('insert' as const), path: shortPath, value: jsonValue.value, index: fc.integer({ min: 0, max: 3 }) })
)
const pointer = shortPath.map(segments => '/' + segments.map(s => s.replaceAll('~', '~0').replaceAll('/', '~1')).join('/'))
const patchStep: fc.Arbitrary<PatchOperation> = fc.oneof(
  fc.record({ op: fc.constantFrom('add' as const, 'replace' as const, 'test' as const), path: pointer, value: jsonValue.value }),
  fc.record({ op: fc.constant('remove' as const), path: pointer }),
  fc.record({ op: fc.constantFrom('move' as const, 'copy' as const), from: pointer, path: pointer }),
  fc.record({ op: fc.constant('add' as const), path: pointer.map(p => p.replace(/\/[^/]*$/, '/-')), value: jsonValue.value })
)

const operation: fc.Arbitrary<ContentOperation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('increment' as const, 'decrement' as const), path, value: amount }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('set' as const), path, value: jsonValue.value }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), path }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('push' as const), path, value: jsonValue.value }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('insert' as const), path, value: jsonValue.value, index: fc.integer({ min: 0, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('update' as const), value: jsonValue.object }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('batch' as const), operations: fc.array(batchStep, { minLength: 1, maxLength: 4 }) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('patch' as const), operations: fc.array(patchStep, { minLength: 1, maxLength: 3 }) }) }
)

/**
 * What the shared core makes of the operation, through the entry point both stores use
 * (shared/content-limit.ts): the content after it, or its error.
 */
function core (content: JsonObject, op: ContentOperation): { content: JsonObject } | { error: ContentdError } {
  try {
    const valueBytes = 'value' in op ? Buffer.byteLength(JSON.stringify(op.value)) : 0
    return { content: applyWithinLimit({ doc: structuredClone(content), bytes: jsonBytes(content) }, op, LIMIT, valueBytes).doc }
  } catch (error) {
    if (isContentdError(error)) return { error }
    throw error
  }
}

function resolved (op: ContentOperation): ResolvedWrite {
  return { applied: op, parts: changePartsOf(op), value: 'value' in op ? op.value : undefined }
}

interface Tally { applied: number, refused: number, byKind: Map<string, number> }

/**
 * One step: the core's answer, then the store's translation of it applied by mingo to the
 * stored document (as sent over BSON). Returns the stored document after it.
 */
function step (stored: { _id: string, version: number, content: JsonObject }, op: ContentOperation, tally: Tally): typeof stored {
  const expected = core(stored.content, op)
  let commit
  try {
    commit = prepareCommit('p', { version: stored.version, content: structuredClone(stored.content) }, resolved(op), ACTOR, LIMIT, null)
  } catch (error) {
    // Refused before anything is built, with exactly the core's error.
    if (!('error' in expected)) throw error
    expect(isContentdError(error) && error.code).toBe(expected.error.code)
    tally.refused++
    return stored
  }
  if ('error' in expected) throw new Error(`the core refused ${JSON.stringify(op)} (${expected.error.code}) but the store built a write`)
  const { filter, update } = overTheWire({ filter: commit.filter, update: commit.update })
  // Another writer's version: the filter must not match (the write would read again).
  const stale = [overTheWire({ ...stored, version: stored.version + 1 })]
  expect(updateOne(stale, filter, update).matchedCount).toBe(0)
  const collection = [overTheWire(stored) as typeof stored]
  expect(updateOne(collection, filter, update).matchedCount).toBe(1)
  const after = collection[0] as typeof stored & { contentBytes: number }
  expect(JSON.stringify(after.content)).toBe(JSON.stringify(expected.content))
  expect(after.version).toBe(stored.version + 1)
  // The size carried along is an upper bound of the content's JSON bytes (shared/content-limit.ts).
  expect(after.contentBytes).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(after.content)))
  tally.applied++
  tally.byKind.set(op.op, (tally.byKind.get(op.op) ?? 0) + 1)
  return { _id: 'p', version: after.version, content: after.content }
}

describe('the store\'s filter and update, applied by mingo, equal the shared core', () => {
  it('over random sequences of every kind of operation (at least 10,000 operations)', () => {
    const tally: Tally = { applied: 0, refused: 0, byKind: new Map() }
    fc.assert(fc.property(safeDocument, fc.array(operation, { minLength: 1, maxLength: 12 }), (start, ops) => {
      let stored = { _id: 'p', version: 3, content: start }
      for (const op of ops) stored = step(stored, op, tally)
    }), { numRuns: 1800, seed: SEED, endOnFailure: true })
    console.log(`mingo property: ${tally.applied} applied and compared, ${tally.refused} refused by the core, by kind ${JSON.stringify(Object.fromEntries(tally.byKind))}`)
    expect(tally.applied + tally.refused).toBeGreaterThanOrEqual(10_000)
    expect(tally.applied).toBeGreaterThanOrEqual(5_000)
    for (const kind of ['increment', 'decrement', 'set', 'delete', 'push', 'insert', 'update', 'batch', 'patch']) {
      expect(tally.byKind.get(kind), kind).toBeGreaterThan(50)
    }
  })

  it('on 32-segment paths of index-like segments through arrays, objects and nothing', () => {
    const tally: Tally = { applied: 0, refused: 0, byKind: new Map() }
    // A document holding the deepest such path, nested arrays and objects of "0" keys mixed.
    const nested = fc.array(fc.boolean(), { minLength: 31, maxLength: 31 }).map(arrays => {
      let value: Json = 1
      for (const asArray of arrays) value = asArray ? [value] : { 0: value }
      return { 0: value } as JsonObject
    })
    const zeros = Array.from({ length: 32 }, () => '0')
    const kinds: Array<(p: string[]) => ContentOperation> = [
      p => ({ op: 'increment', path: p, value: 2 }),
      p => ({ op: 'decrement', path: p, value: 0.5 }),
      p => ({ op: 'set', path: p, value: { deep: [1] } }),
      p => ({ op: 'delete', path: p }),
      p => ({ op: 'push', path: p, value: [2] }),
      p => ({ op: 'insert', path: p, value: 3, index: 0 })
    ]
    fc.assert(fc.property(nested, fc.integer({ min: 1, max: 32 }), fc.constantFrom(...kinds), (doc, length, kind) => {
      step({ _id: 'p', version: 0, content: doc }, kind(zeros.slice(0, length)), tally)
    }), { numRuns: 600, seed: SEED })
    expect(tally.applied).toBeGreaterThan(100)
    expect(tally.refused).toBeGreaterThan(10)
  })
})
