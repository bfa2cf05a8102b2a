// The narrowed-key decision (docs/design.md §12), as a pure function: which accesses a key
// with `paths` and/or `ops` may make. The HTTP and Socket.IO scenarios check that the routes ask it.
import { describe, expect, it } from 'vitest'
import { keyScopeDenial, operationAccess, type ContentAccess } from '../../server/auth/rights.js'
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
