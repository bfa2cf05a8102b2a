// The change feed on its own, with no transport: who hears what, the one wire form per change,
// the value parsed only when read, and the relay's message format.
import { describe, expect, it } from 'vitest'
import type { ChangeEntry } from '../../shared/events.js'
import { ChangeFeed, type NodeRelay } from '../../server/feed/change-feed.js'
import { accessMessage, changeMessage, parseMessage, presenceMessage, webhooksMessage } from '../../server/feed/redis-relay.js'
import { rememberWire, wireOf } from '../../server/feed/wire.js'
import { AccessEvents } from '../../server/services/access-events.js'
import { entryOf, LazyValue } from '../../server/store/change-entry.js'
import type { CommitListener } from '../../server/store/types.js'

const actor = { type: 'user' as const, name: '@a' }
const change = (version: number, project = '@a/p'): ChangeEntry => ({ project, version, op: 'set', path: 'n', value: version, at: '2026-01-01T00:00:00.000Z', actor })

/** The feed hands local commits over in a later turn (after the writer's answer): wait for it. */
const nextTurn = () => new Promise<void>(resolve => setImmediate(resolve))

function setup () {
  const commits: CommitListener[] = []
  const store = { onCommit: (listener: CommitListener) => { commits.push(listener) } }
  const access = new AccessEvents()
  const feed = new ChangeFeed(store, access)
  const commit = (projectId: string, entry: ChangeEntry, wire?: () => string) => {
    for (const listener of commits) listener({ project: { id: projectId } as never, entry, ...(wire ? { wire } : {}) })
  }
  return { feed, access, commit }
}

describe('ChangeFeed', () => {
  it('hands a local commit to that project\'s subscribers only, as the same object, until they stop', async () => {
    const { feed, commit } = setup()
    const a: ChangeEntry[] = []
    const b: ChangeEntry[] = []
    const other: ChangeEntry[] = []
    const stopA = feed.subscribe('p1', c => a.push(c))
    feed.subscribe('p1', c => b.push(c))
    feed.subscribe('p2', c => other.push(c))
    const first = change(1)
    commit('p1', first)
    await nextTurn()
    expect(a).toEqual([first])
    expect(a[0]).toBe(b[0])
    expect(other).toEqual([])
    stopA()
    commit('p1', change(2))
    await nextTurn()
    expect(a.map(c => c.version)).toEqual([1])
    expect(b.map(c => c.version)).toEqual([1, 2])
    expect(feed.hasSubscribers('p1')).toBe(true)
  })

  it('forgets a project once its last subscriber stops', () => {
    const { feed } = setup()
    const stop = feed.subscribe('p1', () => {})
    expect(feed.hasSubscribers('p1')).toBe(true)
    stop()
    expect(feed.hasSubscribers('p1')).toBe(false)
  })

  it('hands local commits over after the committer\'s turn, in commit order, a group in one turn', async () => {
    const { feed, commit } = setup()
    const heard: string[] = []
    feed.subscribe('p1', c => heard.push(`p1 ${c.version}`))
    feed.subscribe('p2', c => heard.push(`p2 ${c.version}`))
    commit('p1', change(1))
    commit('p2', change(1, '@a/q'))
    commit('p1', change(2))
    heard.push('the writer answers')
    await nextTurn()
    expect(heard).toEqual(['the writer answers', 'p1 1', 'p2 1', 'p1 2'])
  })

  it('a throwing subscriber neither stops the others nor reaches the committer', async () => {
    const { feed, commit } = setup()
    const heard: number[] = []
    feed.subscribe('p1', () => { throw new Error('broken consumer') })
    feed.subscribe('p1', c => heard.push(c.version))
    expect(() => commit('p1', change(1))).not.toThrow()
    await nextTurn()
    expect(heard).toEqual([1])
  })

  it('hands a change nobody wants to nobody and never registers its wire form; a wanted one once', async () => {
    const { feed, commit } = setup()
    let made = 0
    const wire = (entry: ChangeEntry) => () => { made++; return JSON.stringify(entry) }
    const heard: string[] = []
    feed.subscribeAll((projectId, c) => heard.push(`any ${projectId} ${c.version}`), projectId => projectId === 'hooked')
    const unwanted = change(1)
    commit('plain', unwanted, wire(unwanted))
    await nextTurn()
    expect(heard).toEqual([])
    // Not registered: wireOf would have to serialize it itself (which a consumer never asks).
    const fallback = JSON.stringify(unwanted)
    expect(wireOf(unwanted)).toBe(fallback)
    expect(made).toBe(0)

    const wanted = change(2)
    const subscribed = change(3)
    feed.subscribe('plain', c => heard.push(`plain ${c.version}`))
    commit('hooked', wanted, wire(wanted))
    commit('plain', subscribed, wire(subscribed))
    await nextTurn()
    expect(heard).toEqual(['any hooked 2', 'plain 3'])
    expect(wireOf(wanted) + wireOf(subscribed)).toBe(JSON.stringify(wanted) + JSON.stringify(subscribed))
    expect(made, 'the registered makers').toBe(2)
  })

  it('sends local commits and access events to the relay, and takes the relay\'s to its listeners only', async () => {
    const { feed, access, commit } = setup()
    const sent: string[] = []
    const relay: NodeRelay = {
      sendChange: (projectId, c) => sent.push(`change ${projectId} ${c.version}`),
      sendAccess: e => sent.push(`access ${e.kind}`),
      sendWebhooks: projectId => sent.push(`webhooks ${projectId}`),
      sendPresence: (projectId, json) => sent.push(`presence ${projectId} ${json}`)
    }
    feed.relayTo(relay)
    const heard: string[] = []
    feed.subscribe('p1', c => heard.push(`change ${c.version}`))
    feed.subscribeAll((projectId, c) => heard.push(`any ${projectId} ${c.version}`))
    feed.onAccess(e => heard.push(`access ${e.kind}`))
    feed.onWebhooks(projectId => heard.push(`webhooks ${projectId}`))
    feed.onPresence((projectId, json) => heard.push(`presence ${projectId} ${json}`))
    commit('p1', change(1))
    await nextTurn()
    access.emit({ kind: 'project-deleted', projectId: 'p1' })
    // This node's webhooks changed: the other nodes are told, this node's listeners are not.
    feed.announceWebhooks('p1')
    // A presence event this node sent to its own sockets: only the other nodes are told.
    feed.announcePresence('p1', '{"type":"join"}')
    // From another node: heard here, not sent back out.
    feed.publishChange('p1', change(2))
    feed.publishAccess({ kind: 'member-removed', projectId: 'p1', userId: 'u' })
    feed.publishWebhooks('p2')
    feed.publishPresence('p2', '{"type":"leave"}')
    expect(sent).toEqual(['change p1 1', 'access project-deleted', 'webhooks p1', 'presence p1 {"type":"join"}'])
    expect(heard).toEqual(['any p1 1', 'change 1', 'access project-deleted', 'any p1 2', 'change 2', 'access member-removed', 'webhooks p2', 'presence p2 {"type":"leave"}'])
  })
})

