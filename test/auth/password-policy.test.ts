// The common-password check (server/auth/password-policy.ts): what it refuses, and that the
// list's module does not stay loaded once read (BENCHMARKS.md, the memory scenario).
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { passwordProblem } from '../../server/auth/password-policy.js'

const require = createRequire(import.meta.url)
const PASSWORDS_FILE = require.resolve('@zxcvbn-ts/language-common/dist/passwords.json.cjs')
const DECOMPRESS_FILE = require.resolve('@zxcvbn-ts/dictionary-compression/decompress', { paths: [PASSWORDS_FILE] })
/** The list as the package gives it (loaded here only after the first test). */
const list = (): string[] => require(PASSWORDS_FILE) as string[]

describe('passwordProblem', () => {
  // First: the first check in this process reads the list and drops the file and the
  // decompressor it loads from the module cache (the decompressor's `module.parent` would
  // keep the whole list alive).
  it('leaves neither the list file nor its decompressor in the module cache', () => {
    expect(require.cache[PASSWORDS_FILE]).toBeUndefined()
    expect(passwordProblem('ann', 'vQ7#tangerine-orbit')).toBeNull()
    expect(passwordProblem('ann', 'password1')).not.toBeNull()
    expect(require.cache[PASSWORDS_FILE]).toBeUndefined()
    expect(require.cache[DECOMPRESS_FILE]).toBeUndefined()
  })

  it('refuses a common password of 8+ characters, in any case', () => {
    const LIST = list()
    expect(LIST).toContain('password1')
    expect(passwordProblem('ann', 'password1')).toBe('it is one of the most common passwords')
    expect(passwordProblem('ann', 'PassWord1')).toBe('it is one of the most common passwords')
    // The first and the last long entries of the list (no neighbour on one side).
    const long = LIST.filter(p => p.length >= 8)
    expect(passwordProblem('ann', long[0] as string)).not.toBeNull()
    expect(passwordProblem('ann', long[long.length - 1] as string)).not.toBeNull()
  })

  it('accepts an uncommon one, and a part or a join of listed ones', () => {
    expect(passwordProblem('ann', 'vQ7#tangerine-orbit')).toBeNull()
    expect(passwordProblem('ann', 'password')).not.toBeNull()
    expect(passwordProblem('ann', 'asswor')).toBeNull()
    expect(passwordProblem('ann', 'password1\npassword')).toBeNull()
  })

  it('refuses the username', () => {
    expect(passwordProblem('Someone-Long', 'someone-long')).toBe('it is the username')
  })
})
