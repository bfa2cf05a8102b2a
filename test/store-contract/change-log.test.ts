// The store contract, the change log (ContentStorage readChangesJson/readContentAt, the
// engine's readChanges and revert, docs/design.md §9).
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JsonObject } from '../../shared/json.js'
import { applyOperation, type Operation } from '../../shared/operations.js'
import { applyContentOperation } from '../../shared/compound.js'
import { operationOfChange, type ChangeEntry } from '../../shared/events.js'
import type { ProjectRecord, Store, StoreOperation } from '../../server/store/types.js'
import { CONTRACT_CONTENT_LIMIT, storeFactories, type StoreUnderTest } from '../support/stores.js'
import { AS_TEST, contractStore, expectCode, inc, push, set, unique, userRecord } from './contract.js'

describe.each(storeFactories)('store contract, change log: $name', (factory) => {
  let store: Store
  const { changesOf, apply, newUser, newProject, content } = contractStore(factory, opened => { store = opened })

  describe('change log (docs/design.md §9)', () => {
    const refOf = (p: ProjectRecord) => `@${p.ownerName}/${p.slug}`
    const KEY_ACTOR = { type: 'key', id: 'key_contract', name: 'deploy bot' } as const
    /** Entries as compared here: `at` checked to be a time, then set aside. */
    const withoutAt = (entries: ChangeEntry[]) => entries.map(({ at, ...rest }) => {
      expect(Number.isNaN(Date.parse(at)), `at = ${at}`).toBe(false)
      return rest
    })

    /** Every entry after `since`, paging through readChanges. */
    async function allChanges (project: ProjectRecord, since = 0, pageSize = 1000): Promise<ChangeEntry[]> {
      const all: ChangeEntry[] = []
      for (let from = since; ;) {
        const page = await store.readChanges(project, from, pageSize)
        all.push(...page.changes)
        if (!page.more) return all
        from = page.changes.at(-1)!.version
      }
    }

    /** The content after each entry, replayed over `start` with the shared applyOperation. */
    function replay (start: JsonObject, entries: ChangeEntry[]): JsonObject[] {
      const contents: JsonObject[] = []
      let doc = structuredClone(start)
      for (const entry of entries) {
        doc = applyContentOperation(doc, operationOfChange(structuredClone(entry)))
        contents.push(structuredClone(doc))
      }
      return contents
    }

    it('keeps one entry per committed version, in §9\'s shape for every operation, with its actor; none for failures', async () => {
      const project = await newProject()
      const ref = refOf(project)
      const user = AS_TEST.actor
      await apply(project, { op: 'update', value: { a: 1, list: [1] } })
      await apply(project, inc('a', 2), { actor: KEY_ACTOR })
      await apply(project, { op: 'decrement', path: ['a'], value: 1 })
      await expectCode(apply(project, inc('list')), 'NOT_A_NUMBER', 'increment an array')
      await apply(project, set('x.y', { z: null }))
      await expectCode(apply(project, push('a', 1)), 'NOT_AN_ARRAY', 'push onto a number')
      await apply(project, push('list', [2]))
      await expectCode(apply(project, inc('a'), { ifMatch: [1] }), 'PRECONDITION_FAILED', 'stale If-Match')
      await apply(project, { op: 'insert', path: ['list'], index: 0, value: 'first' }, { actor: KEY_ACTOR })
      await expectCode(apply(project, set('huge', 'x'.repeat(CONTRACT_CONTENT_LIMIT * 2))), 'CONTENT_TOO_LARGE', 'oversized')
      await apply(project, { op: 'delete', path: ['x'] })
      await apply(project, { op: 'delete', path: ['nothing', 'here'] })
      const page = await store.readChanges(project, 0, 100)
      expect(page.version).toBe(8)
      expect(page.more).toBe(false)
      expect(withoutAt(page.changes)).toEqual([
        { project: ref, version: 1, op: 'update', value: { a: 1, list: [1] }, actor: user },
        { project: ref, version: 2, op: 'increment', path: 'a', value: 2, actor: KEY_ACTOR },
        { project: ref, version: 3, op: 'decrement', path: 'a', value: 1, actor: user },
        { project: ref, version: 4, op: 'set', path: 'x.y', value: { z: null }, actor: user },
        { project: ref, version: 5, op: 'push', path: 'list', value: [2], actor: user },
        { project: ref, version: 6, op: 'insert', path: 'list', value: 'first', index: 0, actor: KEY_ACTOR },
        { project: ref, version: 7, op: 'delete', path: 'x', actor: user },
        { project: ref, version: 8, op: 'delete', path: 'nothing.here', actor: user }
      ])
      // The order of members too: JSON clients see them as §9 lists them.
      expect(Object.keys(page.changes[5]!)).toEqual(['project', 'version', 'op', 'path', 'value', 'index', 'at', 'actor'])
      // A change is in the content exactly when it is in the log.
      expect(replay({}, page.changes).at(-1)).toEqual((await content(project)).content)
      expect((await content(project)).content).toEqual({ a: 2, list: ['first', 1, [2]] })
    })

    it('replaying the log over {} gives the content of every version, and readContentAt agrees', async () => {
      const project = await newProject()
      const operations: Operation[] = [
        set('doc', { title: 'a', tags: [] }), push('doc.tags', 'x'), inc('doc.views'), push('doc.tags', { deep: [1] }),
        set('doc.tags.1.deep.1', 2), { op: 'delete', path: ['doc', 'tags', '0'] }, { op: 'update', value: { fresh: true } },
        inc('n', 0.5), { op: 'insert', path: ['arr'], index: 0, value: null }, set('fresh', false)
      ]
      // In one burst as well as one by one: the embedded store commits a burst together.
      await Promise.all(operations.slice(0, 5).map(operation => apply(project, operation)))
      for (const operation of operations.slice(5)) await apply(project, operation)
      const entries = await allChanges(project)
      expect(entries.map(e => e.version)).toEqual(operations.map((_, i) => i + 1))
      const contents = replay({}, entries)
      expect(contents.at(-1)).toEqual((await content(project)).content)
      expect(await store.readContentAt(project.id, 0)).toMatchObject({ version: 0, content: {} })
      for (let v = 1; v <= operations.length; v++) {
        const snapshot = await store.readContentAt(project.id, v)
        expect(snapshot.version).toBe(v)
        expect(snapshot.content, `content at version ${v}`).toEqual(contents[v - 1])
        if (snapshot.json !== undefined) expect(JSON.parse(snapshot.json)).toEqual(contents[v - 1])
      }
    })

    it('pages with since and limit: ascending, `more` while entries follow; since = current gives none', async () => {
      const project = await newProject()
      for (let i = 0; i < 7; i++) await apply(project, inc('n'))
      const first = await store.readChanges(project, 0, 3)
      expect(first.changes.map(c => c.version)).toEqual([1, 2, 3])
      expect(first).toMatchObject({ version: 7, more: true })
      expect((await store.readChanges(project, 3, 3)).changes.map(c => c.version)).toEqual([4, 5, 6])
      const last = await store.readChanges(project, 6, 3)
      expect(last.changes.map(c => c.version)).toEqual([7])
      expect(last.more).toBe(false)
      // Exactly `limit` left: no more after them.
      expect(await store.readChanges(project, 4, 3)).toMatchObject({ more: false })
      expect((await store.readChanges(project, 4, 3)).changes.map(c => c.version)).toEqual([5, 6, 7])
      expect(await store.readChanges(project, 7, 100)).toEqual({ version: 7, changes: [], more: false })
    })

    it('refuses since above the current version (INVALID_VERSION) and a version above it (VERSION_NOT_FOUND)', async () => {
      const project = await newProject()
      await apply(project, inc('n'))
      await expectCode(store.readChanges(project, 2, 10), 'INVALID_VERSION', 'since 2 at version 1')
      await expectCode(store.readContentAt(project.id, 2), 'VERSION_NOT_FOUND', 'version 2 at version 1')
      const fresh = await newProject()
      await expectCode(store.readChanges(fresh, 1, 10), 'INVALID_VERSION', 'since 1 at version 0')
      expect(await store.readChanges(fresh, 0, 10)).toEqual({ version: 0, changes: [], more: false })
    })

    it('gives out past contents that later operations do not change', async () => {
      const project = await newProject()
      await apply(project, set('list', [1]))
      await apply(project, set('other', 1))
      const past = await store.readContentAt(project.id, 1)
      const now = await store.readContentAt(project.id, 2)
      await apply(project, push('list', 2))
      await apply(project, { op: 'update', value: { replaced: true } })
      expect(past.content).toEqual({ list: [1] })
      expect(now.content).toEqual({ list: [1], other: 1 })
      expect(now.version).toBe(2)
    })

    it('deleting a project deletes its log: created again under its name, it starts at version 0 with an empty log', async () => {
      const owner = await newUser()
      const project = await newProject(owner)
      for (let i = 0; i < 3; i++) await apply(project, inc('n'))
      await store.deleteProject(project.id)
      await expectCode(store.readChanges(project, 0, 10), 'PROJECT_NOT_FOUND', 'changes of a deleted project')
      await expectCode(store.readContentAt(project.id, 1), 'PROJECT_NOT_FOUND', 'past content of a deleted project')
      const again = await store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: project.slug, name: 'Again', createdAt: new Date().toISOString() })
      expect(await store.readChanges(again, 0, 10)).toEqual({ version: 0, changes: [], more: false })
      await expectCode(store.readContentAt(again.id, 1), 'VERSION_NOT_FOUND', 'the old project\'s versions are gone')
      await apply(again, set('b', 1))
      expect(withoutAt((await store.readChanges(again, 0, 10)).changes)).toEqual([{ project: refOf(again), version: 1, op: 'set', path: 'b', value: 1, actor: AS_TEST.actor }])
    })

    it('500 simultaneous increments: 500 entries, one per version, in order', async () => {
      const project = await newProject()
      await Promise.all(Array.from({ length: 500 }, () => apply(project, inc('hits'))))
      const entries = await allChanges(project, 0, 120)
      expect(entries.map(e => e.version)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1))
      expect(entries.every(e => e.op === 'increment' && e.path === 'hits' && e.value === 1)).toBe(true)
      expect(replay({}, entries).at(-1)).toEqual({ hits: 500 })
    })

    describe('revert', () => {
      it('makes the content what it was, as ONE new change whose entry carries revertedTo and the content', async () => {
        const project = await newProject()
        await apply(project, set('price', 10))
        await apply(project, set('title', 'Shoe'))
        await apply(project, set('price', 0), { actor: KEY_ACTOR })
        const notified = changesOf(project.id).length
        expect(await apply(project, { op: 'revert', version: 2 })).toEqual({ version: 4 })
        expect(await content(project)).toEqual({ version: 4, content: { price: 10, title: 'Shoe' } })
        const entry = (await store.readChanges(project, 3, 10)).changes
        expect(withoutAt(entry)).toEqual([{ project: refOf(project), version: 4, op: 'revert', value: { price: 10, title: 'Shoe' }, revertedTo: 2, actor: AS_TEST.actor }])
        expect(changesOf(project.id).slice(notified).map(c => c.entry)).toEqual(entry)
        // History itself never changes: version 3 is still what it was.
        expect((await store.readContentAt(project.id, 3)).content).toEqual({ price: 0, title: 'Shoe' })
        // And the revert is history too: revert the revert.
        await apply(project, { op: 'revert', version: 3 })
        expect(await content(project)).toEqual({ version: 5, content: { price: 0, title: 'Shoe' } })
        expect(replay({}, await allChanges(project)).at(-1)).toEqual({ price: 0, title: 'Shoe' })
      })

      it('reverts to version 0 ({}) and to the current version (a new version, the same content)', async () => {
        const project = await newProject()
        await apply(project, set('a', { b: 1 }))
        expect(await apply(project, { op: 'revert', version: 1 })).toEqual({ version: 2 })
        expect(await content(project)).toEqual({ version: 2, content: { a: { b: 1 } } })
        expect(await apply(project, { op: 'revert', version: 0 })).toEqual({ version: 3 })
        expect(await content(project)).toEqual({ version: 3, content: {} })
        await apply(project, inc('a'))
        expect(await content(project)).toEqual({ version: 4, content: { a: 1 } })
      })

      it('is VERSION_NOT_FOUND above the current version, changing nothing; If-Match is checked first', async () => {
        const project = await newProject()
        await apply(project, set('a', 1))
        await expectCode(apply(project, { op: 'revert', version: 2 }), 'VERSION_NOT_FOUND', 'revert to the future')
        await expectCode(apply(project, { op: 'revert', version: 2 }, { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale If-Match + future version')
        await expectCode(apply(project, { op: 'revert', version: 0 }, { ifMatch: [0] }), 'PRECONDITION_FAILED', 'stale If-Match')
        expect(await apply(project, { op: 'revert', version: 0 }, { ifMatch: [1] })).toEqual({ version: 2 })
        expect((await store.readChanges(project, 0, 10)).changes.map(c => c.op)).toEqual(['set', 'revert'])
      })

      it('sees the changes committed together with it', async () => {
        const project = await newProject()
        await apply(project, set('n', 0))
        // Sent in one tick: the embedded store commits them in one transaction.
        const [a, b, reverted] = await Promise.all([apply(project, inc('n')), apply(project, inc('n')), apply(project, { op: 'revert', version: 2 })])
        expect([a.version, b.version, reverted.version]).toEqual([2, 3, 4])
        expect(await content(project)).toEqual({ version: 4, content: { n: 1 } })
      })
    })

    describe('retention (HISTORY_LIMIT)', () => {
      let limited: StoreUnderTest
      let keepAll: StoreUnderTest
      const LIMIT = 5
      beforeAll(async () => {
        limited = await factory.create({ historyLimit: LIMIT })
        keepAll = await factory.create({ historyLimit: 0 })
      })
      afterAll(async () => {
        await limited?.cleanup()
        await keepAll?.cleanup()
      })

      async function projectIn (target: Store): Promise<ProjectRecord> {
        const user = userRecord()
        await target.createUser(user)
        return target.createProject({ id: randomUUID(), ownerId: user.id, ownerName: user.username, slug: unique('p'), name: 'Retention', createdAt: new Date().toISOString() })
      }

      /** Checks the boundary at `version`: exactly the newest LIMIT entries are answerable. */
      async function expectBoundary (target: Store, project: ProjectRecord, version: number, contents: JsonObject[]): Promise<void> {
        const oldest = version - LIMIT
        const page = await target.readChanges(project, oldest, 100)
        expect(page.changes.map(c => c.version), `changes after ${oldest} at version ${version}`).toEqual(Array.from({ length: LIMIT }, (_, i) => oldest + 1 + i))
        await expectCode(target.readChanges(project, oldest - 1, 100), 'HISTORY_EXPIRED', `since ${oldest - 1} at version ${version}`)
        expect((await target.readContentAt(project.id, oldest)).content, `content at ${oldest}`).toEqual(contents[oldest])
        await expectCode(target.readContentAt(project.id, oldest - 1), 'HISTORY_EXPIRED', `version ${oldest - 1} at version ${version}`)
      }

      it('answers exactly the newest HISTORY_LIMIT entries; older since, version and revert are HISTORY_EXPIRED', async () => {
        const target = limited.store
        const project = await projectIn(target)
        const contents: JsonObject[] = [{}]
        for (let i = 1; i <= 12; i++) {
          await target.applyOperation(project, set(`k${i % 4}`, i), AS_TEST)
          contents.push({ ...contents[i - 1], [`k${i % 4}`]: i })
        }
        await expectBoundary(target, project, 12, contents)
        await expectCode(target.applyOperation(project, { op: 'revert', version: 6 }, AS_TEST), 'HISTORY_EXPIRED', 'revert beyond retention')
        expect(await target.applyOperation(project, { op: 'revert', version: 7 }, AS_TEST)).toEqual({ version: 13 })
        expect((await target.readContent(project.id))?.content).toEqual(contents[7])
      })

      it('stays exact through many checkpoints and prunings', { timeout: 120_000 }, async () => {
        const target = limited.store
        const project = await projectIn(target)
        const contents: JsonObject[] = [{}]
        let model: JsonObject = {}
        // Bursts of mixed writes (whole-content updates now and then), checked after each.
        for (let burst = 0; burst < 12; burst++) {
          const operations: Operation[] = Array.from({ length: 60 }, (_, i): Operation => {
            const n = burst * 60 + i
            if (n % 97 === 0) return { op: 'update', value: { restart: n, list: [] } }
            return n % 3 === 0 ? push('list', { n, text: 'x'.repeat(n % 50) }) : inc('count', n)
          })
          for (const operation of operations) {
            model = applyOperation(structuredClone(model), structuredClone(operation))
            contents.push(model)
          }
          await Promise.all(operations.map(operation => target.applyOperation(project, operation, AS_TEST)))
          await expectBoundary(target, project, contents.length - 1, contents)
        }
        expect((await target.readContent(project.id))?.content).toEqual(model)
      })

      it('HISTORY_LIMIT=0 keeps every entry', async () => {
        const target = keepAll.store
        const project = await projectIn(target)
        for (let i = 0; i < 30; i++) await target.applyOperation(project, inc('n'), AS_TEST)
        expect((await target.readChanges(project, 0, 100)).changes).toHaveLength(30)
        expect((await target.readContentAt(project.id, 0)).content).toEqual({})
        expect((await target.readContentAt(project.id, 1)).content).toEqual({ n: 1 })
      })
    })

    describe('pages bounded in bytes (CHANGES_PAGE_BYTES, docs/design.md §13b)', () => {
      const PAGE_BYTES = 4096
      let bounded: StoreUnderTest
      beforeAll(async () => { bounded = await factory.create({ changesPageBytes: PAGE_BYTES }) })
      afterAll(async () => { await bounded?.cleanup() })

      /** An entry's size as a reader sends it: the UTF-8 length of its JSON. */
      const bytesOf = (entry: ChangeEntry) => Buffer.byteLength(JSON.stringify(entry))

      it('carries at most CHANGES_PAGE_BYTES of entries, an over-size one alone, `more` while any remain; continuing gets each once', async () => {
        const target = bounded.store
        const user = userRecord()
        await target.createUser(user)
        const project = await target.createProject({ id: randomUUID(), ownerId: user.id, ownerName: user.username, slug: unique('p'), name: 'Pages', createdAt: new Date().toISOString() })
        const write = (operation: StoreOperation) => target.applyOperation(project, operation, AS_TEST)
        // Entries of about 1.5 KiB (multi-byte characters: bytes, not characters, count),
        // small increments, a document over the page size and reverts carrying it whole.
        await write({ op: 'update', value: { text: 'é'.repeat(700) } })
        for (let i = 0; i < 3; i++) await write(inc('n'))
        await write(set('text', 'ü'.repeat(700)))
        await write(set('text', 'x'.repeat(1500)))
        await write({ op: 'update', value: { big: 'y'.repeat(PAGE_BYTES + 500) } })
        await write(inc('n'))
        await write({ op: 'revert', version: 7 })
        await write({ op: 'revert', version: 7 })
        for (let i = 0; i < 5; i++) await write(inc('n'))
        const total = 15
        const oneByOne: ChangeEntry[] = []
        for (let since = 0; since < total; since++) {
          const single = await target.readChanges(project, since, 1)
          expect(single.more, `since ${since}, limit 1`).toBe(since + 1 < total)
          oneByOne.push(...single.changes)
        }
        expect(oneByOne.map(e => e.version)).toEqual(Array.from({ length: total }, (_, i) => i + 1))
        expect(bytesOf(oneByOne[6]!)).toBeGreaterThan(PAGE_BYTES)

        const pages: ChangeEntry[][] = []
        for (let since = 0; ;) {
          const page = await target.readChanges(project, since, 1000)
          expect(page.changes.length, `page after ${since}`).toBeGreaterThan(0)
          const bytes = page.changes.reduce((sum, entry) => sum + bytesOf(entry), 0)
          if (page.changes.length > 1) expect(bytes, `page after ${since}`).toBeLessThanOrEqual(PAGE_BYTES)
          pages.push(page.changes)
          since = page.changes.at(-1)!.version
          expect(page.more, `more after ${since}`).toBe(since < total)
          // Full as the budget allows: the next entry would not have fit.
          if (page.more) expect(bytes + bytesOf(oneByOne[since]!), `page after ${since} cut early`).toBeGreaterThan(PAGE_BYTES)
          if (!page.more) break
        }
        expect(pages.flat()).toEqual(oneByOne)
        // The over-size entry and each revert that carries that document came alone.
        for (const version of [7, 9, 10]) expect(pages.find(page => page.some(e => e.version === version))!.map(e => e.version)).toEqual([version])
        // `limit` still bounds a page of small entries.
        expect(await target.readChanges(project, 10, 2)).toMatchObject({ more: true, changes: [{ version: 11 }, { version: 12 }] })
        expect((await target.readChanges(project, 10, 1000)).changes.map(e => e.version)).toEqual([11, 12, 13, 14, 15])
        // readChangesJson: the same pages, each entry's JSON unparsed, without `project`, and its size as sent.
        for (const since of [0, 6, 10]) {
          const [json, parsed] = [await target.readChangesJson(project, since, 1000), await target.readChanges(project, since, 1000)]
          expect([json.version, json.project, json.more]).toEqual([parsed.version, `@${user.username}/${project.slug}`, parsed.more])
          expect(json.entries.map(entry => entry.version)).toEqual(parsed.changes.map(entry => entry.version))
          json.entries.forEach((entry, i) => {
            const { project: _, ...stored } = parsed.changes[i]!
            expect(entry.stored.toString()).toBe(JSON.stringify(stored))
            expect(entry.bytes).toBe(bytesOf(parsed.changes[i]!))
          })
        }
      })
    })
  })

})
