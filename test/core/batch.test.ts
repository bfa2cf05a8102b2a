// The batch and patch engine (docs/design.md §10), case by case: request validation with the
// failing operation's index, all or nothing, `test`, and RFC 6902's rules that differ from
// the dot-path operations. The public RFC 6902 suite runs in json-patch-suite.test.ts, random
// batches in test/fuzz/batch.fuzz.test.ts.
import { describe, expect, it } from 'vitest'
import { applyBatch } from '../../shared/batch.js'
import { parseBatch } from '../../shared/batch-request.js'
import { applyContentOperation } from '../../shared/compound.js'
import { ContentdError, OperationError } from '../../shared/errors.js'
import type { JsonObject } from '../../shared/json.js'
import { applyPatch, parsePatch, pointerSegments } from '../../shared/json-patch.js'

function failure (run: () => unknown): { code: string, status: number, operation?: number } {
  try { run() } catch (e) {
    if (!(e instanceof ContentdError)) throw e
    const body = e.toBody()
    return { code: body.code, status: e.status, ...(body.operation !== undefined ? { operation: body.operation } : {}) }
  }
  throw new Error('expected a failure')
}

const batch = (doc: JsonObject, operations: unknown[]) => applyBatch(doc, parseBatch({ operations }, 100))
const patch = (doc: JsonObject, operations: unknown) => applyPatch(doc, parsePatch(operations, 100))

describe('batch', () => {
  it('applies in order to one copy and leaves the original alone', () => {
    const doc = { todo: ['a', 'b'], done: [], n: 1 } as JsonObject
    const result = batch(doc, [
      { op: 'test', path: 'todo.0', value: 'a' },
      { op: 'delete', path: 'todo.0' },
      { op: 'push', path: 'done', value: 'a' },
      { op: 'increment', path: 'n' },
      { op: 'set', path: 'x.y', value: { z: [1] } },
      { op: 'push', path: 'x.y.z', value: 2 },
      { op: 'insert', path: 'x.y.z', index: 0, value: 0 }
    ])
    expect(result).toEqual({ todo: ['b'], done: ['a'], n: 2, x: { y: { z: [0, 1, 2] } } })
    expect(doc).toEqual({ todo: ['a', 'b'], done: [], n: 1 })
  })

  it('never changes a value an earlier operation of the batch wrote (the log keeps what ran)', () => {
    const operations = parseBatch({ operations: [{ op: 'set', path: 'a', value: { list: [1] } }, { op: 'push', path: 'a.list', value: 2 }] }, 100)
    const result = applyBatch({}, operations)
    expect(result).toEqual({ a: { list: [1, 2] } })
    expect(operations[0]).toEqual({ op: 'set', path: ['a'], value: { list: [1] } })
  })

  it('fails as a whole with the first failing operation\'s code and index', () => {
    const doc = { n: 1, s: 'x' } as JsonObject
    expect(failure(() => batch(doc, [{ op: 'increment', path: 'n' }, { op: 'increment', path: 's' }, { op: 'test', path: 'n', value: 0 }])))
      .toEqual({ code: 'NOT_A_NUMBER', status: 400, operation: 1 })
    expect(failure(() => batch(doc, [{ op: 'increment', path: 'n' }, { op: 'test', path: 'n', value: 1 }])))
      .toEqual({ code: 'TEST_FAILED', status: 409, operation: 1 })
    expect(failure(() => batch(doc, [{ op: 'test', path: 'missing', value: null }]))).toEqual({ code: 'TEST_FAILED', status: 409, operation: 0 })
    expect(doc).toEqual({ n: 1, s: 'x' })
  })

  it('test compares deeply, ignoring member order', () => {
    expect(batch({ a: { x: [1, { y: 2 }], z: null } }, [{ op: 'test', path: 'a', value: { z: null, x: [1, { y: 2 }] } }])).toEqual({ a: { x: [1, { y: 2 }], z: null } })
    expect(failure(() => batch({ a: [1, 2] }, [{ op: 'test', path: 'a', value: [2, 1] }])).code).toBe('TEST_FAILED')
    expect(failure(() => batch({ a: 1 }, [{ op: 'test', path: 'a', value: '1' }])).code).toBe('TEST_FAILED')
  })

  it.each([
    ['an empty batch', { operations: [] }, { code: 'INVALID_BODY', status: 400 }],
    ['101 operations', { operations: Array(101).fill({ op: 'increment', path: 'n' }) }, { code: 'INVALID_BODY', status: 400 }],
    ['operations not an array', { operations: {} }, { code: 'INVALID_BODY', status: 400 }],
    ['a body that is an array', [], { code: 'INVALID_BODY', status: 400 }],
    ['an unknown member of the body', { operations: [{ op: 'increment', path: 'n' }], atomic: true }, { code: 'INVALID_BODY', status: 400 }],
    ['an unknown op', { operations: [{ op: 'increment', path: 'n' }, { op: 'multiply', path: 'n' }] }, { code: 'INVALID_BODY', status: 400, operation: 1 }],
    ['update inside a batch', { operations: [{ op: 'update', value: {} }] }, { code: 'INVALID_BODY', status: 400, operation: 0 }],
    ['test without value', { operations: [{ op: 'test', path: 'n' }] }, { code: 'INVALID_VALUE', status: 400, operation: 0 }],
    ['an unknown member of an operation', { operations: [{ op: 'set', path: 'n', value: 1, vlaue: 2 }] }, { code: 'INVALID_BODY', status: 400, operation: 0 }],
    ['an operation that is not an object', { operations: [{ op: 'set', path: 'n', value: 1 }, 'x'] }, { code: 'INVALID_BODY', status: 400, operation: 1 }],
    ['an invalid path', { operations: [{ op: 'set', path: 'a..b', value: 1 }] }, { code: 'INVALID_PATH', status: 400, operation: 0 }],
    ['a value with a "$" key', { operations: [{ op: 'set', path: 'a', value: { $set: 1 } }] }, { code: 'INVALID_VALUE', status: 400, operation: 0 }]
  ])('refuses %s as a request', (_name, body, expected) => {
    expect(failure(() => parseBatch(body, 100))).toEqual(expected)
  })
})

