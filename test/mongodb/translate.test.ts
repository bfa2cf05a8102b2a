// Unit tests of the MongoDB translation: for each operation and edge case, the exact filter,
// update document or pipeline, and options sent to findOneAndUpdate. These check what the
// store SENDS; they are not evidence that MongoDB executes it as intended. That evidence is
// the store contract suite (test/store-contract.test.ts) run with MONGODB_URI set, which
// could not run on this machine (no MongoDB server is installable here).
import { Double } from 'mongodb'
import { describe, expect, it } from 'vitest'
import type { Operation } from '../../shared/operations.js'
import { arrayPosition, contentWithout, pathGuard } from '../../server/store/mongodb/expressions.js'
import {
  bsonGrowthBound, effectiveContentLimit, fieldPath, filterFor, MAX_CONTENT_BSON_BYTES, RETURN_NEW_VERSION,
  translateOperation, updateFor, valueBsonBytes
} from '../../server/store/mongodb/translate.js'
import { withSchemaCondition } from '../../server/store/mongodb/schema-condition.js'

const LIMIT = 100_000
const ID = 'p1'

// The one-level guard skeleton, spelled out literally: container c0 = $content.
const objectCase = { $eq: [{ $type: '$$c0' }, 'object'] }
const missingCase = { $eq: [{ $type: '$$c0' }, 'missing'] }
const oneLevel = (thenObject: unknown, thenArray: unknown, thenMissing: boolean) => ({
  $let: {
    vars: { c0: '$content' },
    in: {
      $switch: {
        branches: [
          { case: objectCase, then: thenObject },
          { case: { $isArray: '$$c0' }, then: thenArray },
          { case: missingCase, then: thenMissing }
        ],
        default: false
      }
    }
  }
})
const target = (field: string, whenMissing: boolean, check: unknown) => ({
  $let: {
    vars: { t0: { $getField: { field, input: '$$c0' } } },
    in: { $cond: [{ $eq: [{ $type: '$$t0' }, 'missing'] }, whenMissing, check] }
  }
})
const sizeGuard = (bound: number) => ({ $lte: [{ $bsonSize: '$content' }, LIMIT - bound] })

describe('MongoDB translation: increment and decrement', () => {
  it('increment a.b → $inc of a double on content.a.b plus version, guarded by number-or-missing and a finite sum', () => {
    const op: Operation = { op: 'increment', path: ['a'], value: 2 }
    const write = translateOperation(ID, op, { contentLimitBytes: LIMIT })
    const numberCheck = { $cond: [{ $isNumber: '$$t0' }, { $lte: [{ $abs: { $add: ['$$t0', new Double(2)] } }, Number.MAX_VALUE] }, false] }
    expect(write).toEqual({
      filter: {
        _id: ID,
        $expr: { $and: [oneLevel(target('a', true, numberCheck), false, true), sizeGuard(1 + 8 + 8 + 32)] }
      },
      update: { $inc: { 'content.a': new Double(2), version: 1 } },
      options: { returnDocument: 'after', projection: { _id: 0, version: 1 } }
    })
  })

  it('sends the amount as a BSON double, so integer content keeps IEEE double arithmetic (no int64)', () => {
    const update = updateFor({ op: 'increment', path: ['n'], value: 1 }) as { $inc: Record<string, unknown> }
    expect(update.$inc['content.n']).toBeInstanceOf(Double)
    expect(update.$inc.version).toBe(1)
  })

  it('decrement is $inc with the negated amount, on a nested dot path', () => {
    expect(updateFor({ op: 'decrement', path: ['x', 'y'], value: 3 })).toEqual({ $inc: { 'content.x.y': new Double(-3), version: 1 } })
  })
})

