// Deciding reads and writes by rules (server/rules/evaluate.ts and check.ts, docs/design.md
// §17), without a server: cascade, wildcards, data/newData, the budget, batches and patches.
import { describe, expect, it } from 'vitest'
import { isContentdError, type ContentdError } from '../../shared/errors.js'
import type { JsonObject } from '../../shared/json.js'
import { compileRules } from '../../server/rules/document.js'
import { decide, EvaluationBudget, valueAt } from '../../server/rules/evaluate.js'
import { requireReadAllowed, requireWriteAllowed, type RulesCheck } from '../../server/rules/check.js'
import type { ContentOperation } from '../../shared/compound.js'

const RULES = compileRules({
  rules: {
    users: { $uid: { '.read': 'auth.sub == uid', '.write': 'auth.sub == uid', private: { '.read': false } } },
    leaderboard: { '.read': true, $player: { score: { '.write': 'auth.sub == player && newData > data' } } },
    admin: { '.read': 'auth.role == "admin"', '.write': 'auth.role == "admin"' },
    clock: { '.write': 'now > 0' },
    broken: { '.read': 'auth.nope.deeper == 1', '.write': '1 / 0 == 1' }
  }
})

const DOC: JsonObject = { users: { u1: { name: 'A', private: { x: 1 } }, u2: { name: 'B' } }, leaderboard: { u1: { score: 5 } }, admin: {} }
const budget = () => new EvaluationBudget(1000)
const read = (auth: unknown, path: string, doc: JsonObject = DOC) =>
  decide(RULES, { kind: 'read', path: path === '' ? [] : path.split('.'), auth: auth as JsonObject, before: doc, now: 1 }, budget())

function check (auth: unknown, budgetLimit = 1000): RulesCheck {
  return { rules: RULES, auth: auth as JsonObject, budget: new EvaluationBudget(budgetLimit), now: () => Date.now() }
}

function writeRefusal (auth: unknown, operation: ContentOperation, doc: JsonObject = structuredClone(DOC)): ContentdError | null {
  try {
    requireWriteAllowed(check(auth), doc, operation)
    return null
  } catch (error) {
    if (isContentdError(error)) return error
    throw error
  }
}

describe('decide', () => {
  it.each([
    [{ sub: 'u1' }, 'users.u1', true, 'users.$uid/.read'],
    [{ sub: 'u1' }, 'users.u1.name', true, 'users.$uid/.read'],
    // A deeper false cannot take back an ancestor's true.
    [{ sub: 'u1' }, 'users.u1.private', true, 'users.$uid/.read'],
    [{ sub: 'u1' }, 'users.u2', false, undefined],
    [{ sub: 'u1' }, 'users', false, undefined],
    [{ sub: 'u1' }, '', false, undefined],
    [null, 'leaderboard', true, 'leaderboard/.read'],
    [null, 'leaderboard.u1.score', true, 'leaderboard/.read'],
    [null, 'users.u1', false, undefined],
    [{ sub: 'x', role: 'admin' }, 'admin.anything', true, 'admin/.read'],
    [{ sub: 'x', role: 'user' }, 'admin', false, undefined],
    // An expression that errors counts as false.
    [{ sub: 'x' }, 'broken', false, undefined],
    [{ sub: 'x' }, 'nowhere.at.all', false, undefined]
  ])('read by %j at "%s": %s', (auth, path, allowed, rule) => {
    const decision = read(auth, path)
    expect(decision.allowed).toBe(allowed)
    expect(decision.rule).toBe(rule)
  })

  it('allows nothing without rules', () => {
    expect(decide(null, { kind: 'read', path: [], auth: { sub: 'u1' }, before: DOC, now: 1 }, budget()).allowed).toBe(false)
  })

  it('prefers a literal level to the wildcard beside it', () => {
    const rules = compileRules({ rules: { $any: { '.read': 'true' }, closed: { '.read': 'false' } } })
    expect(decide(rules, { kind: 'read', path: ['open'], auth: null, before: {}, now: 1 }, budget()).allowed).toBe(true)
    expect(decide(rules, { kind: 'read', path: ['closed'], auth: null, before: {}, now: 1 }, budget()).allowed).toBe(false)
  })

  it('refuses once the budget is spent, saying so', () => {
    const small = new EvaluationBudget(1)
    expect(decide(RULES, { kind: 'read', path: ['users', 'u1'], auth: { sub: 'u1' }, before: DOC, now: 1 }, small).allowed).toBe(true)
    const spent = decide(RULES, { kind: 'read', path: ['users', 'u1'], auth: { sub: 'u1' }, before: DOC, now: 1 }, small)
    expect(spent).toEqual({ allowed: false, budgetSpent: true })
  })

  it('binds now as milliseconds', () => {
    const rules = compileRules({ rules: { '.read': 'now == 1234' } })
    expect(decide(rules, { kind: 'read', path: [], auth: null, before: {}, now: 1234 }, budget()).allowed).toBe(true)
    expect(decide(rules, { kind: 'read', path: [], auth: null, before: {}, now: 1235 }, budget()).allowed).toBe(false)
  })

  it('reads values at paths through objects and arrays, null when absent', () => {
    expect(valueAt({ a: [{ b: 2 }] }, ['a', '0', 'b'])).toBe(2)
    expect(valueAt({ a: [1] }, ['a', '01'])).toBeNull()
    expect(valueAt({ a: 1 }, ['a', 'b'])).toBeNull()
    expect(valueAt({}, ['constructor'])).toBeNull()
  })
})

