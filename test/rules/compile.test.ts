// Rules documents checked and compiled (server/rules/document.ts, docs/design.md §17): what
// is accepted, and that every refusal is INVALID_RULES naming the rule's path.
import { describe, expect, it } from 'vitest'
import { isContentdError } from '../../shared/errors.js'
import { compileRules } from '../../server/rules/document.js'

function refusal (document: unknown): string {
  try {
    compileRules(document)
  } catch (error) {
    if (isContentdError(error) && error.code === 'INVALID_RULES') return error.message
    throw error
  }
  throw new Error('compiled')
}

describe('compileRules', () => {
  it('compiles a tree with wildcards, expressions and booleans', () => {
    const rules = compileRules({ rules: { users: { $uid: { '.read': 'auth.sub == uid', '.write': 'auth.sub == uid && newData != null' } }, leaderboard: { '.read': true } } })
    expect([...rules.root.children.keys()]).toEqual(['users', 'leaderboard'])
    expect(rules.root.children.get('users')?.wildcard?.name).toBe('uid')
    expect(rules.root.children.get('users')?.wildcard?.node.path).toBe('users.$uid')
    expect(rules.root.children.get('leaderboard')?.read?.source).toBe('true')
  })

  it.each([
    [null, 'at "/"'],
    [[], 'at "/"'],
    [{}, 'needs a "rules" object'],
    [{ rules: {}, extra: 1 }, 'unknown member "extra"'],
    [{ rules: { a: 1 } }, 'at "a": a rules level must be a JSON object'],
    [{ rules: { a: { '.validate': 'true' } } }, 'at "a": unknown rule ".validate"'],
    [{ rules: { a: { '.read': 'auth.sub ==' } } }, 'at "a/.read": CEL:'],
    [{ rules: { a: { '.read': 'newData == 1' } } }, 'at "a/.read": unknown variable "newData"'],
    [{ rules: { a: { '.write': 'uid == "x"' } } }, 'at "a/.write": unknown variable "uid"'],
    [{ rules: { a: { '.write': 5 } } }, 'at "a/.write": a rule is a CEL expression'],
    [{ rules: { a: { '.read': '[1].exists(x, x == 1)' } } }, 'comprehensions'],
    [{ rules: { a: { '.read': 'auth.sub.matches("a+")' } } }, 'matches() is not allowed'],
    [{ rules: { $a: {}, $b: {} } }, 'a level may have one wildcard'],
    [{ rules: { $a: { $a: {} } } }, '"a" is bound above already'],
    [{ rules: { $auth: {} } }, '"auth" is a variable or word of CEL'],
    [{ rules: { '$1x': {} } }, 'a wildcard is "$" and a name'],
    [{ rules: { 'a.b': {} } }, 'contains "."'],
    [{ rules: { a: { '.read': 'x'.repeat(3000) } } }, 'longer than 2048']
  ])('refuses document %#: %s', (document, expected) => {
    expect(refusal(document)).toContain(expected)
  })

  it('refuses rules deeper than a path may be', () => {
    let level: Record<string, unknown> = { '.read': true }
    for (let i = 0; i < 34; i++) level = { a: level }
    expect(refusal({ rules: level })).toContain('levels deep')
  })
})
