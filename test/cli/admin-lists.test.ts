// The CLI's lists read the store a page at a time (server/services/pagination.ts readAll) and
// still print everything: more users and keys than fit in one page, each once, in order.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Admin } from '../../server/cli/admin.js'
import { loadConfig } from '../../server/config.js'
import { PAGE_LIMIT_MAX } from '../../server/services/pagination.js'
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import { openSqliteStore } from '../support/stores.js'

const USERS = 2 * PAGE_LIMIT_MAX + 30
const KEYS = PAGE_LIMIT_MAX + 30
let dataDir: string
let store: SqliteStore

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'contentd-admin-lists-'))
  store = openSqliteStore({ dataDir, contentLimitBytes: 1 << 20, cacheBytes: 0 })
  const createdAt = new Date().toISOString()
  // Straight into the store: argon2 for 230 users would only slow the test down.
  for (let i = 0; i < USERS; i++) await store.createUser({ id: `usr_${i}`, username: `user-${String(i).padStart(3, '0')}`, passwordHash: 'x', createdAt })
  for (let i = 0; i < KEYS; i++) {
    await store.createApiKey({ id: `key_${String(i).padStart(3, '0')}`, userId: 'usr_0', name: `k${i}`, prefix: 'cdk_abcdefgh', keyHash: `hash-${i}`, permission: 'read', projectIds: null, paths: null, ops: null, expiresAt: null, createdAt })
  }
})
afterAll(async () => {
  await store.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('contentd user list / key list', () => {
  const admin = () => new Admin(store, loadConfig({ DATA_DIR: dataDir }))

  it(`user list prints all ${USERS} users, each once, by name`, async () => {
    const names = (await admin().listUsers()).split('\n').map(line => line.split('\t')[0])
    expect(names).toEqual(Array.from({ length: USERS }, (_, i) => `@user-${String(i).padStart(3, '0')}`))
  })

  it(`key list prints all ${KEYS} keys of a user, each once, oldest first`, async () => {
    const ids = (await admin().listKeys('@user-000')).split('\n').map(line => line.split('\t')[0])
    expect(ids).toEqual(Array.from({ length: KEYS }, (_, i) => `key_${String(i).padStart(3, '0')}`))
  })
})
