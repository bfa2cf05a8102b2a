// The re-check of live streams (server/services/access-recheck.ts, docs/design.md §13b), on a
// real SQLite store whose calls are counted: what ends access behind the services' back (as
// another process does: the CLI, another node while Redis is down) is announced as the
// access event it would have sent, and the cost of a round is one look-up per distinct
// credential and member, however many streams share them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLogger } from '../../server/logger.js'
import type { AccessEvent } from '../../server/services/access-events.js'
import { AccessRecheck, type LiveGrant } from '../../server/services/access-recheck.js'
import type { Identity } from '../../server/services/identity.js'
import type { Services } from '../../server/services/index.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import type { Store } from '../../server/store/types.js'
import type { ManualClock } from '../support/clock.js'
import { openSqliteStore } from '../support/stores.js'
import { openTempServices, SESSION_TTL_MS, type TempServices } from '../support/temp-services.js'

const PASSWORD = 'correct horse battery staple'
const STREAMS_PER_GRANT = 500

let temp: TempServices
let store: SqliteStore
let clock: ManualClock
let services: Services
let events: AccessEvent[]
let calls: Map<string, number>

beforeEach(async () => {
  temp = await openTempServices('contentd-recheck-')
  ;({ store, clock, services, events } = temp)
  calls = new Map()
})
afterEach(async () => { await temp.close() })

/** The store, every method call counted by name. */
function counted (target: Store): Store {
  return new Proxy(target, {
    get (object, name, receiver) {
      const value: unknown = Reflect.get(object, name, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        calls.set(String(name), (calls.get(String(name)) ?? 0) + 1)
        return (value as (...a: unknown[]) => unknown).apply(object, args)
      }
    }
  })
}

async function identityOf (secret: string): Promise<Identity> {
  const result = await services.identities.resolve(secret)
  if (!result.identity) throw new Error(`not signed in: ${result.failure}`)
  return result.identity
}

/** An owner with a project, a key of theirs, and a member with a session: many streams each. */
async function scene () {
  const owner = await identityOf((await services.accounts.signup('alice', PASSWORD)).token)
  const project = await services.projects.create(owner.user.id, owner.user.username, 'demo', undefined)
  const key = await identityOf((await services.keys.create(owner, { name: 'k', permission: 'read' })).key)
  const bob = await identityOf((await services.accounts.signup('bob', PASSWORD)).token)
  await services.projects.setMember(project, '@bob', 'viewer')
  const grants: LiveGrant[] = []
  for (let i = 0; i < STREAMS_PER_GRANT; i++) {
    grants.push({ identity: key, projectId: project.id }, { identity: bob, projectId: project.id }, { identity: bob, projectId: null })
  }
  const recheck = new AccessRecheck(counted(store), services.accessEvents, clock.now, createLogger('silent'))
  recheck.addSource({ grants: () => grants })
  return { owner, project, key, bob, recheck }
}

describe('AccessRecheck', () => {
  it('a round costs one look-up per distinct credential and member, however many streams share them', async () => {
    const { recheck } = await scene()
    await recheck.checkOnce()
    expect(events).toEqual([])
    expect(Object.fromEntries(calls)).toEqual({ findApiKeyByHash: 1, findSession: 1, findProjectsByIds: 1, findMemberRole: 1 })
  })

  it('a key deleted, a session gone and a member removed behind the services\' back are announced', async () => {
    const { project, key, bob, recheck } = await scene()
    // Straight in the store, as another process would: no access event here.
    expect(await store.deleteApiKey(key.user.id, key.key!.id)).toBe(true)
    await store.deleteSession(bob.credentialHash)
    expect(await store.removeMember(project.id, bob.user.id)).toBe(true)
    expect(events).toEqual([])
    await recheck.checkOnce()
    expect(events).toEqual([
      { kind: 'credential-revoked', credentialHash: key.credentialHash },
      { kind: 'credential-revoked', credentialHash: bob.credentialHash },
      { kind: 'member-removed', projectId: project.id, userId: bob.user.id }
    ])
  })

  it('a deleted project and an expired session are announced', async () => {
    const { project, bob, recheck } = await scene()
    await store.deleteProject(project.id)
    clock.advance(SESSION_TTL_MS)
    await recheck.checkOnce()
    expect(events).toEqual([
      { kind: 'credential-revoked', credentialHash: bob.credentialHash },
      { kind: 'project-deleted', projectId: project.id }
    ])
  })

  it('a store that fails announces nothing (the next round tries again)', async () => {
    const { key, recheck } = await scene()
    await store.deleteApiKey(key.user.id, key.key!.id)
    await store.close()
    await recheck.checkOnce()
    expect(events).toEqual([])
    temp.store = store = openSqliteStore({ dataDir: temp.dataDir, contentLimitBytes: 1 << 20, cacheBytes: 1 << 20 })
  })
})

describe('AccessRecheck and app users (docs/design.md §17)', () => {
  it('leaves an app user\'s stream alone (no credential or membership behind it) until its project is deleted', async () => {
    const owner = await identityOf((await services.accounts.signup('alice', PASSWORD)).token)
    const project = await services.projects.create(owner.user.id, owner.user.username, 'demo', undefined)
    const id = `app:${project.id}:u1`
    const app: Identity = { user: { id, username: id, passwordHash: '', createdAt: '' }, session: null, key: null, credentialHash: id, app: { sub: 'u1' } }
    const recheck = new AccessRecheck(counted(store), services.accessEvents, clock.now, createLogger('silent'))
    recheck.addSource({ grants: () => [{ identity: app, projectId: project.id }] })
    await recheck.checkOnce()
    expect(events).toEqual([])
    expect(calls.get('findSession') ?? 0).toBe(0)
    expect(calls.get('findMemberRole') ?? 0).toBe(0)
    await store.deleteProject(project.id)
    await recheck.checkOnce()
    expect(events).toEqual([{ kind: 'project-deleted', projectId: project.id }])
  })
})
