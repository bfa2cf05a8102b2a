// The console's reading of one path's history (console/content/path-history.ts) against a
// fake of the server's `changes?path=`: forward pages after `since`, HISTORY_EXPIRED before
// the kept log. The real server answers it in test/browser/console-paths.test.ts.
import { describe, expect, it } from 'vitest'
import { newestPathChanges, pathChangesAfter, watchingKeys, type PathChangesReader } from '../../console/content/path-history.js'
import type { CreatedApiKey, PathChange, PathChangesPage } from '../../shared/client/index.js'
import { ContentdError } from '../../shared/client/index.js'

const change = (version: number): PathChange => ({ project: '@a/p', version, op: 'increment', path: 'votes', value: 1, at: '2026-01-01T00:00:00.000Z', actor: { type: 'user', name: '@a' } })

/** A log of `length` versions where `touching` touch the path; versions before `firstKept` are gone. */
function fakeLog (length: number, touching: (version: number) => boolean, firstKept = 1) {
  const reads: Array<{ since: number, limit: number }> = []
  const read: PathChangesReader = async function * ({ since, limit }) {
    let from = since
    for (;;) {
      reads.push({ since: from, limit })
      if (from < firstKept - 1) throw new ContentdError(410, 'HISTORY_EXPIRED', 'History expired')
      const found: PathChange[] = []
      for (let v = from + 1; v <= length && found.length < limit; v++) if (touching(v)) found.push(change(v))
      const last = found.at(-1)
      const more = last !== undefined && Array.from({ length: length - last.version }, (_, i) => last.version + 1 + i).some(touching)
      const page: PathChangesPage = { version: length, changes: found, more }
      yield page
      if (!more || last === undefined) return
      from = last.version
    }
  }
  return { read, reads }
}

const versions = (changes: PathChange[]) => changes.map(c => c.version)

describe('a path\'s history, newest first', () => {
  it('reads the newest changes before a version, contiguous up to it', async () => {
    const log = fakeLog(1000, v => v % 3 === 0)
    const part = await newestPathChanges(log.read, 1000, 50)
    expect(part.changes.length).toBeGreaterThanOrEqual(50)
    expect(part.expired).toBe(false)
    // Every touching version from `from` to 1000, and nothing else.
    const expected = Array.from({ length: 1000 - part.from + 1 }, (_, i) => part.from + i).filter(v => v % 3 === 0)
    expect(versions(part.changes)).toEqual(expected)
    expect(versions(part.changes).at(-1)).toBe(999)
  })

  it('finds a rarely written path in a long log with a few reads, not a scan', async () => {
    const log = fakeLog(100_000, v => v === 7 || v === 90_000)
    const part = await newestPathChanges(log.read, 100_000, 10)
    expect(versions(part.changes)).toEqual([7, 90_000])
    expect(part.from).toBe(1)
    expect(log.reads.length).toBeLessThanOrEqual(10)
  })

  it('stops at a version: reads nothing after it', async () => {
    const log = fakeLog(200, () => true)
    const part = await newestPathChanges(log.read, 120, 5)
    expect(versions(part.changes).at(-1)).toBe(120)
    expect(versions(part.changes)).toEqual(Array.from({ length: 120 - part.from + 1 }, (_, i) => part.from + i))
  })

  it('narrows a window holding too many changes instead of reading them all', async () => {
    const log = fakeLog(5000, v => v > 4000 || v < 3000)
    // 1,000 versions without the path, then every version: the growing window meets a dense stretch.
    const part = await newestPathChanges(log.read, 5000, 1100)
    expect(part.changes.length).toBeGreaterThanOrEqual(1100)
    expect(versions(part.changes)).toEqual(Array.from({ length: 5000 - part.from + 1 }, (_, i) => part.from + i).filter(v => v > 4000 || v < 3000))
    expect(log.reads.every(r => r.limit <= 100)).toBe(true)
  })

  it('says when the server no longer keeps older changes', async () => {
    const log = fakeLog(1000, v => v % 100 === 0, 901)
    const part = await newestPathChanges(log.read, 1000, 50)
    expect(part.expired).toBe(true)
    expect(versions(part.changes)).toEqual([1000])
    expect(part.from).toBe(901)
  })

  it('reads what came after a version, and the version it is current at', async () => {
    const log = fakeLog(500, v => v % 2 === 0)
    const after = await pathChangesAfter(log.read, 250)
    expect(versions(after.changes)).toEqual(Array.from({ length: 125 }, (_, i) => 252 + 2 * i))
    expect(after.version).toBe(500)
  })
})

describe('the keys that may watch a path', () => {
  const key = (id: string, extra: Partial<CreatedApiKey>): CreatedApiKey => ({ id, name: id, prefix: 'cdk_x', permission: 'read', projects: null, paths: null, ops: null, expiresAt: null, createdAt: '2026-01-01T00:00:00.000Z', key: `cdk_${id}`, ...extra })
  const keys = [
    key('all', {}),
    key('votes', { paths: ['votes'] }),
    key('deep', { paths: ['votes.up'] }),
    key('other', { paths: ['title', 'votesx'] }),
    key('elsewhere', { projects: ['@a/other'] }),
    key('expired', { expiresAt: '2020-01-01T00:00:00.000Z' }),
    key('ops', { ops: ['increment'] })
  ]
  it('keeps those reaching the project, live, and narrowed to the path or above it', () => {
    expect(watchingKeys(keys, '@a/p', 'votes').map(k => k.id)).toEqual(['all', 'votes', 'ops'])
    expect(watchingKeys(keys, '@a/p', 'votes.up.count').map(k => k.id)).toEqual(['all', 'votes', 'deep', 'ops'])
    expect(watchingKeys(keys, '@a/p', 'title').map(k => k.id)).toEqual(['all', 'other', 'ops'])
  })
})
