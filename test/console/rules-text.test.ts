// The Rules tab's pure parts (console/panels/rules-text.ts): the starter rules compile with the
// server's own compiler, the editor's help offers and checks ".read"/".write", and the
// simulator's fields and answers read as the tab shows them.
import { describe, expect, it } from 'vitest'
import { keySuggestions, schemaIssues, valueSuggestions } from '../../console/editor/schema-assist.js'
import { authKindText, decisionText, parseClaims, parseRulesText, ruleStepsOf, RULES_SHAPE, STARTER_RULES, valueOfText } from '../../console/panels/rules-text.js'
import { readTrustForm, trustFormOf } from '../../console/panels/trust-form.js'
import { compileRules } from '../../server/rules/document.js'
import { decide, EvaluationBudget } from '../../server/rules/evaluate.js'

describe('the Rules tab text', () => {
  it('starts from rules the server compiles, which decide the worked example of docs/rules.md', () => {
    const compiled = compileRules(STARTER_RULES)
    const budget = () => new EvaluationBudget(100)
    const before = { users: {}, leaderboard: { u1: { score: 3 } } }
    const write = (sub: string, path: string[], after: object) => decide(compiled, { kind: 'write', path, auth: { sub }, before, after: after as never, now: 0 }, budget())
    expect(write('u1', ['users', 'u1', 'name'], { ...before, users: { u1: { name: 'A' } } })).toEqual({ allowed: true, rule: 'users.$uid/.write' })
    expect(write('u2', ['users', 'u1', 'name'], { ...before, users: { u1: { name: 'A' } } })).toEqual({ allowed: false })
    expect(write('u1', ['leaderboard', 'u1', 'score'], { ...before, leaderboard: { u1: { score: 4 } } }).allowed).toBe(true)
    expect(write('u1', ['leaderboard', 'u1', 'score'], { ...before, leaderboard: { u1: { score: 2 } } }).allowed).toBe(false)
    expect(decide(compiled, { kind: 'read', path: ['leaderboard'], auth: null, before, now: 0 }, budget())).toEqual({ allowed: true, rule: 'leaderboard/.read' })
  })

  it('reads the editor\'s text: JSON objects only, with the place of a syntax error', () => {
    expect(parseRulesText('{"rules": {}}')).toEqual({ ok: true, document: { rules: {} } })
    expect(parseRulesText('[1]')).toMatchObject({ ok: false, message: expect.stringContaining('JSON object') })
    expect(parseRulesText('{"rules": {\n  ".read": true,\n}}')).toMatchObject({ ok: false, message: expect.stringMatching(/^Not valid JSON: .*\(line 3, column 1\)$/) })
  })

  it('helps in the editor: ".read" and ".write" offered at every level, wrong kinds of rule marked', () => {
    expect(keySuggestions(RULES_SHAPE, [], [])).toEqual([expect.objectContaining({ label: 'rules' })])
    expect(keySuggestions(RULES_SHAPE, ['rules', 'users', '$uid'], ['.read']).map(s => s.label)).toEqual(['.write'])
    expect(valueSuggestions(RULES_SHAPE, ['rules', 'leaderboard', '.read']).map(s => s.label)).toEqual(['true', 'false'])
    expect(schemaIssues(RULES_SHAPE, STARTER_RULES)).toEqual([])
    expect(schemaIssues(RULES_SHAPE, { rules: { users: { '.write': 1, name: 'x' } }, extra: true })).toEqual([
      { path: ['rules', 'users', '.write'], message: 'must be string or boolean' },
      { path: ['rules', 'users', 'name'], message: 'must be object' },
      { path: ['extra'], message: '"extra" is not allowed here' }
    ])
  })

  it('reads the simulated caller and value', () => {
    expect(parseClaims('{"sub": "u1", "role": "admin"}', true)).toEqual({ ok: true, auth: { sub: 'u1', role: 'admin' } })
    expect(parseClaims('not even json', false)).toEqual({ ok: true, auth: null })
    expect(parseClaims('', true)).toMatchObject({ ok: false, message: expect.stringContaining('not signed in') })
    expect(parseClaims('{"sub": ', true)).toMatchObject({ ok: false, message: expect.stringContaining('Not valid JSON') })
    expect(parseClaims('["u1"]', true)).toMatchObject({ ok: false, message: expect.stringContaining('JSON object') })
    expect(parseClaims('{"sub": 7}', true)).toMatchObject({ ok: false, message: expect.stringContaining('string "sub"') })
    expect(valueOfText('')).toBeUndefined()
    expect(valueOfText('  ')).toBeUndefined()
    expect(valueOfText('10')).toBe(10)
    expect(valueOfText('{"a": [1]}')).toEqual({ a: [1] })
    expect(valueOfText('Ann')).toBe('Ann')
    expect(valueOfText('"Ann"')).toBe('Ann')
  })

  it('says what the simulator answered', () => {
    expect(decisionText({ allowed: true, rule: 'users.$uid/.write' }, 'write', 'users.u1.name', true)).toBe('Allowed: write at users.u1.name, by users.$uid/.write')
    expect(decisionText({ allowed: true, rule: '/.read' }, 'read', '', true)).toBe('Allowed: read at the whole content, by /.read')
    expect(decisionText({ allowed: false }, 'write', 'users.u1', true)).toBe('Denied: write at users.u1; no ".write" rule at users.u1 or above it is true')
    expect(decisionText({ allowed: false }, 'read', 'a', false)).toBe('Denied: read at a; the project has no rules, so app users may do nothing')
  })

  it('finds the place an INVALID_RULES message names, as the server words it', () => {
    const refusal = (document: unknown) => {
      try {
        compileRules(document)
      } catch (e) {
        return (e as Error).message
      }
      throw new Error('compiled')
    }
    expect(ruleStepsOf(refusal({ rules: { users: { $uid: { '.write': 'auth.sub ==' } } } }))).toEqual(['rules', 'users', '$uid', '.write'])
    expect(ruleStepsOf(refusal({ rules: { '.read': 7 } }))).toEqual(['rules', '.read'])
    expect(ruleStepsOf(refusal({ rules: { users: { '.list': true } } }))).toEqual(['rules', 'users'])
    expect(ruleStepsOf(refusal({ rules: {}, extra: 1 }))).toEqual([])
    expect(ruleStepsOf('the document is 70000 bytes; RULES_LIMIT is 65536')).toBeNull()
  })

  it('reads the app sign-in form into the body of PUT …/auth', () => {
    const form = { ...trustFormOf(null), issuer: ' https://i/ ', secret: 'x'.repeat(32) }
    expect(form.kind).toBe('hs256Secret')
    expect(readTrustForm(form)).toEqual({ ok: true, settings: { issuer: 'https://i/', hs256Secret: 'x'.repeat(32) } })
    expect(readTrustForm({ ...form, audience: 'app' })).toEqual({ ok: true, settings: { issuer: 'https://i/', audience: 'app', hs256Secret: 'x'.repeat(32) } })
    expect(readTrustForm({ ...form, issuer: '' })).toMatchObject({ ok: false, message: expect.stringContaining('issuer') })
    expect(readTrustForm({ ...form, secret: '' })).toMatchObject({ ok: false, message: expect.stringContaining('secret') })
    expect(readTrustForm({ ...form, kind: 'jwksUrl', jwksUrl: 'https://i/jwks.json' })).toEqual({ ok: true, settings: { issuer: 'https://i/', jwksUrl: 'https://i/jwks.json' } })
    expect(readTrustForm({ ...form, kind: 'jwksUrl' })).toMatchObject({ ok: false })
    expect(readTrustForm({ ...form, kind: 'jwks', jwks: '{"keys": [{"kty": "EC"}]}' })).toEqual({ ok: true, settings: { issuer: 'https://i/', jwks: { keys: [{ kty: 'EC' }] } } })
    expect(readTrustForm({ ...form, kind: 'jwks', jwks: '{"keys": 1}' })).toMatchObject({ ok: false, message: expect.stringContaining('{"keys"') })
    expect(readTrustForm({ ...form, kind: 'jwks', jwks: '{' })).toMatchObject({ ok: false, message: expect.stringContaining('Not valid JSON') })
    // Filled from the current setting, never with a secret (the server does not send it).
    const current = trustFormOf({ issuer: 'https://i/', audience: 'app', kind: 'jwksUrl', jwksUrl: 'https://i/k', setBy: '@a', setAt: '2026-01-01T00:00:00.000Z' })
    expect(current).toEqual({ issuer: 'https://i/', audience: 'app', kind: 'jwksUrl', secret: '', jwksUrl: 'https://i/k', jwks: '' })
  })

  it('says how tokens are checked', () => {
    const base = { issuer: 'https://i/', audience: null, setBy: '@a', setAt: '2026-01-01T00:00:00.000Z' }
    expect(authKindText({ ...base, kind: 'hs256Secret' })).toBe('a shared HS256 secret')
    expect(authKindText({ ...base, kind: 'jwks', jwks: { keys: [{ kty: 'EC' }, { kty: 'RSA' }] } })).toBe('an inline JWK set of 2 keys')
    expect(authKindText({ ...base, kind: 'jwksUrl', jwksUrl: 'https://i/jwks.json' })).toBe('the JWKS at https://i/jwks.json')
  })
})
