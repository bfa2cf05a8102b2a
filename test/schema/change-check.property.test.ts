// The change check (server/schema/content-schema.ts) against whole-document validation: for
// random schemas from a fixed family, random valid documents and random operations, checking
// only what the operation changed must accept exactly what validating the whole result
// accepts (docs/design.md §12). The family mixes the keywords the check walks through
// (properties, patternProperties, additionalProperties, items, prefixItems, $ref, allOf and
// the member-set constraints) with those that force a wider check (anyOf, oneOf, not,
// if/then/else, dependentSchemas, unevaluatedProperties, uniqueItems, contains, enum), with
// recursive $refs. Seeds are fixed (FUZZ_RANDOM=1 explores, FUZZ_SEED replays).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ContentdError } from '../../shared/errors.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { applyOperation, type Operation } from '../../shared/operations.js'
import { ContentSchema } from '../../server/schema/content-schema.js'
import { fuzzSeed } from '../fuzz/arbitraries.js'

const KEYS = ['a', 'b', 'c', '0', '1']
type Schema = boolean | Record<string, unknown>

const key = fc.constantFrom(...KEYS)
const smallInt = fc.integer({ min: 0, max: 3 })
const scalarType = fc.constantFrom('number', 'integer', 'string', 'boolean', 'null')
const anyType = fc.oneof(scalarType, fc.constantFrom('object', 'array'), fc.constant(['object', 'null']), fc.constant(['number', 'string']))
const refs = fc.constantFrom({ $ref: '#/$defs/tree' }, { $ref: '#/$defs/leaf' }, { $ref: '#' }, { $ref: '#/$defs/tree/additionalProperties' })

/** A few of the members (at most `most`), so that random documents often satisfy the schema. */
function partial (members: Record<string, fc.Arbitrary<unknown>>, most = 3): fc.Arbitrary<Record<string, unknown>> {
  const names = Object.keys(members)
  return fc.subarray(names, { maxLength: most }).chain(chosen =>
    fc.record(Object.fromEntries(chosen.map(name => [name, members[name] as fc.Arbitrary<unknown>]))))
}

const family = fc.letrec<{ schema: Schema, object: Schema }>(tie => {
  const sub = tie('schema')
  // Tuples: which schema applies to an element depends on its index, so inserting or deleting
  // before it changes it.
  const tuple = fc.record({
    prefixItems: fc.array(scalarType.map(type => ({ type })), { minLength: 1, maxLength: 3 }),
    items: fc.oneof(fc.boolean(), sub)
  })
  const objectKeywords = partial({
    type: fc.constant('object'),
    properties: fc.dictionary(key, fc.oneof(sub, tuple), { maxKeys: 3 }),
    patternProperties: fc.constantFrom('^[ab]', '^[0-9]$', 'c').chain(p => sub.map(s => ({ [p]: s }))),
    additionalProperties: fc.oneof(fc.boolean(), sub),
    required: fc.subarray(KEYS, { maxLength: 2 }),
    minProperties: smallInt,
    maxProperties: fc.integer({ min: 1, max: 4 }),
    propertyNames: fc.constantFrom({ pattern: '^[a-c0-9]$' }, { maxLength: 1 }, { not: { const: 'c' } }),
    dependentRequired: fc.constantFrom({ a: ['b'] }, { c: ['a', '0'] })
  })
  const arrayKeywords = partial({
    type: fc.constant('array'),
    items: fc.oneof(fc.boolean(), sub),
    prefixItems: fc.array(sub, { minLength: 1, maxLength: 2 }),
    minItems: smallInt,
    maxItems: fc.integer({ min: 1, max: 4 })
  })
  const scalarKeywords = partial({
    type: scalarType,
    minimum: fc.integer({ min: -2, max: 2 }),
    maximum: fc.integer({ min: 0, max: 6 }),
    multipleOf: fc.constantFrom(1, 2),
    minLength: smallInt,
    maxLength: fc.integer({ min: 1, max: 4 }),
    pattern: fc.constantFrom('^x', 'y')
  })
  const wide = fc.oneof(
    fc.array(sub, { minLength: 1, maxLength: 2 }).map(anyOf => ({ anyOf })),
    fc.array(sub, { minLength: 1, maxLength: 2 }).map(oneOf => ({ oneOf })),
    sub.map(not => ({ not })),
    fc.tuple(sub, sub, sub).map(([i, t, e]) => ({ if: i, then: t, else: e })),
    fc.tuple(key, sub).map(([k, s]) => ({ dependentSchemas: { [k]: s } })),
    fc.tuple(fc.dictionary(key, sub, { maxKeys: 2 }), fc.oneof(fc.boolean(), sub)).map(([properties, unevaluatedProperties]) => ({ properties, unevaluatedProperties })),
    fc.constant({ type: 'array', uniqueItems: true }),
    sub.map(contains => ({ contains, minContains: 1 })),
    fc.constantFrom({ enum: [1, 'x', { a: 1 }, [1]] }, { const: { a: 1 } })
  )
  return {
    object: objectKeywords,
    schema: fc.oneof({ depthSize: 'small', withCrossShrink: true },
      { weight: 1, arbitrary: fc.boolean() },
      { weight: 2, arbitrary: anyType.map(type => ({ type })) },
      { weight: 4, arbitrary: objectKeywords },
      { weight: 2, arbitrary: arrayKeywords },
      { weight: 2, arbitrary: scalarKeywords },
      { weight: 2, arbitrary: refs },
      { weight: 2, arbitrary: fc.tuple(fc.array(sub, { minLength: 1, maxLength: 2 }), objectKeywords).map(([allOf, rest]) => ({ ...rest, allOf })) },
      { weight: 1, arbitrary: fc.tuple(refs, objectKeywords).map(([ref, rest]) => ({ ...rest, ...ref })) },
      { weight: 2, arbitrary: wide })
  }
})
const schema = family.schema

