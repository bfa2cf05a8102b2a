// The path index's rows by unit (server/store/sqlite/path-index.ts), without SQLite: units
// written as the writer writes them (flushed whole, or cut by a read inside the transaction),
// searched as the statement searches them (keyed in a range, ascending, limited), answer
// exactly what one row per version would: the smallest indexed versions after `since`.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeVersions, encodeVersions, pathCandidates, PathIndexUnit, PendingPathIndex, UNIT_VERSIONS, type PathIndexRow } from '../../server/store/sqlite/path-index.js'

interface Row extends PathIndexRow { path: string }

/** Writes `changes` (each: the paths its version records) in units cut at `cuts`, as flushAppends does. */
function indexed (changes: string[][], cuts: Set<number>): Row[] {
  const rows: Row[] = []
  let unit = new PathIndexUnit()
  const flush = (): void => {
    const out: Array<string | number | null> = []
    unit.rowsFor('p', out)
    for (let i = 0; i < out.length; i += 4) rows.push({ path: out[i + 1] as string, version: out[i + 2] as number, versions: out[i + 3] as string | null })
    unit = new PathIndexUnit()
  }
  changes.forEach((paths, i) => {
    unit.add(i + 1, paths)
    if (cuts.has(i + 1)) flush()
  })
  flush()
  return rows
}

/** The statement's search: rows of the looked-up paths keyed in (since, until], ascending, at most `limit` (-1: all). */
function reader (rows: Row[], paths: Set<string>) {
  const reads: number[] = []
  const read = (since: number, until: number, limit: number): PathIndexRow[] => {
    const found = rows.filter(row => paths.has(row.path) && row.version > since && row.version <= until).sort((a, b) => a.version - b.version)
    const page = limit < 0 ? found : found.slice(0, limit)
    reads.push(page.length)
    return page
  }
  return { read, reads }
}

const PATHS = ['a', 'a.b', 'c', 'd']
const changesArb = fc.array(fc.subarray(PATHS), { minLength: 0, maxLength: 60 })

describe('the path index by unit', () => {
  it('encodes a unit\'s versions below its key, NULL for the key alone', () => {
    expect(encodeVersions(7, [7])).toBeNull()
    expect(encodeVersions(9, [5, 6, 9])).toBe('4,3,0')
    expect(encodeVersions(9, [5])).toBe('4')
    expect(decodeVersions({ version: 9, versions: '4,3,0' })).toEqual([5, 6, 9])
    expect(decodeVersions({ version: 7, versions: null })).toEqual([7])
  })

  it('writes one row per path per unit, keyed by the unit\'s last version', () => {
    const rows = indexed([['a'], ['c'], ['a', 'c'], ['a'], [], ['d']], new Set([4]))
    expect(rows).toEqual([
      { path: 'a', version: 4, versions: '3,1,0' },
      { path: 'c', version: 4, versions: '2,1' },
      { path: 'd', version: 6, versions: null }
    ])
  })

  it('closes a unit at UNIT_VERSIONS versions, per project: no row lists more, and a search still finds every version', () => {
    const pending = new PendingPathIndex()
    for (let version = 1; version <= 150; version++) {
      pending.add('p', version, version % 3 === 0 ? ['a', 'b'] : ['a'])
      pending.add('q', version, ['a'])
    }
    const params = pending.take()
    expect(pending.take()).toEqual([])
    const rows: Row[] = []
    for (let i = 0; i < params.length; i += 4) if (params[i] === 'p') rows.push({ path: params[i + 1] as string, version: params[i + 2] as number, versions: params[i + 3] as string | null })
    expect(Math.max(...rows.map(row => decodeVersions(row).length))).toBe(UNIT_VERSIONS)
    expect(rows.filter(row => row.path === 'a').map(row => row.version)).toEqual([64, 128, 150])
    const { read } = reader(rows, new Set(['a']))
    expect(pathCandidates(read, 60, 10)).toEqual([61, 62, 63, 64, 65, 66, 67, 68, 69, 70])
    expect(pathCandidates(read, 0, 200)).toEqual(Array.from({ length: 150 }, (_, i) => i + 1))
  })

  it('finds the smallest versions after since, as one row per version would, however the units are cut', () => {
    fc.assert(fc.property(changesArb, fc.array(fc.nat(60)), fc.subarray(PATHS, { minLength: 1 }), fc.nat(60), fc.integer({ min: 1, max: 8 }), (changes, cuts, looked, since, want) => {
      const rows = indexed(changes, new Set(cuts))
      const paths = new Set(looked)
      const expected = changes.flatMap((recorded, i) => recorded.some(path => paths.has(path)) ? [i + 1] : []).filter(version => version > since).slice(0, want)
      const { read, reads } = reader(rows, paths)
      expect(pathCandidates(read, since, want)).toEqual(expected)
      // Bounded: a read of `want` rows at a time, and the rest of a unit cut off.
      expect(reads.length).toBeLessThanOrEqual(2 * (want + 1) + 1)
    }), { numRuns: 500 })
  })
})
