// MongoDB's path index (server/store/mongodb/path-index.ts; docs/design.md §15) without a
// server: the filter, run by mingo over `changes` documents as the store writes them, finds
// exactly the candidates SQLite's index finds (the root, ancestors, the path, descendants,
// and documents of before the index), and no others.
import { Query } from 'mingo'
import { describe, expect, it } from 'vitest'
import { indexPathsOf, changeTouches } from '../../shared/live-path.js'
import { dotSegments } from '../../shared/path.js'
import { pathFilter, TOUCHED_PATHS_FIELD } from '../../server/store/mongodb/path-index.js'

const changes = [
  { op: 'increment', path: 'votes.up' },
  { op: 'set', path: 'votesX' },
  { op: 'update' },
  { op: 'delete', path: 'list.2' },
  { op: 'set', path: 'a' },
  { op: 'batch', operations: [{ op: 'set', path: 'b.c' }, { op: 'test', path: 'votes' }] },
  { op: 'patch', operations: [{ op: 'move', from: '/votes/up', path: '/z' }] },
  { op: 'set', path: 'votes' }
].map((change, i) => ({ projectId: 'p1', version: i + 1, ...change, [TOUCHED_PATHS_FIELD]: indexPathsOf(change as never) }))
// Written before the index: no field, always a candidate.
const old = { projectId: 'p1', version: 0, op: 'set', path: 'far.away' }
// Another project's change at the path: never.
const elsewhere = { projectId: 'p2', version: 3, op: 'set', path: 'votes', [TOUCHED_PATHS_FIELD]: ['votes'] }
const docs = [old, ...changes, elsewhere]

const found = (path: string, since = -1, version = 100) =>
  new Query(pathFilter('p1', path, since, version)).find(docs).all().map(doc => (doc as { version: number }).version).sort((a, b) => a - b)

describe('the MongoDB path filter, run by mingo', () => {
  it.each(['votes', 'votes.up', 'list.3', 'list.1', 'a.b', 'b', 'votes.up.deep', 'z'])('%s: every change touching it, and what the index cannot rule out', path => {
    const result = found(path)
    const touching = changes.filter(change => changeTouches(change as never, dotSegments(path))).map(change => change.version)
    for (const version of touching) expect(result).toContain(version)
    expect(result).toContain(0)
    expect(result.filter(version => version !== 0 && !touching.includes(version)), 'false candidates: only shifts').toEqual(path === 'list.1' ? [4] : [])
  })

  it('a range on the path, not a prefix of the text: votesX is not below votes', () => {
    expect(found('votes')).not.toContain(2)
  })

  it('only after since and up to the version read', () => {
    expect(found('votes', 3, 7)).toEqual([7])
  })
})