describe('the wire form', () => {
  it('is made once, by the registered maker, and is JSON.stringify\'s text', () => {
    const entry = change(3)
    let made = 0
    rememberWire(entry, () => { made++; return JSON.stringify(entry) })
    expect(wireOf(entry)).toBe(JSON.stringify(entry))
    expect(wireOf(entry)).toBe(wireOf(entry))
    expect(made).toBe(1)
  })

  it('of an unregistered change is serialized, once', () => {
    const entry = change(4)
    const first = wireOf(entry)
    expect(first).toBe(JSON.stringify(entry))
    expect(wireOf(entry)).toBe(first)
  })
})

describe('a lazy entry value', () => {
  it('is parsed on first read only, sits in its place among the members, and is then plain data', () => {
    const json = '{"a":[1,2],"b":"x"}'
    const entry = entryOf('@a/p', 2, { op: 'set', path: 'k' }, new LazyValue(json), '2026-01-01T00:00:00.000Z', actor)
    expect(Object.keys(entry)).toEqual(['project', 'version', 'op', 'path', 'value', 'at', 'actor'])
    expect(Object.getOwnPropertyDescriptor(entry, 'value')?.get).toBeTypeOf('function')
    expect(entry.value).toEqual({ a: [1, 2], b: 'x' })
    expect(Object.getOwnPropertyDescriptor(entry, 'value')?.get).toBeUndefined()
    expect(entry.value).toBe(entry.value)
    expect(JSON.stringify(entry)).toBe('{"project":"@a/p","version":2,"op":"set","path":"k","value":{"a":[1,2],"b":"x"},"at":"2026-01-01T00:00:00.000Z","actor":{"type":"user","name":"@a"}}')
  })
})

describe('the relay\'s messages', () => {
  it('carry the change\'s wire text as it is, and split back exactly', () => {
    const json = JSON.stringify({ ...change(5), value: 'line one\nline two' })
    expect(json).not.toContain('\n')
    expect(parseMessage(changeMessage('node-1', 'prj_1', json))).toEqual({ node: 'node-1', kind: 'change', projectId: 'prj_1', json })
    expect(parseMessage(accessMessage('node-2', { kind: 'credential-revoked', credentialHash: 'h' }))).toEqual({ node: 'node-2', kind: 'access', projectId: '', json: '{"kind":"credential-revoked","credentialHash":"h"}' })
    expect(parseMessage(webhooksMessage('node-3', 'prj_2'))).toEqual({ node: 'node-3', kind: 'webhooks', projectId: 'prj_2', json: '' })
    expect(parseMessage(presenceMessage('node-4', 'prj_3', '{"type":"join"}'))).toEqual({ node: 'node-4', kind: 'presence', projectId: 'prj_3', json: '{"type":"join"}' })
    expect(parseMessage('not ours')).toBeNull()
  })
})
