// The services as createServices builds them, on a real SQLite store with a clock the test
// moves: every change of access is announced on the one AccessEvents they share (that is
// what ends live connections), keys are revoked by id with the owner checked, the CLI's
// createUser opens no session, and expiry follows the services' clock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { hashSecret } from '../../server/auth/tokens.js'
import type { AccessEvent } from '../../server/services/access-events.js'
import type { Identity } from '../../server/services/identity.js'
import type { Services } from '../../server/services/index.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import { ContentdError } from '../../shared/errors.js'
import type { ManualClock } from '../support/clock.js'
import { openTempServices, SESSION_TTL_MS, type TempServices } from '../support/temp-services.js'

const PASSWORD = 'correct horse battery staple'

let temp: TempServices
let store: SqliteStore
let clock: ManualClock
let services: Services
let events: AccessEvent[]

beforeEach(async () => {
  temp = await openTempServices('contentd-services-')
  ;({ store, clock, services, events } = temp)
})
afterEach(async () => { await temp.close() })

async function identityOf (secret: string): Promise<Identity> {
  const result = await services.identities.resolve(secret)
  if (!result.identity) throw new Error(`not signed in: ${result.failure}`)
  return result.identity
}

async function codeOf (promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => null, (e: unknown) => e)
  return error instanceof ContentdError ? error.code : `no ContentdError (${String(error)})`
}

describe('createServices', () => {
  it('revoking a key announces its hash; another user revoking it is 404 and it keeps working', async () => {
    const alice = await identityOf((await services.accounts.signup('alice', PASSWORD)).token)
    const bob = await identityOf((await services.accounts.signup('bob', PASSWORD)).token)
    const created = await services.keys.create(alice, { name: 'w', permission: 'write' })

    expect(await codeOf(services.keys.revoke(bob.user.id, created.id))).toBe('KEY_NOT_FOUND')
    expect(events).toEqual([])
    expect((await services.identities.resolve(created.key)).identity?.user.username).toBe('alice')

    await services.keys.revoke(alice.user.id, created.id)
    expect(events).toEqual([{ kind: 'credential-revoked', credentialHash: hashSecret(created.key) }])
    expect((await services.identities.resolve(created.key)).failure).toBe('INVALID_TOKEN')
    expect(await codeOf(services.keys.revoke(alice.user.id, created.id))).toBe('KEY_NOT_FOUND')
    expect(await codeOf(services.keys.revoke(alice.user.id, 'key_missing'))).toBe('KEY_NOT_FOUND')
  })

  it('the operator revokes any user\'s key, announced the same way', async () => {
    const alice = await identityOf((await services.accounts.signup('alice', PASSWORD)).token)
    const created = await services.keys.create(alice, { name: 'w', permission: 'read' })
    await services.keys.revokeAnyOwner(created.id)
    expect(events).toEqual([{ kind: 'credential-revoked', credentialHash: hashSecret(created.key) }])
    expect(await store.findApiKeyById(created.id)).toBeNull()
    expect(await codeOf(services.keys.revokeAnyOwner(created.id))).toBe('KEY_NOT_FOUND')
  })

  it('logout, a removed member and a deleted project are announced', async () => {
    const grant = await services.accounts.signup('alice', PASSWORD)
    const alice = await identityOf(grant.token)
    await services.accounts.signup('bob', PASSWORD)
    const project = await services.projects.create(alice.user.id, 'alice', 'demo', undefined)
    await services.projects.setMember(project, '@bob', 'viewer')
    const bob = await store.findUserByName('bob')

    await services.projects.removeMember(project, '@bob')
    await services.projects.delete(project)
    await services.accounts.logout(hashSecret(grant.token))
    expect(events).toEqual([
      { kind: 'member-removed', projectId: project.id, userId: bob?.id },
      { kind: 'project-deleted', projectId: project.id },
      { kind: 'credential-revoked', credentialHash: hashSecret(grant.token) }
    ])
  })

  it('createUser makes a user who can log in, without opening (or ending) a session', async () => {
    const user = await services.accounts.createUser('carol', PASSWORD)
    expect(user).toMatchObject({ username: 'carol', createdAt: new Date(clock.now()).toISOString() })
    expect(await store.findUserById(user.id)).toEqual(user)
    expect(events).toEqual([])
    expect(await codeOf(services.accounts.createUser('carol', 'another password'))).toBe('USERNAME_TAKEN')
    expect((await services.accounts.login('carol', PASSWORD)).username).toBe('@carol')
  })

  it('sessions and keys expire by the services\' clock', async () => {
    const grant = await services.accounts.signup('alice', PASSWORD)
    expect(Date.parse(grant.expiresAt)).toBe(clock.now() + SESSION_TTL_MS)
    const alice = await identityOf(grant.token)
    const key = await services.keys.create(alice, { name: 'brief', permission: 'read', expiresAt: new Date(clock.now() + 1000).toISOString() })

    clock.advance(999)
    expect((await services.identities.resolve(key.key)).identity).not.toBeNull()
    clock.advance(1)
    expect((await services.identities.resolve(key.key)).failure).toBe('INVALID_TOKEN')
    // "In the future" is the clock's future too.
    expect(await codeOf(services.keys.create(alice, { name: 'late', permission: 'read', expiresAt: new Date(clock.now()).toISOString() }))).toBe('INVALID_BODY')

    clock.advance(SESSION_TTL_MS - 1001)
    expect((await services.identities.resolve(grant.token)).identity).not.toBeNull()
    clock.advance(1)
    expect((await services.identities.resolve(grant.token)).failure).toBe('INVALID_TOKEN')
  })
})
