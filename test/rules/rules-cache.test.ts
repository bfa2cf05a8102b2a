// [rules, issue 31] What a process keeps of a project's rules and trust setting
// (server/services/rules-cache.ts), without a server: one load per project until it is
// forgotten or MAX_AGE_MS old, at most `kept` projects, failed loads not kept, a load racing
// with a change never kept after it, and a late read that finds a change no message told of.
import { describe, expect, it } from 'vitest'
import { MAX_AGE_MS, RulesCache, type ProjectTrust } from '../../server/services/rules-cache.js'

function counting (revision = () => 'r1') {
  const loads: string[] = []
  const load = async (projectId: string): Promise<ProjectTrust<string>> => {
    loads.push(projectId)
    return { auth: null, rules: `${projectId}@${revision()}`, revision: revision() }
  }
  return { loads, load }
}

describe('RulesCache', () => {
  it('loads a project once, and again after forget', async () => {
    let now = 0
    let revision = 'r1'
    const { loads, load } = counting(() => revision)
    const cache = new RulesCache(load, () => now)
    expect((await cache.get('p')).rules).toBe('p@r1')
    expect((await cache.get('p')).rules).toBe('p@r1')
    expect(loads).toEqual(['p'])
    revision = 'r2'
    expect((await cache.get('p')).rules).toBe('p@r1')
    cache.forget('p')
    expect((await cache.get('p')).rules).toBe('p@r2')
    expect(loads).toEqual(['p', 'p'])
    now += 1
    expect((await cache.get('p')).rules).toBe('p@r2')
    expect(loads.length).toBe(2)
  })

  it('reads again once an entry is MAX_AGE_MS old (a lost rules-changed message)', async () => {
    let now = 1000
    const { loads, load } = counting()
    const cache = new RulesCache(load, () => now)
    await cache.get('p')
    now += MAX_AGE_MS - 1
    await cache.get('p')
    expect(loads.length).toBe(1)
    now += 1
    await cache.get('p')
    expect(loads.length).toBe(2)
  })

  it('keeps at most `kept` projects, dropping the least recently used', async () => {
    const { loads, load } = counting()
    const cache = new RulesCache(load, () => 0, 2)
    await cache.get('a')
    await cache.get('b')
    await cache.get('a')
    await cache.get('c')
    expect(cache.size).toBe(2)
    await cache.get('a')
    expect(loads).toEqual(['a', 'b', 'c'])
    await cache.get('b')
    expect(loads).toEqual(['a', 'b', 'c', 'b'])
  })

  it('does not keep a failed load', async () => {
    let fail = true
    const loads: number[] = []
    const cache = new RulesCache(async () => {
      loads.push(1)
      if (fail) throw new Error('store down')
      return { auth: null, rules: 'ok', revision: 'r1' }
    }, () => 0)
    await expect(cache.get('p')).rejects.toThrow('store down')
    fail = false
    expect((await cache.get('p')).rules).toBe('ok')
    expect(loads.length).toBe(2)
  })

  it('never keeps a load that started before a change', async () => {
    let release: (value: ProjectTrust<string>) => void = () => {}
    let loads = 0
    const cache = new RulesCache(() => {
      loads++
      if (loads === 1) return new Promise<ProjectTrust<string>>(resolve => { release = resolve })
      return Promise.resolve({ auth: null, rules: 'new', revision: 'r2' })
    }, () => 0)
    const early = cache.get('p')
    cache.forget('p')
    release({ auth: null, rules: 'old', revision: 'r1' })
    expect((await early).rules).toBe('old')
    expect((await cache.get('p')).rules).toBe('new')
    expect((await cache.get('p')).rules).toBe('new')
    expect(loads).toBe(2)
  })

  it('tells of a change found by a read after MAX_AGE_MS (its message lost), and of none when forgotten or unchanged', async () => {
    let now = 0
    let revision = 'r1'
    const changed: string[] = []
    const { load } = counting(() => revision)
    const cache = new RulesCache(load, () => now, 10, MAX_AGE_MS, projectId => changed.push(projectId))
    await cache.get('p')
    await cache.get('q')
    now += MAX_AGE_MS
    cache.refresh(['p'])
    await cache.get('p')
    await new Promise(resolve => setImmediate(resolve))
    expect(changed).toEqual([])
    revision = 'r2'
    now += MAX_AGE_MS
    // refresh reads again only what is old: p and q both are.
    cache.refresh(['p', 'q', 'unknown'])
    expect((await cache.get('p')).rules).toBe('p@r2')
    await new Promise(resolve => setImmediate(resolve))
    expect(changed.sort()).toEqual(['p', 'q'])
    expect(cache.size).toBe(2)
    // A change the message told of: forgotten, so its next read tells nothing more.
    revision = 'r3'
    cache.forget('p')
    await cache.get('p')
    await new Promise(resolve => setImmediate(resolve))
    expect(changed.sort()).toEqual(['p', 'q'])
  })
})