describe('JSON Patch (RFC 6902)', () => {
  it('add replaces an existing member, inserts into arrays, appends at "-"', () => {
    expect(patch({ a: 1, l: [1, 3] }, [{ op: 'add', path: '/a', value: 2 }, { op: 'add', path: '/l/1', value: 2 }, { op: 'add', path: '/l/-', value: 4 }]))
      .toEqual({ a: 2, l: [1, 2, 3, 4] })
  })

  it('does not create missing parents (unlike set)', () => {
    expect(failure(() => patch({}, [{ op: 'add', path: '/a/b', value: 1 }]))).toEqual({ code: 'INVALID_PATCH', status: 400, operation: 0 })
  })

  it('refuses to remove or replace what is missing, and to move into its own child', () => {
    expect(failure(() => patch({ a: 1 }, [{ op: 'remove', path: '/a' }, { op: 'remove', path: '/a' }]))).toEqual({ code: 'INVALID_PATCH', status: 400, operation: 1 })
    expect(failure(() => patch({}, [{ op: 'replace', path: '/a', value: 1 }])).code).toBe('INVALID_PATCH')
    expect(failure(() => patch({ a: { b: {} } }, [{ op: 'move', from: '/a', path: '/a/b/c' }])).code).toBe('INVALID_PATCH')
  })

  it('moves and copies; a copy is a value of its own', () => {
    const result = patch({ a: { b: [1] } }, [{ op: 'copy', from: '/a', path: '/c' }, { op: 'add', path: '/c/b/-', value: 2 }, { op: 'move', from: '/a/b', path: '/d' }])
    expect(result).toEqual({ a: {}, c: { b: [1, 2] }, d: [1] })
  })

  it('unescapes ~1 and ~0, and applies §2\'s key rules to pointer segments', () => {
    expect(pointerSegments('/a~1b/c~0d/~01')).toEqual(['a/b', 'c~d', '~1'])
    expect(failure(() => parsePatch([{ op: 'add', path: '/a~2', value: 1 }], 100))).toEqual({ code: 'INVALID_PATCH', status: 400, operation: 0 })
    expect(failure(() => parsePatch([{ op: 'add', path: '/a.b', value: 1 }], 100)).code).toBe('INVALID_PATH')
    expect(failure(() => parsePatch([{ op: 'add', path: '/__proto__/x', value: 1 }], 100)).code).toBe('INVALID_PATH')
    expect(failure(() => parsePatch([{ op: 'add', path: '/$where', value: 1 }], 100)).code).toBe('INVALID_PATH')
    expect(failure(() => parsePatch([{ op: 'add', path: 'a', value: 1 }], 100)).code).toBe('INVALID_PATCH')
  })

  it.each([
    ['not an array', { op: 'add', path: '/a', value: 1 }, { code: 'INVALID_PATCH', status: 400 }],
    ['empty', [], { code: 'INVALID_PATCH', status: 400 }],
    ['the root pointer', [{ op: 'replace', path: '', value: {} }], { code: 'INVALID_PATCH', status: 400, operation: 0 }],
    ['an unknown op', [{ op: 'spam', path: '/a' }], { code: 'INVALID_PATCH', status: 400, operation: 0 }],
    ['add without value', [{ op: 'add', path: '/a' }], { code: 'INVALID_PATCH', status: 400, operation: 0 }],
    ['copy without from', [{ op: 'copy', path: '/a' }], { code: 'INVALID_PATCH', status: 400, operation: 0 }],
    ['101 operations', Array(101).fill({ op: 'remove', path: '/a' }), { code: 'INVALID_PATCH', status: 400 }]
  ])('refuses a patch that is %s', (_name, body, expected) => {
    expect(failure(() => parsePatch(body, 100))).toEqual(expected)
  })

  it('ignores unknown members of an operation and leaves them out of the operations as applied', () => {
    expect(parsePatch([{ op: 'add', path: '/a', value: 1, note: 'x', from: '/b' }], 100)).toEqual([{ op: 'add', path: '/a', value: 1 }])
  })

  it('fails a test with TEST_FAILED (409) and the operation\'s index', () => {
    expect(failure(() => patch({ price: 10 }, [{ op: 'test', path: '/price', value: 9 }, { op: 'remove', path: '/price' }])))
      .toEqual({ code: 'TEST_FAILED', status: 409, operation: 0 })
  })
})

describe('compound operations', () => {
  it('go through applyContentOperation', () => {
    const operations = parseBatch({ operations: [{ op: 'set', path: 'a', value: 'xyz' }, { op: 'increment', path: 'n' }] }, 100)
    const result = applyContentOperation({}, { op: 'batch', operations })
    expect(result).toEqual({ a: 'xyz', n: 1 })
    expect(new OperationError(new ContentdError('TEST_FAILED'), 3).toBody()).toEqual({ message: expect.stringContaining('operation 3'), code: 'TEST_FAILED', operation: 3 })
  })
})
