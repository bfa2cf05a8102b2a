// FAULT INJECTION, not evidence that MongoDB works: the real MongoStore and the real driver
// against a scripted wire-protocol stub on loopback (test/support/mongo-wire-stub.ts). What it
// shows: the commands the store sends for a content write (the version filter, one
// transaction with its entry), that a node runs one transaction per project at a time, and
// that the failures a replica set produces reach callers as 503 STORE_UNAVAILABLE, never as a
// 500 (issue 28, A5, A6). What MongoDB itself does with those commands: docs/mongodb.md.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isContentdError } from '../../shared/errors.js'
import { MongoStore } from '../../server/store/mongodb/mongo-store.js'
import type { ProjectRecord } from '../../server/store/types.js'
import { MongoWireStub } from '../support/mongo-wire-stub.js'
import { AS_TESTER } from '../support/stores.js'

const PROJECT: ProjectRecord = { id: 'p1', ownerId: 'u1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: '2026-11-26T00:00:00.000Z', version: 0 }
const increment = { op: 'increment' as const, path: ['n'], value: 1 }
const codeOf = (error: unknown): string | null => isContentdError(error) ? error.code : String(error)

let stub: MongoWireStub
let store: MongoStore

beforeEach(async () => {
  stub = new MongoWireStub()
  const uri = await stub.start()
  stub.projects.push({ _id: PROJECT.id, ownerId: 'u1', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: PROJECT.createdAt, version: 0, content: {}, historyFloor: 0, tailCount: 0, tailBytes: 0 })
  store = new MongoStore({ uri, contentLimitBytes: 1024 * 1024, historyLimit: 0, serverSelectionTimeoutMS: 2000, operationTimeoutMS: 2000 })
  await store.init()
})

afterEach(async () => {
  await store.close()
  await stub.stop()
})

describe('the real store and driver against a scripted wire stub (fault injection)', () => {
  it('a write: read, then one transaction of the update filtered on the version read and the log entry', async () => {
    expect(await store.applyOperation(PROJECT, increment, AS_TESTER)).toEqual({ version: 1 })
    const update = stub.commands.find(c => c.name === 'findAndModify')?.body
    expect(update?.query).toEqual({ _id: 'p1', version: 0, schema: { $exists: false } })
    expect(update?.update.$inc['content.n']).toBe(1)
    expect(update?.startTransaction).toBe(true)
    expect(update?.readConcern).toEqual({ level: 'majority' })
    const commit = stub.commands.find(c => c.name === 'commitTransaction')?.body
    expect(commit?.writeConcern).toMatchObject({ w: 'majority' })
    expect(stub.projects[0]).toMatchObject({ version: 1, content: { n: 1 } })
    expect(stub.changes).toHaveLength(1)
  })

  it('concurrent writes to one project: one transaction open at a time, every write lands', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, () => store.applyOperation(PROJECT, increment, AS_TESTER)))
    expect(results.map(r => r.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
    expect(stub.maxOpenTransactions).toBe(1)
    expect(stub.projects[0]).toMatchObject({ version: 12, content: { n: 12 } })
  })

  it('a write conflict (TransientTransactionError) makes the write read again and succeed', async () => {
    stub.script('findAndModify', { ok: 0, code: 112, codeName: 'WriteConflict', errmsg: 'write conflict', errorLabels: ['TransientTransactionError'] })
    expect(await store.applyOperation(PROJECT, increment, AS_TESTER)).toEqual({ version: 1 })
    expect(stub.commands.filter(c => c.name === 'findAndModify')).toHaveLength(2)
    expect(stub.projects[0]).toMatchObject({ version: 1, content: { n: 1 } })
  })

  it.each([
    ['MaxTimeMSExpired on the update', 'findAndModify', { ok: 0, code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit' }],
    ['NoSuchTransaction at commit', 'commitTransaction', { ok: 0, code: 251, codeName: 'NoSuchTransaction', errmsg: 'no such transaction' }],
    ['ExceededTimeLimit on the read', 'find', { ok: 0, code: 262, codeName: 'ExceededTimeLimit', errmsg: 'exceeded time limit' }]
  ])('%s → 503 STORE_UNAVAILABLE, nothing changed', async (_name, command, reply) => {
    stub.script(command, reply, 5)
    expect(codeOf(await store.applyOperation(PROJECT, increment, AS_TESTER).catch((e: unknown) => e))).toBe('STORE_UNAVAILABLE')
    expect(stub.projects[0]).toMatchObject({ version: 0, content: {} })
    expect(stub.changes).toHaveLength(0)
  })

  it('a commit whose outcome stays unknown, and whose entry is not there: 503, nothing announced', async () => {
    stub.script('commitTransaction', { ok: 1, writeConcernError: { code: 64, codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed out', errInfo: { wtimeout: true } } }, 20)
    const heard: number[] = []
    store.onCommit(change => heard.push(change.entry.version))
    expect(codeOf(await store.applyOperation(PROJECT, increment, AS_TESTER).catch((e: unknown) => e))).toBe('STORE_UNAVAILABLE')
    expect(heard).toEqual([])
    // It looked for the entry before answering.
    expect(stub.commands.filter(c => c.name === 'find' && c.body.find === 'changes')).toHaveLength(1)
  })
})