describe('MongoDB translation: set, push, insert', () => {
  it('set → $set on the field path, no target check (any type may be replaced)', () => {
    const op: Operation = { op: 'set', path: ['title'], value: { a: [1, 'x'] } }
    const write = translateOperation(ID, op, { contentLimitBytes: LIMIT })
    expect(write.update).toEqual({ $set: { 'content.title': { a: [1, 'x'] } }, $inc: { version: 1 } })
    expect(write.filter).toEqual({
      _id: ID,
      $expr: { $and: [oneLevel(true, false, true), sizeGuard(bsonGrowthBound(op))] }
    })
  })

  it('set on an array index: replace below the length, append at it, refuse past it (never null padding)', () => {
    const guard = pathGuard(['list', '2'], 'write', { whenMissing: true, check: true })
    // Level 1 container c1 = field "list" of content; its array branch compares 2 with the size.
    expect(guard).toEqual(oneLevel(
      {
        $let: {
          vars: { c1: { $getField: { field: 'list', input: '$$c0' } } },
          in: {
            $switch: {
              branches: [
                { case: { $eq: [{ $type: '$$c1' }, 'object'] }, then: true },
                { case: { $isArray: '$$c1' }, then: { $cond: [{ $lte: [2, { $size: '$$c1' }] }, true, false] } },
                { case: { $eq: [{ $type: '$$c1' }, 'missing'] }, then: true }
              ],
              default: false // "list" is a scalar: PATH_CONFLICT
            }
          }
        }
      },
      false,
      true
    ))
  })

  it('an intermediate array element is read with $arrayElemAt, never with a dotted field path', () => {
    const guard = JSON.stringify(pathGuard(['rows', '0', 'n'], 'write', { whenMissing: true, check: true }))
    expect(guard).toContain('{"$arrayElemAt":["$$c1",0]}')
    expect(guard).not.toContain('$content.')
  })

  it('a non-canonical index ("07", "-1", "x") into an array is refused by the guard in every mode', () => {
    for (const segment of ['07', 'x', '1e0']) {
      for (const mode of ['write', 'delete'] as const) {
        const guard = pathGuard([segment], mode, { whenMissing: true, check: true }) as { $let: { in: { $switch: { branches: Array<{ then: unknown }> } } } }
        expect(guard.$let.in.$switch.branches[1]?.then).toBe(false)
      }
    }
  })

  it('an index too large for any array: refused when writing, treated as missing when deleting', () => {
    expect(arrayPosition('999999999999999')).toBeNull()
    const write = pathGuard(['999999999999999'], 'write', { whenMissing: true, check: true }) as { $let: { in: { $switch: { branches: Array<{ then: unknown }> } } } }
    const del = pathGuard(['999999999999999'], 'delete', { whenMissing: true, check: true }) as { $let: { in: { $switch: { branches: Array<{ then: unknown }> } } } }
    expect(write.$let.in.$switch.branches[1]?.then).toBe(false)
    expect(del.$let.in.$switch.branches[1]?.then).toBe(true)
  })

  it('push → $push of the value as ONE element (an array value is not spread), target array or missing', () => {
    const op: Operation = { op: 'push', path: ['log'], value: [1, 2] }
    const write = translateOperation(ID, op, { contentLimitBytes: LIMIT })
    expect(write.update).toEqual({ $push: { 'content.log': [1, 2] }, $inc: { version: 1 } })
    expect(write.filter.$expr.$and[0]).toEqual(oneLevel(target('log', true, { $isArray: '$$t0' }), false, true))
  })

  it('insert → $push with $each [value] and $position; index <= length; a missing array only at index 0', () => {
    const at2: Operation = { op: 'insert', path: ['q'], value: 'v', index: 2 }
    expect(updateFor(at2)).toEqual({ $push: { 'content.q': { $each: ['v'], $position: 2 } }, $inc: { version: 1 } })
    const check = { $cond: [{ $isArray: '$$t0' }, { $lte: [2, { $size: '$$t0' }] }, false] }
    expect(filterFor(ID, at2, { contentLimitBytes: LIMIT }).$expr.$and[0]).toEqual(oneLevel(target('q', false, check), false, false))
    const at0: Operation = { op: 'insert', path: ['q'], value: 'v', index: 0 }
    const check0 = { $cond: [{ $isArray: '$$t0' }, { $lte: [0, { $size: '$$t0' }] }, false] }
    expect(filterFor(ID, at0, { contentLimitBytes: LIMIT }).$expr.$and[0]).toEqual(oneLevel(target('q', true, check0), false, true))
  })

  it('insert with an index beyond 32 bits keeps the real index in the guard (which then fails) and a representable $position', () => {
    const op: Operation = { op: 'insert', path: ['q'], value: 1, index: 2 ** 40 }
    const update = updateFor(op) as { $push: Record<string, { $position: number }> }
    expect(update.$push['content.q']?.$position).toBe(2_147_483_647)
    expect(JSON.stringify(filterFor(ID, op, { contentLimitBytes: LIMIT }))).toContain(`{"$lte":[${2 ** 40},{"$size":"$$t0"}]}`)
  })
})

