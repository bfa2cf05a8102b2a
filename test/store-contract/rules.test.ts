// The store contract, app rules and trust settings (AppRulesStore, server/store/app-rules-types.ts,
// docs/design.md §17): one of each per project, replaced by a put, gone with the project.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { AppAuthRecord, RulesRecord } from '../../server/store/app-rules-types.js'
import type { Store } from '../../server/store/types.js'
import { compileRules } from '../../server/rules/document.js'
import { EvaluationBudget } from '../../server/rules/evaluate.js'
import type { RulesCheck } from '../../server/rules/check.js'
import { storeFactories } from '../support/stores.js'
import { AS_TEST, contractStore, expectCode } from './contract.js'

const rulesRecord = (document: RulesRecord['document']): RulesRecord => ({ revision: randomUUID(), document, setBy: '@alice', setAt: new Date().toISOString() })
const authRecord = (overrides: Partial<AppAuthRecord> = {}): AppAuthRecord => ({
  revision: randomUUID(), issuer: 'https://issuer.test/', audience: null, jwks: null, jwksUrl: null, secretCiphertext: 'v1.cipher', setBy: '@alice', setAt: new Date().toISOString(), ...overrides
})

describe.each(storeFactories)('store contract, app rules: $name', (factory) => {
  let store: Store
  const { newProject, content } = contractStore(factory, opened => { store = opened })

  it('keeps, replaces and deletes a project\'s rules document, keys with "." and "$" included', async () => {
    const project = await newProject()
    expect(await store.appRules.getRules(project.id)).toBeNull()
    const first = rulesRecord({ rules: { users: { $uid: { '.read': 'auth.sub == uid' } } } })
    await store.appRules.putRules(project.id, first)
    expect(await store.appRules.getRules(project.id)).toEqual(first)
    const second = rulesRecord({ rules: { '.read': true } })
    await store.appRules.putRules(project.id, second)
    expect(await store.appRules.getRules(project.id)).toEqual(second)
    expect(await store.appRules.deleteRules(project.id)).toBe(true)
    expect(await store.appRules.getRules(project.id)).toBeNull()
    expect(await store.appRules.deleteRules(project.id)).toBe(false)
  })

  it('keeps each kind of trust setting as given', async () => {
    const project = await newProject()
    expect(await store.appRules.getAppAuth(project.id)).toBeNull()
    const withSecret = authRecord({ audience: 'my-app' })
    await store.appRules.putAppAuth(project.id, withSecret)
    expect(await store.appRules.getAppAuth(project.id)).toEqual(withSecret)
    const withJwks = authRecord({ secretCiphertext: null, jwks: { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'abc', kid: 'k1', $weird: 1 }] } })
    await store.appRules.putAppAuth(project.id, withJwks)
    expect(await store.appRules.getAppAuth(project.id)).toEqual(withJwks)
    const withUrl = authRecord({ secretCiphertext: null, jwksUrl: 'https://issuer.test/.well-known/jwks.json' })
    await store.appRules.putAppAuth(project.id, withUrl)
    expect(await store.appRules.getAppAuth(project.id)).toEqual(withUrl)
    expect(await store.appRules.deleteAppAuth(project.id)).toBe(true)
    expect(await store.appRules.getAppAuth(project.id)).toBeNull()
    expect(await store.appRules.deleteAppAuth(project.id)).toBe(false)
  })

  it('keeps projects apart, refuses a missing project, and forgets both with the project', async () => {
    const a = await newProject()
    const b = await newProject()
    await store.appRules.putRules(a.id, rulesRecord({ rules: { '.read': true } }))
    await store.appRules.putAppAuth(a.id, authRecord())
    expect(await store.appRules.getRules(b.id)).toBeNull()
    expect(await store.appRules.getAppAuth(b.id)).toBeNull()
    await expectCode(store.appRules.putRules(randomUUID(), rulesRecord({ rules: {} })), 'PROJECT_NOT_FOUND')
    await expectCode(store.appRules.putAppAuth(randomUUID(), authRecord()), 'PROJECT_NOT_FOUND')
    await store.deleteProject(a.id)
    expect(await store.appRules.getRules(a.id)).toBeNull()
    expect(await store.appRules.getAppAuth(a.id)).toBeNull()
  })

  describe('rules in the write step (docs/design.md §17)', () => {
    const rules = compileRules({ rules: { users: { $uid: { '.write': 'auth.sub == uid' } }, scores: { $uid: { '.write': 'auth.sub == uid && (data == null || newData > data)' } } } })
    const as = (sub: string): RulesCheck => ({ rules, auth: { sub }, budget: new EvaluationBudget(100), now: () => Date.now() })
    const appActor = (sub: string) => ({ actor: { type: 'app' as const, sub }, rules: as(sub) })

    it('commits what the rules allow, with the app actor, and refuses the rest having changed nothing', async () => {
      const project = await newProject()
      await store.applyOperation(project, { op: 'update', value: { users: { u1: { n: 1 } }, scores: { u1: 5 } } }, AS_TEST)
      const { version } = await store.applyOperation(project, { op: 'increment', path: ['scores', 'u1'], value: 1 }, appActor('u1'))
      expect(version).toBe(2)
      await expectCode(store.applyOperation(project, { op: 'decrement', path: ['scores', 'u1'], value: 1 }, appActor('u1')), 'RULES_DENIED')
      await expectCode(store.applyOperation(project, { op: 'set', path: ['users', 'u2'], value: {} }, appActor('u1')), 'RULES_DENIED')
      await expectCode(store.applyOperation(project, { op: 'batch', operations: [{ op: 'set', path: ['users', 'u1', 'n'], value: 2 }, { op: 'increment', path: ['scores', 'u2'], value: 1 }] }, appActor('u1')), 'RULES_DENIED')
      await expectCode(store.applyOperation(project, { op: 'update', value: {} }, appActor('u1')), 'RULES_DENIED')
      expect(await content(project)).toEqual({ version: 2, content: { users: { u1: { n: 1 } }, scores: { u1: 6 } } })
      const changes = await store.readChanges(project, 1, 10)
      expect(changes.changes.map(c => c.actor)).toEqual([{ type: 'app', sub: 'u1' }])
    })
  })
})
