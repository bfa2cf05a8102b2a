// Live queries over each store (docs/design.md §16): the query hub reads the content through
// the store interface and follows its commits, so the order is computed by contentd itself and
// is the same on every store. Checked here against each store of the contract suite (SQLite
// always; MongoDB when MONGODB_URI is set): after every write, each live result equals the
// query evaluated from scratch on the content the store returns.
import { describe, expect, it } from 'vitest'
import type { ChangeEntry } from '../../shared/events.js'
import type { QueryItem } from '../../shared/query.js'
import { evaluateQuery, parseQuery } from '../../shared/query.js'
import { QueryHub, valueAt } from '../../server/queries/query-hub.js'
import type { Store } from '../../server/store/types.js'
import { storeFactories } from '../support/stores.js'
import { contractStore } from './contract.js'

const QUERIES = [
  { orderBy: 'score', direction: 'desc', limit: 3 },
  { orderBy: 'key', limit: 4 },
  { orderBy: 'value', limit: 5 },
  { orderBy: 'score', limit: 10, startAt: 2, endAt: 'm' }
]

describe.each(storeFactories)('live queries over the store: $name', (factory) => {
  let store: Store
  const suite = contractStore(factory, opened => { store = opened })

  it('every live result equals the query over the stored content after each write', async () => {
    const project = await suite.newProject()
    const listeners = new Set<(change: ChangeEntry) => void>()
    store.onCommit(committed => { if (committed.project.id === project.id) for (const l of listeners) l(committed.entry) })
    await suite.apply(project, { op: 'set', path: ['board'], value: { a: { score: 3 }, '10': { score: 'x' }, '9': { score: null }, b: {}, c: { score: 3 } } })
    const hub = new QueryHub(store, { subscribe: (_id, l) => { listeners.add(l); return () => listeners.delete(l) } }, { resultsPerProject: 10 })
    const results = await Promise.all(QUERIES.map(async q => {
      const held: { items: QueryItem[] } = { items: [] }
      const open = await hub.open(project.id, 'board', parseQuery(q), event => {
        const before = new Map(held.items.map(i => [i.key, i.value]))
        held.items = event.items.map(i => ({ key: i.key, value: 'value' in i ? i.value as never : before.get(i.key) as never }))
      })
      held.items = open.items
      return { q, held }
    }))
    const writes = [
      { op: 'increment', path: ['board', 'a', 'score'], value: 5 },
      { op: 'set', path: ['board', 'd'], value: { score: 2.5 } },
      { op: 'set', path: ['board', 'b', 'score'], value: 'hello' },
      { op: 'delete', path: ['board', 'c'] },
      { op: 'set', path: ['board', '2'], value: 7 },
      { op: 'batch', operations: [{ op: 'set', path: ['board', 'e'], value: { score: false } }, { op: 'increment', path: ['board', 'd', 'score'], value: 1 }] }
    ] as const
    for (const write of writes) {
      await suite.apply(project, write as never)
      const { content } = await suite.content(project)
      for (const { q, held } of results) {
        expect(held.items, `${JSON.stringify(q)} after ${JSON.stringify(write)}`).toEqual(evaluateQuery(valueAt(content, ['board']), parseQuery(q)))
      }
    }
  })
})
