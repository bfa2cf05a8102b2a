// The store contract, remembered Idempotency-Keys (docs/design.md §19): a change made under a
// key keeps the caller, the key and the request's fingerprint beside its log entry, found
// again by findLoggedIdempotency after the key's record is gone, never shown in the entry.
import { describe, expect, it } from 'vitest'
import type { Store } from '../../server/store/types.js'
import { storeFactories } from '../support/stores.js'
import { contractStore, inc, unique } from './contract.js'

describe.each(storeFactories)('store contract, remembered Idempotency-Keys: $name', (factory) => {
  let store: Store
  const { apply, newProject, changesOf } = contractStore(factory, opened => { store = opened })

  it('finds the newest change a caller made under a key; not another caller, project or key', async () => {
    const project = await newProject()
    const other = await newProject()
    const key = unique('idem')
    const logged = { caller: 'user:alice', key, fingerprint: 'fp-1' }
    await apply(project, inc('n'))
    await apply(project, inc('n'), { idempotency: logged })
    await apply(project, { op: 'revert', version: 1 }, { idempotency: { ...logged, key: key + '-revert', fingerprint: 'fp-2' } })

    expect(await store.findLoggedIdempotency({ projectId: project.id, caller: 'user:alice', key })).toEqual({ version: 2, fingerprint: 'fp-1', op: 'increment' })
    expect(await store.findLoggedIdempotency({ projectId: project.id, caller: 'user:alice', key: key + '-revert' })).toEqual({ version: 3, fingerprint: 'fp-2', op: 'revert', revertedTo: 1 })
    expect(await store.findLoggedIdempotency({ projectId: project.id, caller: 'key:alice', key })).toBeNull()
    expect(await store.findLoggedIdempotency({ projectId: other.id, caller: 'user:alice', key })).toBeNull()
    expect(await store.findLoggedIdempotency({ projectId: project.id, caller: 'user:alice', key: key + 'x' })).toBeNull()
  })

  it('keeps the key out of the entry readers get', async () => {
    const project = await newProject()
    const key = unique('secret-key')
    await apply(project, inc('n'), { idempotency: { caller: 'user:alice', key, fingerprint: 'fp' } })
    const page = await store.readChangesJson(project, 0, 10)
    const text = JSON.stringify(page) + JSON.stringify((await store.readChanges(project, 0, 10)).changes) + JSON.stringify(changesOf(project.id))
    expect(text).not.toContain(key)
    expect(text).not.toContain('idempotency')
    const exported: string[] = []
    for await (const record of store.exportRecords()) if ('projectId' in record && record.projectId === project.id) exported.push(JSON.stringify(record))
    expect(exported.join('\n')).toContain('"op":"increment"')
    expect(exported.join('\n')).not.toContain(key)
  })
})