describe('MongoDB translation: delete', () => {
  it('a key that cannot be an array position → $unset, guarded by the delete walk, no size guard', () => {
    const write = translateOperation(ID, { op: 'delete', path: ['name'] }, { contentLimitBytes: LIMIT })
    expect(write.update).toEqual({ $unset: { 'content.name': '' }, $inc: { version: 1 } })
    // In delete mode the target is never checked; a non-canonical key under an array is refused.
    expect(write.filter).toEqual({ _id: ID, $expr: oneLevel(true, false, true) })
  })

  it('a possible array element → ONE pipeline update that removes it and shifts the rest (not $unset\'s null)', () => {
    const write = translateOperation(ID, { op: 'delete', path: ['list', '1'] }, { contentLimitBytes: LIMIT })
    const removeSecond = {
      $concatArrays: [{ $slice: ['$$c1', 1] }, { $slice: ['$$c1', 2, { $size: '$$c1' }] }]
    }
    expect(write.update).toEqual([{
      $set: {
        content: {
          $let: {
            vars: { c0: '$content' },
            in: {
              $switch: {
                branches: [
                  {
                    case: { $eq: [{ $type: '$$c0' }, 'object'] },
                    then: {
                      $setField: {
                        field: 'list',
                        input: '$$c0',
                        value: {
                          $let: {
                            vars: { c1: { $getField: { field: 'list', input: '$$c0' } } },
                            in: {
                              $switch: {
                                branches: [
                                  { case: { $eq: [{ $type: '$$c1' }, 'object'] }, then: { $unsetField: { field: '1', input: '$$c1' } } },
                                  { case: { $isArray: '$$c1' }, then: { $cond: [{ $lt: [1, { $size: '$$c1' }] }, removeSecond, '$$c1'] } }
                                ],
                                default: '$$c1'
                              }
                            }
                          }
                        }
                      }
                    }
                  },
                  { case: { $isArray: '$$c0' }, then: '$$c0' }
                ],
                default: '$$c0'
              }
            }
          }
        },
        version: { $add: ['$version', 1] }
      }
    }])
    expect(write.options).toBe(RETURN_NEW_VERSION)
  })

  it('deleting element 0 slices from 1; an intermediate element is put back in place', () => {
    const first = JSON.stringify(contentWithout(['0']))
    expect(first).toContain('{"$slice":["$$c0",1,{"$size":"$$c0"}]}')
    const nested = JSON.stringify(contentWithout(['rows', '3', 'x']))
    // rows[3] rebuilt: elements before it, the rebuilt element, elements after it.
    expect(nested).toContain('"$concatArrays":[{"$slice":["$$c1",3]},[{"$let":{"vars":{"c2":{"$arrayElemAt":["$$c1",3]}}')
    expect(nested).toContain('{"$unsetField":{"field":"x","input":"$$c2"}}')
  })
})