/** A root (mostly about objects: the content is one) with recursive definitions the $refs above point into. */
const rootSchema = fc.tuple(fc.oneof({ weight: 3, arbitrary: family.object }, { weight: 1, arbitrary: schema }), schema).map(([root, leaf]): Schema => {
  const defs = {
    $defs: {
      tree: { type: 'object', additionalProperties: { anyOf: [{ type: 'number' }, { $ref: '#/$defs/tree' }] }, maxProperties: 3 },
      leaf
    }
  }
  return typeof root === 'boolean' ? { allOf: [root], ...defs } : { ...root, ...defs }
})

const json: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>(tie => ({
  value: fc.oneof({ depthSize: 'small' },
    fc.constantFrom<Json>(null, true, 0, 1, 2, 5, -1, 0.5, 'x', 'xy', 'y', ''),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3 }) as fc.Arbitrary<Json>)
})).value

const document = fc.dictionary(key, json, { maxKeys: 4 }) as fc.Arbitrary<JsonObject>
const path = fc.array(key, { minLength: 1, maxLength: 3 })
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ op: fc.constantFrom('increment' as const, 'decrement' as const), path, value: fc.constantFrom(1, 2, 0.5) }),
  fc.record({ op: fc.constantFrom('set' as const, 'push' as const), path, value: json }),
  fc.record({ op: fc.constant('delete' as const), path }),
  fc.record({ op: fc.constant('insert' as const), path, value: json, index: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ op: fc.constant('update' as const), value: document })
)

