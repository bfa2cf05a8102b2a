// The MongoDB look-up of a remembered Idempotency-Key (docs/design.md §19), checked with
// mingo, an independent implementation of MongoDB's query language: the filter, sort and
// projection find the newest change the caller made under the key, and nothing else. Not
// evidence that MongoDB uses the partial index: that needs the contract suite with MONGODB_URI
// (test/store-contract/idempotency-log.test.ts).
import { Query } from 'mingo'
import { describe, expect, it } from 'vitest'
import { changeDocOf, entryOfChangeDoc, loggedChangeOf, loggedIdempotencyQuery, type ChangeDoc } from '../../server/store/mongodb/history.js'

const AT = '2026-11-27T03:00:00.000Z'
const actor = { type: 'user', name: '@alice' } as const

function doc (version: number, op: ChangeDoc['op'], idempotency?: ChangeDoc['idempotency'], projectId = 'p1'): ChangeDoc {
  const d = changeDocOf(projectId, version, op === 'revert' ? { op, revertedTo: 1 } : { op, path: 'n' }, op === 'revert' ? {} : 1, AT, actor)
  if (idempotency) d.idempotency = idempotency
  return d
}

const DOCS: ChangeDoc[] = [
  doc(1, 'increment'),
  doc(2, 'increment', { caller: 'user:a', key: 'k', fingerprint: 'f-old' }),
  doc(3, 'set', { caller: 'user:a', key: 'k', fingerprint: 'f-new' }),
  doc(4, 'revert', { caller: 'user:a', key: 'r', fingerprint: 'f-r' }),
  doc(5, 'increment', { caller: 'key:b', key: 'k', fingerprint: 'f-b' }),
  doc(1, 'increment', { caller: 'user:a', key: 'k', fingerprint: 'f-other-project' }, 'p2')
]

function findOne (id: { projectId: string, caller: string, key: string }) {
  const { filter, sort, projection } = loggedIdempotencyQuery(id)
  const found = new Query(filter).find<ChangeDoc>(DOCS, projection).sort(sort).limit(1).all()
  return loggedChangeOf((found[0] as ChangeDoc | undefined) ?? null)
}

describe('remembered Idempotency-Keys on MongoDB', () => {
  it('finds the newest change of the caller under the key, in its project only', () => {
    expect(findOne({ projectId: 'p1', caller: 'user:a', key: 'k' })).toEqual({ version: 3, fingerprint: 'f-new', op: 'set' })
    expect(findOne({ projectId: 'p1', caller: 'user:a', key: 'r' })).toEqual({ version: 4, fingerprint: 'f-r', op: 'revert', revertedTo: 1 })
    expect(findOne({ projectId: 'p1', caller: 'key:b', key: 'k' })).toEqual({ version: 5, fingerprint: 'f-b', op: 'increment' })
    expect(findOne({ projectId: 'p2', caller: 'user:a', key: 'k' })).toEqual({ version: 1, fingerprint: 'f-other-project', op: 'increment' })
    expect(findOne({ projectId: 'p1', caller: 'user:b', key: 'k' })).toBeNull()
    expect(findOne({ projectId: 'p1', caller: 'user:a', key: 'x' })).toBeNull()
  })

  it('the entry read back from a change document never carries the key', () => {
    const entry = entryOfChangeDoc('@alice/demo', DOCS[2] as ChangeDoc)
    expect(JSON.stringify(entry)).not.toContain('idempotency')
    expect(JSON.stringify(entry)).not.toContain('f-new')
  })
})
