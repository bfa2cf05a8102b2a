// The store contract, the path index (ContentStorage readPathEntries; server/store/path-changes.ts
// on top of it, docs/design.md §15): every change that touches a path is found, in order, and
// the history of a path, replayed, gives the value at the path.
import { describe, expect, it } from 'vitest'
import type { Json, JsonObject } from '../../shared/json.js'
import type { ChangeEntry } from '../../shared/events.js'
import { applyPathChange, changeTouches, valueAtPath, type PathChange, type PathValue } from '../../shared/live-path.js'
import { dotSegments } from '../../shared/path.js'
import { readPathChanges } from '../../server/store/path-changes.js'
import type { ProjectRecord, Store, StoreOperation } from '../../server/store/types.js'
import { storeFactories } from '../support/stores.js'
import { contractStore, expectCode, inc, push, set } from './contract.js'

const PATHS = ['votes', 'votes.up', 'list', 'list.1', 'list.1.x', 'a.b', 'a', 'other']

describe.each(storeFactories)('store contract, path index: $name', (factory) => {
  let store: Store
  const { apply, newProject, content } = contractStore(factory, opened => { store = opened })

  /** Every entry of the log, paging through readChanges. */
  async function allChanges (project: ProjectRecord): Promise<ChangeEntry[]> {
    const all: ChangeEntry[] = []
    for (let since = 0; ;) {
      const page = await store.readChanges(project, since, 1000)
      all.push(...page.changes)
      if (!page.more) return all
      since = page.changes.at(-1)!.version
    }
  }

  /** A path's whole history, paging through readPathChanges `limit` at a time. */
  async function pathHistory (project: ProjectRecord, path: string, limit: number, pageBytes = 1_048_576): Promise<PathChange[]> {
    const all: PathChange[] = []
    for (let since = 0; ;) {
      const page = await readPathChanges(store, project, { path, since, limit, pageBytes, contentReads: 8 })
      expect(page.changes.length).toBeLessThanOrEqual(limit)
      all.push(...page.changes)
      if (!page.more) return all
      expect(page.changes.length, 'a page with more holds a change to continue from').toBeGreaterThan(0)
      since = page.changes.at(-1)!.version
    }
  }

  async function writeMixture (project: ProjectRecord): Promise<void> {
    const operations: StoreOperation[] = [
      { op: 'update', value: { votes: { up: 0, down: 0 }, list: [{ x: 1 }, { x: 2 }, { x: 3 }], a: { b: 1 }, other: 0 } },
      inc('votes.up'), inc('other'), inc('votes.down'), set('a.b', 2), set('a', { b: 3, c: 4 }), push('list', { x: 4 }),
      { op: 'delete', path: ['list', '0'] }, { op: 'insert', path: ['list'], index: 1, value: { x: 9 } }, inc('other', 5),
      { op: 'batch', operations: [{ op: 'test', path: ['other'], value: 6 }, { op: 'increment', path: ['votes', 'up'], value: 2 }, { op: 'set', path: ['hidden'], value: 'secret' }] },
      { op: 'patch', operations: [{ op: 'move', from: '/a/c', path: '/votes/moved' }] },
      { op: 'patch', operations: [{ op: 'add', path: '/list/0', value: { x: 0 } }] },
      { op: 'revert', version: 3 }, set('list', [{ x: 'new' }, { x: 'newer' }]), { op: 'delete', path: ['votes'] }, inc('votes.up')
    ]
    for (let round = 0; round < 3; round++) for (const operation of operations) await apply(project, structuredClone(operation))
  }

  it('finds every change that touches a path, in order, and no change that does not', async () => {
    const project = await newProject()
    await writeMixture(project)
    const log = await allChanges(project)
    for (const path of PATHS) {
      const expected = log.filter(entry => changeTouches(entry, dotSegments(path))).map(entry => entry.version)
      const history = await pathHistory(project, path, 1000)
      expect(history.map(change => change.version), path).toEqual(expected)
      // Paged 2 at a time, and by bytes, the same history.
      expect((await pathHistory(project, path, 2)).map(change => change.version), `${path}, 2 a page`).toEqual(expected)
      expect((await pathHistory(project, path, 1000, 1)).map(change => change.version), `${path}, 1 byte a page`).toEqual(expected)
    }
  })

  it('a path\'s history, replayed from nothing, gives the value at the path, and never a value outside it', async () => {
    const project = await newProject()
    await writeMixture(project)
    const { content: now } = await content(project)
    for (const path of PATHS) {
      let state: PathValue = { exists: false }
      for (const change of await pathHistory(project, path, 1000)) {
        expect(JSON.stringify(change), path).not.toContain('secret')
        state = applyPathChange(state, path, change)
      }
      expect(state, path).toEqual(valueAtPath(now as Json, dotSegments(path)))
    }
  })

  it('finds the same when writes are in flight together (one group commit: one index row per path, sqlite/path-index.ts)', async () => {
    const project = await newProject()
    await apply(project, { op: 'update', value: { votes: { up: 0, down: 0 }, list: [], a: { b: 0 }, other: 0 } })
    const each = (i: number): StoreOperation[] => [inc('votes.up'), inc('other'), set('a.b', i), push('list', { x: i }), inc('votes.down'), inc('votes.up', 2)]
    for (let round = 0; round < 2; round++) {
      await Promise.all(Array.from({ length: 8 }, (_, i) => each(i)).flat().map(operation => apply(project, operation)))
      await apply(project, inc('other'))
    }
    const log = await allChanges(project)
    expect(log).toHaveLength(1 + 2 * (48 + 1))
    for (const path of PATHS) {
      const expected = log.filter(entry => changeTouches(entry, dotSegments(path))).map(entry => entry.version)
      for (const limit of [1000, 1, 2, 3, 5]) expect((await pathHistory(project, path, limit)).map(change => change.version), `${path}, ${limit} a page`).toEqual(expected)
      // From every version (inside a group commit too): candidates in order, none of the
      // path's changes skipped up to the last one returned, all of them when there is no more.
      for (let since = 0; since <= log.length; since++) {
        const page = await store.readPathEntries(project, path, since, 3)
        const got = page.entries.map(entry => entry.version)
        const after = expected.filter(version => version > since)
        expect(got, `${path} after ${since}: ascending, after since`).toEqual([...new Set(got)].sort((a, b) => a - b).filter(version => version > since))
        const reached = page.more ? (got.at(-1) ?? since) : Infinity
        expect(got.filter(version => expected.includes(version)), `${path} after ${since}`).toEqual(after.filter(version => version <= reached))
        expect(got.length > 0 || after.length === 0, `${path} after ${since}: a page when there is more`).toBe(true)
      }
    }
  })

  it('reads after `since`; checks since as readChanges does', async () => {
    const project = await newProject()
    await apply(project, inc('votes'))
    await apply(project, inc('other'))
    await apply(project, inc('votes'))
    const page = await store.readPathEntries(project, 'votes', 1, 10)
    expect(page.version).toBe(3)
    expect(page.entries.map(entry => [entry.version, entry.project])).toEqual([[3, `@${project.ownerName}/${project.slug}`]])
    expect(page.more).toBe(false)
    await expectCode(store.readPathEntries(project, 'votes', 4, 10), 'INVALID_VERSION', 'since above the version')
    const limited = await store.readPathEntries(project, 'votes', 0, 1)
    expect([limited.entries.length, limited.more]).toEqual([1, true])
  })

  it('a deleted project has no path history', async () => {
    const project = await newProject()
    await apply(project, set('votes', 1 as unknown as JsonObject[string]))
    await store.deleteProject(project.id)
    await expectCode(store.readPathEntries(project, 'votes', 0, 10), 'PROJECT_NOT_FOUND', 'deleted project')
  })
})
