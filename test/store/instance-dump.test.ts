// Whole-instance export and import through the Store interface (docs/design.md §18), between
// every pair of available stores (test/support/stores.ts: SQLite always, MongoDB when
// MONGODB_URI is set, so SQLite → MongoDB → SQLite runs there): the round trip is exact
// (export → import → export gives the same lines) and the imported store answers like the
// source (content, every past version, the change log, keys, members, schema, webhooks) and
// goes on working; an import into a store holding data is refused; a bad record mid-import
// leaves the target empty. The line format itself: instance-records.ts.
import { afterEach, describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { headerLine, ImportRefusedError, InstanceLineError, recordsOfLines, type InstanceRecord } from '../../server/store/instance-records.js'
import type { ProjectRecord, Store } from '../../server/store/types.js'
import { AS_TESTER, storeFactories, type StoreFactory, type StoreUnderTest } from '../support/stores.js'

const AT = '2026-01-02T03:04:05.000Z'
const opened: StoreUnderTest[] = []

afterEach(async () => {
  for (const s of opened.splice(0)) await s.cleanup()
})

async function open (factory: StoreFactory, historyLimit?: number): Promise<Store> {
  const s = await factory.create({ historyLimit })
  opened.push(s)
  return s.store
}

async function exportLines (store: Store): Promise<string[]> {
  const lines = [headerLine()]
  for await (const record of store.exportRecords()) lines.push(JSON.stringify(record))
  return lines
}

async function * linesOf (lines: string[]): AsyncIterable<string> {
  yield * lines
}

/** Two users, a narrowed key, a project with a member, a schema, a varied history and a webhook; a second, untouched project. */
async function populate (store: Store): Promise<ProjectRecord> {
  await store.createUser({ id: 'usr_alice', username: 'alice', passwordHash: '$argon2id$alice', createdAt: AT })
  await store.createUser({ id: 'usr_bob', username: 'bob', passwordHash: '$argon2id$bob', createdAt: AT })
  const project = await store.createProject({ id: 'prj_demo', ownerId: 'usr_alice', ownerName: 'alice', slug: 'demo', name: 'Démo ✓', createdAt: AT })
  await store.createProject({ id: 'prj_empty', ownerId: 'usr_bob', ownerName: 'bob', slug: 'empty', name: 'Empty', createdAt: AT })
  await store.createApiKey({
    id: 'key_1', userId: 'usr_alice', name: 'writer', prefix: 'cd_live_ab', keyHash: 'hash-of-key-1', permission: 'write',
    projectIds: ['prj_demo'], paths: ['count'], ops: ['increment'], expiresAt: null, createdAt: AT
  })
  await store.createApiKey({
    id: 'key_2', userId: 'usr_bob', name: 'reader', prefix: 'cd_live_cd', keyHash: 'hash-of-key-2', permission: 'read',
    projectIds: null, paths: null, ops: null, expiresAt: '2030-01-01T00:00:00.000Z', createdAt: AT
  })
  await store.setMember(project.id, 'usr_bob', 'editor')
  await store.putSchema(project.id, { revision: 'rev-1', schema: { type: 'object', properties: { count: { type: 'number' } } }, setBy: '@alice', setAt: AT })
  const ops = [
    { op: 'set', path: ['title'], value: 'héllo ✓' },
    { op: 'set', path: ['count'], value: 1 },
    { op: 'increment', path: ['count'], value: 2.5 },
    { op: 'set', path: ['list'], value: [] },
    { op: 'push', path: ['list'], value: { a: null } },
    { op: 'insert', path: ['list'], index: 0, value: 'first' },
    { op: 'set', path: ['nothing'], value: null },
    { op: 'update', value: { title: 'replaced', count: 10, list: [1, 2, 3] } },
    { op: 'delete', path: ['list'] },
    { op: 'batch', operations: [{ op: 'set', path: ['x'], value: 1 }, { op: 'increment', path: ['count'], value: 1 }] }
  ]
  for (const operation of ops) await store.applyOperation(project, operation as never, AS_TESTER)
  await store.applyOperation(project, { op: 'revert', version: 9 }, { actor: { type: 'key', name: 'writer', id: 'key_1' } as never })
  await store.webhooks.create({
    id: 'whk_1', projectId: project.id, url: 'https://example.com/hook', paths: ['count'], ops: ['increment'], description: 'counts',
    secretCiphertext: 'v1:ciphertext', createdAt: AT, cursor: 4, failures: 2, failingSince: AT, nextAttemptAt: AT,
    disabledAt: null, disabledReason: null, leaseOwner: null, leaseUntil: null
  })
  // Rules keys start with "." and "$" (MongoDB keeps them as text); the app sign-in with an inline key set.
  await store.appRules.putRules(project.id, { revision: 'rules-1', document: { rules: { users: { $uid: { '.write': 'auth.sub == $uid' } }, '.read': true } }, setBy: '@alice', setAt: AT })
  await store.appRules.putAppAuth(project.id, {
    revision: 'auth-1', issuer: 'https://issuer.example', audience: 'demo', jwks: { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'abc', kid: 'k1' }] }, jwksUrl: null,
    secretCiphertext: null, setBy: '@alice', setAt: AT
  })
  return (await store.findProject('alice', 'demo')) as ProjectRecord
}