describe('requireReadAllowed', () => {
  it('throws RULES_DENIED with the path, or answers the deciding rule', () => {
    expect(requireReadAllowed(check({ sub: 'u1' }), DOC, ['users', 'u1']).rule).toBe('users.$uid/.read')
    let caught: unknown
    try { requireReadAllowed(check({ sub: 'u1' }), DOC, ['users', 'u2']) } catch (error) { caught = error }
    expect(isContentdError(caught) && caught.toBody()).toMatchObject({ code: 'RULES_DENIED', path: 'users.u2' })
  })
})

describe('requireWriteAllowed', () => {
  it('allows a user their own subtree and refuses another one', () => {
    expect(writeRefusal({ sub: 'u1' }, { op: 'set', path: ['users', 'u1', 'name'], value: 'Z' })).toBeNull()
    expect(writeRefusal({ sub: 'u1' }, { op: 'set', path: ['users', 'u2', 'name'], value: 'Z' })?.toBody()).toMatchObject({ code: 'RULES_DENIED', path: 'users.u2.name' })
  })

  it('gives data and newData at the rule\'s path: only increases', () => {
    expect(writeRefusal({ sub: 'u1' }, { op: 'increment', path: ['leaderboard', 'u1', 'score'], value: 1 })).toBeNull()
    expect(writeRefusal({ sub: 'u1' }, { op: 'decrement', path: ['leaderboard', 'u1', 'score'], value: 1 })?.code).toBe('RULES_DENIED')
    expect(writeRefusal({ sub: 'u2' }, { op: 'increment', path: ['leaderboard', 'u1', 'score'], value: 1 })?.code).toBe('RULES_DENIED')
  })

  it('leaves the document as it was, allowed or refused', () => {
    const doc = structuredClone(DOC)
    writeRefusal({ sub: 'u1' }, { op: 'set', path: ['users', 'u1', 'name'], value: 'Z' }, doc)
    writeRefusal({ sub: 'u1' }, { op: 'batch', operations: [{ op: 'set', path: ['users', 'u1', 'a'], value: 1 }, { op: 'set', path: ['users', 'u2', 'a'], value: 1 }] }, doc)
    expect(doc).toEqual(DOC)
  })

  it('needs the root .write for update, and a root rule allows it', () => {
    expect(writeRefusal({ sub: 'u1' }, { op: 'update', value: {} })?.toBody()).toMatchObject({ path: '' })
    const rules = compileRules({ rules: { '.write': 'newData.size() < 2' } })
    const allowed = { rules, auth: null, budget: new EvaluationBudget(10), now: () => 1 }
    expect(() => { requireWriteAllowed(allowed, {}, { op: 'update', value: { a: 1 } }) }).not.toThrow()
    expect(() => { requireWriteAllowed(allowed, {}, { op: 'update', value: { a: 1, b: 2 } }) }).toThrow(/RULES|rules/)
  })

  it('checks every batch operation in order with the state before it, naming the refused one', () => {
    const ok = writeRefusal({ sub: 'u1' }, { op: 'batch', operations: [{ op: 'increment', path: ['leaderboard', 'u1', 'score'], value: 1 }, { op: 'increment', path: ['leaderboard', 'u1', 'score'], value: 1 }] })
    expect(ok).toBeNull()
    // The second operation decreases from the first's result (7 → 6): refused, as operation 1.
    const refused = writeRefusal({ sub: 'u1' }, { op: 'batch', operations: [{ op: 'increment', path: ['leaderboard', 'u1', 'score'], value: 2 }, { op: 'decrement', path: ['leaderboard', 'u1', 'score'], value: 1 }] })
    expect(refused?.toBody()).toMatchObject({ code: 'RULES_DENIED', operation: 1, path: 'leaderboard.u1.score' })
  })

  it('needs .read for a test', () => {
    expect(writeRefusal({ sub: 'u1' }, { op: 'batch', operations: [{ op: 'test', path: ['users', 'u2', 'name'], value: 'B' }, { op: 'set', path: ['users', 'u1', 'a'], value: 1 }] })?.toBody()).toMatchObject({ operation: 0, path: 'users.u2.name' })
    expect(writeRefusal({ sub: 'u1' }, { op: 'batch', operations: [{ op: 'test', path: ['leaderboard', 'u1', 'score'], value: 5 }, { op: 'set', path: ['users', 'u1', 'a'], value: 1 }] })).toBeNull()
  })

  it('checks a patch: move writes at both ends, copy reads its source', () => {
    expect(writeRefusal({ sub: 'u1' }, { op: 'patch', operations: [{ op: 'move', from: '/users/u2/name', path: '/users/u1/name' }] })?.toBody()).toMatchObject({ operation: 0, path: 'users.u2.name' })
    expect(writeRefusal({ sub: 'u1' }, { op: 'patch', operations: [{ op: 'copy', from: '/leaderboard/u1', path: '/users/u1/copy' }] })).toBeNull()
    expect(writeRefusal({ sub: 'u1' }, { op: 'patch', operations: [{ op: 'copy', from: '/users/u2', path: '/users/u1/copy' }] })?.toBody()).toMatchObject({ path: 'users.u2' })
    expect(writeRefusal({ sub: 'u1' }, { op: 'patch', operations: [{ op: 'replace', path: '/users/u1/name', value: 'Q' }] })).toBeNull()
  })

  it('refuses before the operation\'s own error, which an allowed caller then meets', () => {
    // users.u2.name is a string: increment would be NOT_A_NUMBER; u1 may not write there at all.
    expect(writeRefusal({ sub: 'u1' }, { op: 'increment', path: ['users', 'u2', 'name'], value: 1 })?.code).toBe('RULES_DENIED')
    expect(writeRefusal({ sub: 'u1' }, { op: 'increment', path: ['users', 'u1', 'name'], value: 1 })).toBeNull()
  })

  it('counts an expression that errors as false', () => {
    expect(writeRefusal({ sub: 'u1' }, { op: 'set', path: ['broken'], value: 1 })?.code).toBe('RULES_DENIED')
  })

  it('refuses when the budget is spent, saying so', () => {
    const operations = Array.from({ length: 5 }, () => ({ op: 'set' as const, path: ['users', 'u1', 'a'], value: 1 }))
    let caught: unknown
    try { requireWriteAllowed(check({ sub: 'u1' }, 3), structuredClone(DOC), { op: 'batch', operations }) } catch (error) { caught = error }
    expect(isContentdError(caught) && caught.message).toMatch(/RULES_EVALUATION_BUDGET/)
  })
})
