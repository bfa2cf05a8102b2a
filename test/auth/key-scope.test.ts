// The narrowed-key decision (docs/design.md §12), as a pure function: which accesses a key
// with `paths` and/or `ops` may make. The HTTP and Socket.IO scenarios check that the routes ask it.
import { describe, expect, it } from 'vitest'
import { keyScopeDenial, operationAccess, requireOperationScope, type ContentAccess } from '../../server/auth/rights.js'
import type { StoreOperation } from '../../server/store/types.js'
import { parseBatch } from '../../shared/batch-request.js'
import { OperationError } from '../../shared/errors.js'
import { parsePatch } from '../../shared/json-patch.js'
import type { ApiKeyRecord } from '../../server/store/types.js'

function key (paths: string[] | null, ops: ApiKeyRecord['ops']): ApiKeyRecord {
  return { id: 'k', userId: 'u', name: 'k', prefix: 'cdk_x', keyHash: 'h', permission: 'write', projectIds: null, paths, ops, expiresAt: null, createdAt: '2026-01-01T00:00:00.000Z' }
}

const write = (op: 'increment' | 'set', path: string): ContentAccess => ({ kind: 'write', op, path: path.split('.') })
const read = (path: string): ContentAccess => ({ kind: 'read', path: path.split('.') })
const WHOLE: ContentAccess = { kind: 'whole' }

describe('keyScopeDenial', () => {
  it('lets sessions (no key) and keys that are not narrowed do anything', () => {
    for (const access of [WHOLE, write('set', 'a'), read('a')]) {
      expect(keyScopeDenial(null, access)).toBeNull()
      expect(keyScopeDenial(key(null, null), access)).toBeNull()
    }
  })

  const votes = key(['votes', 'data.public'], ['increment'])

  it.each<[string, ContentAccess, boolean]>([
    ['its op at its path', write('increment', 'votes'), true],
    ['its op below its path', write('increment', 'votes.red.today'), true],
    ['its op below its second path', write('increment', 'data.public.likes'), true],
    ['another op at its path', write('set', 'votes.red'), false],
    ['its op above its path', write('increment', 'data'), false],
    ['its op beside its path', write('increment', 'data.private'), false],
    ['a path sharing only a prefix of characters', write('increment', 'votesX'), false],
    ['a read below its path', read('votes.red'), true],
    ['a read above its path', read('data'), false],
    ['the whole content', WHOLE, false]
  ])('a key narrowed to votes and data.public, increment only: %s', (_what, access, allowed) => {
    expect(keyScopeDenial(votes, access)).toBe(allowed ? null : 'KEY_SCOPE_DENIED')
  })

  it('a key narrowed only to ops writes anywhere with them, but never the whole content', () => {
    const setOnly = key(null, ['set'])
    expect(keyScopeDenial(setOnly, write('set', 'anything.at.all'))).toBeNull()
    expect(keyScopeDenial(setOnly, read('anything'))).toBeNull()
    expect(keyScopeDenial(setOnly, write('increment', 'a'))).toBe('KEY_SCOPE_DENIED')
    expect(keyScopeDenial(setOnly, WHOLE)).toBe('KEY_SCOPE_DENIED')
  })

  it('operationAccess: update is the whole content, a path operation writes at its path', () => {
    expect(operationAccess({ op: 'update', value: {} })).toEqual(WHOLE)
    expect(operationAccess({ op: 'push', path: ['a', 'b'], value: 1 })).toEqual({ kind: 'write', op: 'push', path: ['a', 'b'] })
  })
})

describe('requireOperationScope', () => {
  const batchOf = (...operations: unknown[]): StoreOperation => ({ op: 'batch', operations: parseBatch({ operations }, 100) })
  const votes = key(['votes'], ['increment'])
  /** null when allowed; the code and, for a batch, the index of the refused operation. */
  function outcome (k: ApiKeyRecord | null, operation: StoreOperation): { code: string, operation: number | undefined } | null {
    try {
      requireOperationScope(k, operation)
      return null
    } catch (error) {
      const e = error as OperationError
      return { code: e.code, operation: e instanceof OperationError ? e.operation : undefined }
    }
  }

  it('allows a batch whose every operation is allowed, a test counting as a read at its path', () => {
    expect(outcome(votes, batchOf({ op: 'test', path: 'votes.a', value: 1 }, { op: 'increment', path: 'votes.a' }))).toBeNull()
  })

  it('refuses a batch at its first refused operation, whatever refuses it', () => {
    expect(outcome(votes, batchOf({ op: 'increment', path: 'votes.a' }, { op: 'increment', path: 'stock' }, { op: 'set', path: 'votes.a', value: 1 }))).toEqual({ code: 'KEY_SCOPE_DENIED', operation: 1 })
    expect(outcome(votes, batchOf({ op: 'increment', path: 'votes.a' }, { op: 'set', path: 'votes.a', value: 1 }))).toEqual({ code: 'KEY_SCOPE_DENIED', operation: 1 })
    expect(outcome(votes, batchOf({ op: 'test', path: 'stock', value: 1 }))).toEqual({ code: 'KEY_SCOPE_DENIED', operation: 0 })
  })

  it('refuses patch, revert and update for any narrowed key, and allows everything for others', () => {
    const whole: StoreOperation[] = [{ op: 'patch', operations: parsePatch([{ op: 'replace', path: '/votes/a', value: 1 }], 100) }, { op: 'revert', version: 0 }, { op: 'update', value: {} }]
    for (const operation of whole) {
      expect(outcome(votes, operation), operation.op).toEqual({ code: 'KEY_SCOPE_DENIED', operation: undefined })
      expect(outcome(key(null, ['set']), operation), operation.op).toEqual({ code: 'KEY_SCOPE_DENIED', operation: undefined })
      expect(outcome(key(null, null), operation), operation.op).toBeNull()
      expect(outcome(null, operation), operation.op).toBeNull()
    }
    expect(outcome(votes, { op: 'increment', path: ['votes', 'a'], value: 1 })).toBeNull()
    expect(outcome(votes, { op: 'increment', path: ['stock'], value: 1 })).toEqual({ code: 'KEY_SCOPE_DENIED', operation: undefined })
  })
})
