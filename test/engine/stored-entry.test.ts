// The engine makes a write's stored entry once, as one text, and takes the value's JSON and
// its UTF-8 size (the content limit's) from inside it (server/engine/write-step.ts storedForm,
// issue 35). Whatever the value, that must be exactly what making each on its own gave:
// the entry is JSON.stringify of the entry object in docs/design.md §9's order, the value's
// JSON is JSON.stringify of the value, and the size is Buffer.byteLength of that.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isContentdError } from '../../shared/errors.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { growthBound, type Operation } from '../../shared/operations.js'
import { validateOperation } from '../../shared/validate-operation.js'
import { prepareChange, storedEntryJson } from '../../server/engine/write-step.js'
import type { ProjectRecord, StoreOperation } from '../../server/store/types.js'

const PROJECT: ProjectRecord = { id: 'p1', ownerId: 'u1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: '2026-11-26T00:00:00.000Z', version: 3 }
const AT = '2026-11-27T10:00:00.000Z'
const ACTOR = { type: 'user' as const, name: '@alice' }
const BEFORE: JsonObject = { list: [1, 2], n: 1, 'é': { x: 'y' } }
const PAST = '{"old":["ünïcode 🌍",1.5,null]}'

// Text with what makes JSON and UTF-8 differ: escapes, quotes, backslashes, 2-, 3- and 4-byte characters.
const text = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', '"', '\\', '/', '\n', '\u0000', '\u001f', '\u007f', '\u2028', 'é', '日', '🌍', '.', '$'), maxLength: 6 })
const key = fc.string({ unit: fc.constantFrom('a', 'b', 'é', '日', '🌍', '_', '-'), minLength: 1, maxLength: 5 })
const { value } = fc.letrec(tie => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), text, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 4 })
})) as { value: fc.Arbitrary<Json> }
const object = fc.dictionary(key, value, { maxKeys: 5 }) as fc.Arbitrary<JsonObject>

const path = (...paths: string[][]) => fc.constantFrom(...paths).map(p => [...p])
const operation = fc.oneof(
  fc.record({ op: fc.constant('set' as const), path: path(['a'], ['list'], ['é', 'x'], ['🌍', 'b', 'c']), value }),
  fc.record({ op: fc.constant('push' as const), path: path(['a'], ['list'], ['🌍', 'b', 'c']), value }),
  fc.record({ op: fc.constant('insert' as const), path: path(['list']), value, index: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ op: fc.constant('increment' as const), path: path(['n']), value: fc.integer({ min: -5, max: 5 }) }),
  fc.record({ op: fc.constant('delete' as const), path: path(['n'], ['list', '0']) }),
  fc.record({ op: fc.constant('update' as const), value: object }),
  fc.constant({ op: 'revert' as const, version: 1 })
) as fc.Arbitrary<StoreOperation>

function prepared (op: StoreOperation, limit = 1 << 20) {
  const doc = structuredClone(BEFORE)
  const current = { version: PROJECT.version, doc, bytes: Buffer.byteLength(JSON.stringify(doc)), schema: null }
  return { current, change: prepareChange(PROJECT, current, op, { actor: ACTOR }, { at: AT, contentAt: () => PAST }, limit) }
}

/** The entry as §9 orders it (without `project`), as an object JSON.stringify can serialize. */
function entryObject (op: StoreOperation, value: Json | undefined): Record<string, unknown> {
  const entry: Record<string, unknown> = { version: PROJECT.version + 1, op: op.op }
  if ('path' in op) entry.path = op.path.join('.')
  if (value !== undefined) entry.value = value
  if (op.op === 'insert') entry.index = op.index
  if (op.op === 'revert') entry.revertedTo = op.version
  return { ...entry, at: AT, actor: ACTOR }
}

describe('the stored entry, made once, and the value inside it', () => {
  it('are what JSON.stringify and Buffer.byteLength make of the entry and the value, for any value', () => {
    fc.assert(fc.property(operation, op => {
      if (op.op !== 'revert') validateOperation(op as Operation)
      const { current, change } = prepared(op)
      const value = op.op === 'revert' ? JSON.parse(PAST) as Json : 'value' in op ? op.value : undefined
      const valueJson = value === undefined ? undefined : JSON.stringify(value)
      expect(change.valueJson).toBe(valueJson)
      expect(change.entryJson).toBe(JSON.stringify(entryObject(op, value)))
      expect(storedEntryJson(change)).toBe(change.entryJson)
      expect(change.wire()).toBe('{"project":"@alice/demo",' + change.entryJson.slice(1))
      // The size the content limit was given: exact for a replacement, the growth bound otherwise.
      const valueBytes = valueJson === undefined ? 0 : Buffer.byteLength(valueJson)
      if (op.op === 'update' || op.op === 'revert') expect(change.bytes).toBe(valueBytes)
      else expect(change.bytes).toBe(current.bytes + growthBound(op as Operation, valueBytes))
    }), { numRuns: 500 })
  })

  it('puts a replacement one byte over the limit past it, measured in UTF-8', () => {
    fc.assert(fc.property(object, content => {
      const bytes = Buffer.byteLength(JSON.stringify(content))
      expect(prepared({ op: 'update', value: content }, bytes).change.bytes).toBe(bytes)
      let refused: unknown
      try { prepared({ op: 'update', value: content }, bytes - 1) } catch (error) { refused = error }
      expect(isContentdError(refused) && refused.code).toBe('CONTENT_TOO_LARGE')
    }), { numRuns: 200 })
  })
})