describe('schema change check', () => {
  // Each run compiles a random schema (milliseconds each, more on a loaded machine): a generous timeout.
  it('agrees with validating the whole document, for every operation on a valid document', { timeout: 300_000 }, () => {
    const seen = { schemas: 0, local: 0, compared: 0, accepted: 0, refused: 0, invalid: 0 }
    fc.assert(fc.property(rootSchema, fc.array(document, { minLength: 3, maxLength: 3 }), fc.array(operation, { minLength: 1, maxLength: 40 }), (raw, starts, operations) => {
      let contentSchema: ContentSchema
      try {
        contentSchema = ContentSchema.compile(raw)
      } catch (error) {
        // Schemas that apply themselves without end ({"$ref": "#/$defs/leaf"} as leaf) are refused.
        expect((error as ContentdError).code).toBe('INVALID_SCHEMA')
        seen.invalid += 1
        return
      }
      let doc = [...starts, {}].find(d => contentSchema.validate(d).length === 0)
      if (!doc) return
      seen.schemas += 1
      if (contentSchema.checksLocally) seen.local += 1
      for (const operation of operations) {
        const working = structuredClone(doc)
        const check = contentSchema.prepare(working, operation)
        let after: JsonObject
        try {
          after = applyOperation(working, structuredClone(operation))
        } catch {
          continue
        }
        const fast = check(after)
        const full = contentSchema.validate(after)
        seen.compared += 1
        expect(fast.length === 0, `fast ${JSON.stringify(fast)} vs full ${JSON.stringify(full)}\nschema ${JSON.stringify(raw)}\nbefore ${JSON.stringify(doc)}\nop ${JSON.stringify(operation)}`).toBe(full.length === 0)
        if (full.length === 0) { seen.accepted += 1; doc = after } else seen.refused += 1
      }
    }), { numRuns: 1000, seed: fuzzSeed('schema-change-check'), endOnFailure: true })
    console.log(`schema change check: ${JSON.stringify(seen)}`)
    // The family must exercise both answers, and mostly schemas checked locally.
    expect(seen.compared).toBeGreaterThan(1000)
    expect(seen.accepted).toBeGreaterThan(200)
    expect(seen.refused).toBeGreaterThan(200)
    expect(seen.local).toBeGreaterThan(100)
    expect(seen.invalid).toBeLessThan(100)
  })

  it('agrees on arrays whose element schemas depend on the index, when elements shift', { timeout: 300_000 }, () => {
    const scalar = fc.constantFrom<Json>(0, 1, 'x', true, null)
    const elementSchema = scalarType.map(type => ({ type }))
    const tupleRoot = fc.record({
      prefix: fc.array(elementSchema, { minLength: 1, maxLength: 3 }),
      items: fc.oneof(fc.boolean(), elementSchema),
      nested: fc.boolean()
    }).map(({ prefix, items, nested }) => {
      const tuple = { type: 'array', prefixItems: prefix, items, maxItems: 5 }
      return { schema: { type: 'object', properties: { a: nested ? { type: 'object', additionalProperties: tuple } : tuple } }, nested }
    })
    const index = fc.integer({ min: 0, max: 4 })
    const arrayOperation = (at: string[]): fc.Arbitrary<Operation> => fc.oneof(
      fc.record({ op: fc.constant('insert' as const), path: fc.constant(at), value: scalar, index }),
      index.map((i): Operation => ({ op: 'delete', path: [...at, String(i)] })),
      fc.record({ op: fc.constant('push' as const), path: fc.constant(at), value: scalar }),
      fc.tuple(index, scalar).map(([i, value]): Operation => ({ op: 'set', path: [...at, String(i)], value }))
    )
    let compared = 0
    let refused = 0
    fc.assert(fc.property(tupleRoot, fc.array(fc.array(scalar, { maxLength: 5 }), { minLength: 8, maxLength: 8 }), fc.array(fc.nat(), { minLength: 10, maxLength: 10 }), ({ schema, nested }, arrays, picks) => {
      const contentSchema = ContentSchema.compile(schema)
      const at = nested ? ['a', 'b'] : ['a']
      const wrap = (array: Json[]): JsonObject => nested ? { a: { b: array } } : { a: array }
      let doc = arrays.map(wrap).find(d => contentSchema.validate(d).length === 0)
      if (!doc) return
      for (const pick of picks) {
        const operation = fc.sample(arrayOperation(at), { numRuns: 1, seed: pick })[0] as Operation
        const working = structuredClone(doc)
        const check = contentSchema.prepare(working, operation)
        let after: JsonObject
        try {
          after = applyOperation(working, operation)
        } catch {
          continue
        }
        const fast = check(after)
        const full = contentSchema.validate(after)
        compared += 1
        expect(fast.length === 0, `fast ${JSON.stringify(fast)} vs full ${JSON.stringify(full)}\nschema ${JSON.stringify(schema)}\nbefore ${JSON.stringify(doc)}\nop ${JSON.stringify(operation)}`).toBe(full.length === 0)
        if (full.length === 0) doc = after
        else refused += 1
      }
    }), { numRuns: 400, seed: fuzzSeed('schema-change-check'), endOnFailure: true })
    console.log(`schema change check, shifting arrays: ${compared} compared, ${refused} refused`)
    expect(compared).toBeGreaterThan(1000)
    expect(refused).toBeGreaterThan(200)
  })
})
