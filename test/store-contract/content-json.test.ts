// readContentJson (issue 30): the current content as JSON text only, for a caller that parses
// its own copy (the live-query hub). Every store answers it as readContent does; the embedded
// store lends no live document with it, so its next write does not copy the cached one.
import { describe, expect, it } from 'vitest'
import type { ContentLog } from '../../server/store/sqlite/content-log.js'
import type { Store } from '../../server/store/types.js'
import { storeFactories } from '../support/stores.js'
import { contractStore } from './contract.js'

describe.each(storeFactories)('readContentJson: $name', (factory) => {
  let store: Store
  const suite = contractStore(factory, opened => { store = opened })

  it('is the current version and content as readContent gives them, as JSON text', async () => {
    const project = await suite.newProject()
    await suite.apply(project, { op: 'set', path: ['board'], value: { a: { score: 3 }, b: { score: 'x' } } })
    await suite.apply(project, { op: 'increment', path: ['board', 'a', 'score'], value: 2 })
    const snapshot = await store.readContent(project.id)
    const text = await store.readContentJson(project.id)
    expect(text?.version).toBe(snapshot?.version)
    expect(JSON.parse(text?.json ?? 'null')).toEqual(snapshot?.content)
    expect(JSON.parse(text?.json ?? 'null')).toEqual({ board: { a: { score: 5 }, b: { score: 'x' } } })
  })

  it('is null for a project that does not exist', async () => {
    expect(await store.readContentJson('no-such-project')).toBeNull()
  })
})

describe('readContentJson on the embedded store lends nothing', () => {
  const sqlite = storeFactories.find(factory => factory.name.toLowerCase().includes('sqlite'))
  if (!sqlite) throw new Error('the contract suite has no SQLite store')
  let store: Store
  const suite = contractStore(sqlite, opened => { store = opened })

  it('the next write changes the cached document in place after readContentJson, and copies it after readContent', async () => {
    const project = await suite.newProject()
    await suite.apply(project, { op: 'set', path: ['n'], value: 1 })
    const log = (store as unknown as { content: ContentLog }).content
    await store.readContentJson(project.id)
    // Not lent: a batch would edit the cached document itself (the same object each time).
    expect(log.editable(project.id)?.doc).toBe(log.editable(project.id)?.doc)
    const lent = await store.readContent(project.id)
    // Lent: a batch edits a copy, so the reader's snapshot stays as it was.
    expect(log.editable(project.id)?.doc).not.toBe(lent?.content)
    expect(log.editable(project.id)?.doc).toEqual(lent?.content)
  })
})
