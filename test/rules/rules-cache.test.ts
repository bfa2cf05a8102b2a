// [rules, issue 31] What a process keeps of a project's rules and trust setting
// (server/services/rules-cache.ts), without a server: one load per project until it is
// forgotten or MAX_AGE_MS old, at most `kept` projects, failed loads not kept, and a load
// racing with a change never kept after it.
import { describe, expect, it } from 'vitest'
import { MAX_AGE_MS, RulesCache, type ProjectTrust } from '../../server/services/rules-cache.js'

function counting (revision = () => 'r1') {
  const loads: string[] = []
  const load = async (projectId: string): Promise<ProjectTrust<string>> => {
    loads.push(projectId)
    return { auth: null, rules: `${projectId}@${revision()}` }
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
      return { auth: null, rules: 'ok' }
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
      return Promise.resolve({ auth: null, rules: 'new' })
    }, () => 0)
    const early = cache.get('p')
    cache.forget('p')
    release({ auth: null, rules: 'old' })
    expect((await early).rules).toBe('old')
    expect((await cache.get('p')).rules).toBe('new')
    expect((await cache.get('p')).rules).toBe('new')
    expect(loads).toBe(2)
  })
})