/** What a client can read of the instance, through the Store interface. */
async function observable (store: Store) {
  const project = await store.findProject('alice', 'demo')
  if (!project) throw new Error('no project')
  const versions = []
  for (let v = 0; v <= project.version; v++) {
    versions.push(await store.readContentAt(project.id, v).then(s => JSON.stringify(s.content), (e: unknown) => (e as ContentdError).code))
  }
  const current = await store.readContent(project.id)
  return {
    project,
    content: JSON.stringify(current?.content),
    changes: await store.readChanges(project, 0, 1000).catch((e: unknown) => (e as ContentdError).code),
    lastChanges: await store.readChanges(project, project.version - 3, 1000),
    versions,
    users: await store.listUsers({ after: null, limit: 10 }),
    keys: [await store.findApiKeyByHash('hash-of-key-1'), await store.findApiKeyByHash('hash-of-key-2')],
    bobsProjects: await store.listProjectsForUser('usr_bob', { after: null, limit: 10 }, null),
    members: await store.listMembers(project.id, { after: null, limit: 10 }),
    schema: await store.getSchema(project.id),
    webhooks: await store.webhooks.list(project.id, { after: null, limit: 10 }),
    rules: await store.appRules.getRules(project.id),
    appAuth: await store.appRules.getAppAuth(project.id)
  }
}

