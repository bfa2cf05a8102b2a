// fast-check generators for content operations: paths made of segments that tend to
// collide (so operations meet each other's values), hostile keys, and values that are
// JSON but may break the rules (depth, "__proto__" keys, "$" keys, dots).
import fc from 'fast-check'
import type { Json, JsonObject } from '../../shared/json.js'

const SEGMENTS = ['a', 'b', 'c', '0', '1', '2', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__proto__', '$x', '07', '-1', '', ' ', 'ü', 'a\u0000']

export const pathText: fc.Arbitrary<string> = fc.oneof(
  { weight: 9, arbitrary: fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 4 }).map(s => s.join('.')) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }
)

/** Parsed from text, as a request body would be: "__proto__" becomes an own key. */
const HOSTILE_VALUES: Json[] = [
  JSON.parse('{"__proto__":{"polluted":true}}'),
  JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'),
  { 'a.b': 1 },
  { $set: 1 },
  { '': 1 },
  JSON.parse('[' + '['.repeat(64) + ']'.repeat(64) + ']'),
  'x'.repeat(3000)
]

export const jsonValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 8, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(v => JSON.parse(JSON.stringify(v)) as Json) },
  // Copied, so that no run can mutate the shared originals.
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_VALUES).map(v => JSON.parse(JSON.stringify(v)) as Json) }
)

const amount = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom(0.5, 1e308, -1e308))

/** One operation as a route would hand it over, path still as text. */
export type RawOperation =
  | { op: 'increment' | 'decrement', path: string, value: number }
  | { op: 'set' | 'push', path: string, value: Json }
  | { op: 'delete', path: string }
  | { op: 'insert', path: string, value: Json, index: number }
  | { op: 'update', value: JsonObject }

export const rawOperation: fc.Arbitrary<RawOperation> = fc.oneof(
  fc.record({ op: fc.constantFrom('increment' as const, 'decrement' as const), path: pathText, value: amount }),
  fc.record({ op: fc.constantFrom('set' as const, 'push' as const), path: pathText, value: jsonValue }),
  fc.record({ op: fc.constant('delete' as const), path: pathText }),
  fc.record({ op: fc.constant('insert' as const), path: pathText, value: jsonValue, index: fc.integer({ min: -1, max: 3 }) }),
  fc.record({ op: fc.constant('update' as const), value: fc.dictionary(fc.constantFrom(...SEGMENTS), jsonValue, { maxKeys: 3 }) as fc.Arbitrary<JsonObject> })
)

// Fixed by default so `npm test` and CI are repeatable; FUZZ_RANDOM=1 explores fresh seeds
// (run it when changing the code under test) and FUZZ_SEED replays one.
const DEFAULT_SEEDS: Record<string, number> = { operations: 20261121, http: 72886489, 'schema-change-check': 16021126 }

/** The seed to use, printed so any run can be replayed. */
export function fuzzSeed (name: string): number {
  const seed = process.env.FUZZ_SEED
    ? Number(process.env.FUZZ_SEED)
    : process.env.FUZZ_RANDOM ? Math.floor(Math.random() * 2 ** 31) : DEFAULT_SEEDS[name] ?? 1
  console.log(`${name}: fast-check seed ${seed} (replay with FUZZ_SEED=${seed})`)
  return seed
}