describe('MongoDB translation: update, If-Match and compare-and-set', () => {
  it('update replaces the content field; its size is measured before sending, so no $expr', () => {
    const write = translateOperation(ID, { op: 'update', value: { a: 1 } }, { contentLimitBytes: LIMIT })
    expect(write).toEqual({ filter: { _id: ID }, update: { $set: { content: { a: 1 } }, $inc: { version: 1 } }, options: RETURN_NEW_VERSION })
  })

  it('If-Match versions become version $in; "*" adds nothing; an unparseable tag list matches nothing', () => {
    const op: Operation = { op: 'update', value: {} }
    expect(filterFor(ID, op, { contentLimitBytes: LIMIT, ifMatch: [3, 7] })).toEqual({ _id: ID, version: { $in: [3, 7] } })
    expect(filterFor(ID, op, { contentLimitBytes: LIMIT, ifMatch: '*' })).toEqual({ _id: ID })
    expect(filterFor(ID, op, { contentLimitBytes: LIMIT, ifMatch: [] })).toEqual({ _id: ID, version: { $in: [] } })
  })

  it('If-None-Match versions become version $nin, beside If-Match\'s $in; "*" matches nothing', () => {
    const op: Operation = { op: 'update', value: {} }
    expect(filterFor(ID, op, { contentLimitBytes: LIMIT, ifNoneMatch: [3] })).toEqual({ _id: ID, version: { $nin: [3] } })
    expect(filterFor(ID, op, { contentLimitBytes: LIMIT, ifMatch: [3, 4], ifNoneMatch: [3] })).toEqual({ _id: ID, version: { $in: [3, 4], $nin: [3] } })
    expect(filterFor(ID, op, { contentLimitBytes: LIMIT, ifMatch: '*', ifNoneMatch: '*' })).toEqual({ _id: ID, version: { $in: [] } })
  })

  it('compare-and-set pins the version and drops the size bound (the store measured exactly)', () => {
    const op: Operation = { op: 'set', path: ['a'], value: 1 }
    expect(filterFor(ID, op, { contentLimitBytes: LIMIT, expectVersion: 12, ifMatch: [4] })).toEqual({ _id: ID, version: 12, $expr: oneLevel(true, false, true) })
  })

  it('a growth bound larger than the limit leaves a guard that can never pass (the store then names the error)', () => {
    const op: Operation = { op: 'set', path: ['a'], value: 'x'.repeat(200) }
    expect(filterFor(ID, op, { contentLimitBytes: 100 }).$expr.$and[1]).toEqual({ $lte: [{ $bsonSize: '$content' }, 100 - bsonGrowthBound(op)] })
    expect(100 - bsonGrowthBound(op)).toBeLessThan(0)
  })
})

describe('MongoDB translation: sizes and paths', () => {
  it('field paths are "content." plus the segments; keys such as "constructor" are ordinary', () => {
    expect(fieldPath(['constructor', 'prototype', '0'])).toBe('content.constructor.prototype.0')
  })

  it('BSON sizes: a string "x" adds 9 bytes, an int32 7, a double 11', () => {
    expect(valueBsonBytes('x')).toBe(9)
    expect(valueBsonBytes(1)).toBe(7)
    expect(valueBsonBytes(1.5)).toBe(11)
  })

  it('growth bounds: increment of "a" is 49 bytes, set of "ab" to "x" 51, delete 0', () => {
    expect(bsonGrowthBound({ op: 'increment', path: ['a'], value: 1 })).toBe(49)
    expect(bsonGrowthBound({ op: 'set', path: ['ab'], value: 'x' })).toBe(51)
    expect(bsonGrowthBound({ op: 'delete', path: ['a'] })).toBe(0)
  })

  it('the content limit is capped below MongoDB\'s 16 MiB document limit', () => {
    expect(effectiveContentLimit(8 * 1024 * 1024)).toBe(8 * 1024 * 1024)
    expect(effectiveContentLimit(64 * 1024 * 1024)).toBe(MAX_CONTENT_BSON_BYTES)
    expect(MAX_CONTENT_BSON_BYTES).toBeLessThan(16 * 1024 * 1024)
  })
})

describe('schema condition (docs/design.md §12)', () => {
  const write = translateOperation(ID, { op: 'increment', path: ['n'], value: 1 }, { contentLimitBytes: LIMIT, expectVersion: 4 })

  it('a write checked against no schema requires the project to have none', () => {
    const conditioned = withSchemaCondition(write, null)
    expect(conditioned.filter).toEqual({ ...write.filter, schema: { $exists: false } })
    expect(conditioned.update).toBe(write.update)
    expect(conditioned.options).toBe(write.options)
  })

  it('a write checked against a schema requires that very revision', () => {
    expect(withSchemaCondition(write, 'rev-1').filter).toEqual({ ...write.filter, 'schema.revision': 'rev-1' })
  })

  it('keeps the version condition of the compare-and-set', () => {
    expect(withSchemaCondition(write, 'rev-1').filter).toMatchObject({ _id: ID, version: 4 })
  })
})