describe('whole-instance export and import (docs/design.md §18)', () => {
  for (const from of storeFactories) {
    for (const to of storeFactories) {
      it(`${from.name} → ${to.name}: exact round trip; the import answers like the source and goes on working`, async () => {
        const source = await open(from)
        const project = await populate(source)
        const lines = await exportLines(source)
        expect(JSON.parse(lines[0] as string)).toEqual({ type: 'header', format: 'contentd-instance', version: 1 })
        expect(lines.map(line => (JSON.parse(line) as { type: string }).type)).toEqual([
          'header', 'user', 'user', 'apiKey', 'apiKey',
          'project', 'schema', 'content', 'member', ...Array(lines.filter(l => l.includes('"type":"checkpoint"')).length).fill('checkpoint'),
          ...Array(project.version).fill('change'), 'webhook', 'rules', 'appAuth',
          'project', 'content'
        ])

        const target = await open(to)
        const counts = await target.importRecords(recordsOfLines(linesOf(lines)))
        expect(counts).toMatchObject({ user: 2, apiKey: 2, project: 2, member: 1, schema: 1, change: project.version, webhook: 1, rules: 1, appAuth: 1 })
        expect(await exportLines(target)).toEqual(lines)
        expect(await observable(target)).toEqual(await observable(source))
        if (to.name !== 'mongodb') {
          // The embedded store sizes pages by each entry's kept UTF-8 length: imported rows have it too.
          const page = await target.readChangesJson(project, 0, 1000)
          expect(new Set(page.entries.map(entry => entry.bytes - entry.stored.length)).size).toBe(1)
          expect(page.entries).toHaveLength(project.version)
        }

        // The imported store goes on: a write continues the log at the next version.
        const next = await target.applyOperation(project, { op: 'increment', path: ['count'], value: 1 }, AS_TESTER)
        expect(next.version).toBe(project.version + 1)
        const changes = await target.readChanges(project, project.version, 10)
        expect(changes.changes.map(c => [c.version, c.op])).toEqual([[project.version + 1, 'increment']])
        expect((await target.readContentAt(project.id, project.version)).content).toEqual((await source.readContentAt(project.id, project.version)).content)
      })
    }
  }

  for (const factory of storeFactories) {
    it(`${factory.name}: a pruned history (HISTORY_LIMIT) round-trips with the same answers, HISTORY_EXPIRED included`, async () => {
      const source = await open(factory, 3)
      const project = await populate(source)
      const target = await open(factory, 3)
      const lines = await exportLines(source)
      // Pruned for real: the log starts above version 0 (content-log.ts's lazy retention).
      const projectLine = JSON.parse(lines.find(line => line.includes('"slug":"demo"')) as string) as { historyFloor: number }
      expect(projectLine.historyFloor).toBeGreaterThan(0)
      expect(lines.some(line => line.includes('"type":"change"') && line.includes('"version":1,'))).toBe(false)
      await target.importRecords(recordsOfLines(linesOf(lines)))
      expect(await exportLines(target)).toEqual(lines)
      const observed = await observable(target)
      expect(observed).toEqual(await observable(source))
      expect(observed.versions.slice(0, 3)).toEqual(['HISTORY_EXPIRED', 'HISTORY_EXPIRED', 'HISTORY_EXPIRED'])
      await expect(target.readChanges(project, 0, 10)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' })
    })

    it(`${factory.name}: import into a store holding a user is refused, nothing changed`, async () => {
      const source = await open(factory)
      await populate(source)
      const lines = await exportLines(source)
      const target = await open(factory)
      await target.createUser({ id: 'usr_carol', username: 'carol', passwordHash: 'h', createdAt: AT })
      await expect(target.importRecords(recordsOfLines(linesOf(lines)))).rejects.toBeInstanceOf(ImportRefusedError)
      expect((await target.listUsers({ after: null, limit: 10 })).map(u => u.username)).toEqual(['carol'])
      expect(await target.findProject('alice', 'demo')).toBeNull()
    })

    it(`${factory.name}: a bad line, a record out of order or one the store refuses stops the import at its line, and leaves the store empty`, async () => {
      const source = await open(factory)
      await populate(source)
      const lines = await exportLines(source)
      const changeLine = lines.findIndex(line => line.includes('"type":"change"')) + 1
      const webhookLine = lines.findIndex(line => line.includes('"type":"webhook"')) + 1
      const corrupt = (lineNumber: number, text: string) => lines.map((line, i) => i + 1 === lineNumber ? text : line)
      const cases: Array<[string[], RegExp]> = [
        [corrupt(webhookLine, lines[webhookLine - 1]?.slice(0, 40) as string), new RegExp(`^line ${webhookLine}: not JSON`)],
        [corrupt(changeLine, '{"type":"change","projectId":"prj_demo","entry":{"version":"one"}}'), new RegExp(`^line ${changeLine}: entry\\.version: `)],
        [corrupt(2, '{"type":"user","id":"usr_alice"}'), /^line 2: username: /],
        [corrupt(1, '{"type":"header","format":"other","version":1}'), /^line 1: not a contentd-instance v1 header/],
        // The second user takes the first's username: the store's unique index refuses it.
        [corrupt(3, (lines[3 - 1] as string).replace('"username":"bob"', '"username":"alice"')), /^line 3: refused by the store/],
        // A change missing from the log: the next one is out of order.
        [lines.filter((_, i) => i + 1 !== changeLine + 1), new RegExp(`^line ${changeLine + 1}: change at version 3, expected 2`)],
        // Cut short after the first project's content: its change log does not reach its version.
        [lines.slice(0, lines.findIndex(line => line.includes('"type":"content"')) + 1), /change log ends at version 0, the project is at 11/]
      ]
      for (const [input, message] of cases) {
        const target = await open(factory)
        const failure = await target.importRecords(recordsOfLines(linesOf(input))).then(() => null, (e: unknown) => e)
        expect(failure, String(message)).toBeInstanceOf(InstanceLineError)
        expect((failure as Error).message).toMatch(message)
        expect(await target.listUsers({ after: null, limit: 10 }), String(message)).toEqual([])
        expect(await target.findProject('alice', 'demo')).toBeNull()
        expect(await target.findApiKeyByHash('hash-of-key-1')).toBeNull()
        // Left empty, not half-full: the whole export loads into it afterwards.
        await target.importRecords(recordsOfLines(linesOf(lines)))
        expect(await exportLines(target)).toEqual(lines)
      }
    })
  }
})

describe('the line format (instance-records.ts)', () => {
  async function firstError (lines: string[]): Promise<string> {
    const records: InstanceRecord[] = []
    try {
      for await (const record of recordsOfLines(linesOf(lines))) records.push(record)
    } catch (error) {
      return (error as Error).message
    }
    return `no error after ${records.length} records`
  }

  it('needs the header first, and refuses empty input and blank lines by their number', async () => {
    expect(await firstError([])).toBe('line 1: empty input: expected a contentd-instance header')
    expect(await firstError(['{"type":"user","id":"u","username":"a","passwordHash":"h","createdAt":"t"}'])).toMatch(/^line 1: not a contentd-instance v1 header/)
    expect(await firstError([headerLine().replace('"version":1', '"version":2')])).toMatch(/^line 1: not a contentd-instance v1 header/)
    expect(await firstError([headerLine(), ''])).toMatch(/^line 2: not JSON/)
    expect(await firstError([headerLine(), '{"type":"session","tokenHash":"x"}'])).toMatch(/^line 2: type: /)
    expect(await firstError([headerLine(), '{"type":"user","id":"u","username":"a","passwordHash":"h","createdAt":"t","admin":true}'])).toMatch(/^line 2: .*admin/)
    expect(await firstError([headerLine(), '{"type":"user","id":"u","username":"a","passwordHash":"h","createdAt":"t"}'])).toBe('no error after 1 records')
  })
})
