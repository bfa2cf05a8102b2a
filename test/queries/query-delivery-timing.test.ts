// Issue 30's after-commit measure (contentd_query_event_delay_seconds, docs/operations.md):
// the commit's moment is stamped once per change where the store tells its listeners
// (CommitEmitter), carried by the change feed to its listeners, and the query hub times each
// `query` event handed to a subscriber from it. A change of another node (no stamp) is not timed.
import { describe, expect, it } from 'vitest'
import type { ChangeEntry } from '../../shared/events.js'
import { parseQuery } from '../../shared/query.js'
import { ChangeFeed } from '../../server/feed/change-feed.js'
import { QueryHub } from '../../server/queries/query-hub.js'
import { AccessEvents } from '../../server/services/access-events.js'
import { CommitEmitter } from '../../server/store/commit-emitter.js'
import type { CommittedChange } from '../../server/store/types.js'
import { textSource } from './text-source.js'

const actor = { type: 'user' as const, name: '@a' }
const increment = (version: number, key: string): ChangeEntry => ({ project: '@a/p', version, op: 'increment', path: `board.${key}.s`, value: 1, at: '2026-01-01T00:00:00.000Z', actor })
const nextTurn = () => new Promise<void>(resolve => setImmediate(resolve))

/** A feed fed by a CommitEmitter (as the stores' engine tells it of commits), and a hub on it. */
function setup () {
  const emitter = new CommitEmitter()
  const feed = new ChangeFeed({ onCommit: listener => { emitter.on(listener) } }, new AccessEvents())
  const hub = new QueryHub(textSource({ readContent: async () => ({ version: 1, content: { board: { a: { s: 5 }, b: { s: 1 } } } }) }), feed, { resultsPerProject: 10 })
  const observed: number[] = []
  hub.timeDeliveries(seconds => { observed.push(seconds) })
  const commit = (entry: ChangeEntry): CommittedChange => {
    const change: CommittedChange = { project: { id: 'p' } as never, entry }
    emitter.emit(change)
    return change
  }
  return { feed, hub, observed, commit }
}

describe('query event delay after commit', () => {
  it('CommitEmitter stamps each change once with the moment its listeners are told, keeping a stamp already there', () => {
    const emitter = new CommitEmitter()
    const heard: Array<number | undefined> = []
    emitter.on(change => heard.push(change.committedAt))
    emitter.on(change => heard.push(change.committedAt))
    const before = performance.now()
    emitter.emit({ project: { id: 'p' } as never, entry: increment(2, 'a') })
    expect(heard).toHaveLength(2)
    expect(heard[0]).toBeGreaterThanOrEqual(before)
    expect(heard[1]).toBe(heard[0])
    emitter.emit({ project: { id: 'p' } as never, entry: increment(3, 'a'), committedAt: 42 })
    expect(heard.slice(2)).toEqual([42, 42])
  })

  it('the feed hands a local change\'s commit time to its listeners, and none with another node\'s change', async () => {
    const { feed, commit } = setup()
    const heard: Array<number | undefined> = []
    feed.subscribe('p', (_change, committedAt) => heard.push(committedAt))
    const local = commit(increment(2, 'a'))
    await nextTurn()
    feed.publishChange('p', increment(3, 'a'))
    expect(heard).toEqual([local.committedAt, undefined])
    expect(typeof local.committedAt).toBe('number')
  })

  it('times every query event handed to a subscriber from its commit, once per subscriber, and never a change that alters no result', async () => {
    const { hub, observed, commit } = setup()
    const events: number[] = []
    const query = parseQuery({ orderBy: 's', direction: 'desc', limit: 1 })
    await hub.open('p', 'board', query, e => events.push(e.version))
    await hub.open('p', 'board', query, e => events.push(e.version))
    // b gains a point: still behind a, the top 1 is unchanged, nothing is sent or timed.
    commit(increment(2, 'b'))
    await nextTurn()
    expect(events).toEqual([])
    expect(observed).toEqual([])
    // a gains one: both subscribers hear it, each timed.
    const change = commit(increment(3, 'a'))
    const committedAt = change.committedAt as number
    await nextTurn()
    const elapsed = (performance.now() - committedAt) / 1000
    expect(events).toEqual([3, 3])
    expect(observed).toHaveLength(2)
    for (const seconds of observed) {
      expect(seconds).toBeGreaterThanOrEqual(0)
      expect(seconds).toBeLessThanOrEqual(elapsed)
    }
  })

  it('does not time the events of another node\'s change (its commit was not seen by this clock)', async () => {
    const { feed, hub, observed } = setup()
    const events: number[] = []
    await hub.open('p', 'board', parseQuery({ orderBy: 's', direction: 'desc', limit: 1 }), e => events.push(e.version))
    feed.publishChange('p', increment(2, 'b'))
    feed.publishChange('p', increment(3, 'b'))
    feed.publishChange('p', increment(4, 'b'))
    feed.publishChange('p', increment(5, 'b'))
    feed.publishChange('p', increment(6, 'b'))
    // b ties a at 5 (desc: b first by key), then leads with 6: two events sent, none timed.
    expect(events).toEqual([5, 6])
    expect(observed).toEqual([])
  })
})
