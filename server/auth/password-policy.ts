// What a NEW password may not be (NIST SP 800-63B §5.1.1.2): a value known to be commonly
// used, or a context-specific word such as the username. The list is zxcvbn-ts's
// common-password list (@zxcvbn-ts/language-common, MIT): about 49,000 passwords ranked by
// how often they appear in leaked password corpora, lower case, of which about 18,000 are
// long enough (8+) to reach this check. Compared without regard to case, so "Password1"
// is refused like "password1". Only signup and `contentd user create` ask: existing
// passwords keep working at login.
//
// Held as one newline-separated string of the 18,000 (~0.2 MiB), read on the first check
// from the package's passwords file alone, which is then dropped from the module cache. The
// package's own entry (imported at start before) kept all its word lists and graphs, and the
// Set built from them, alive for good: ~3 MiB of heap in a server that signs up a user now
// and then (BENCHMARKS.md, the memory scenario). A check scans the string: ~0.1 ms per signup.
import { createRequire } from 'node:module'

const MIN_LENGTH = 8
// A file inside the package, not its entry: the version is pinned exactly in package.json so
// that an upgrade that moves it is deliberate (test/auth/password-policy.test.ts fails then).
const PASSWORDS_FILE = '@zxcvbn-ts/language-common/dist/passwords.json.cjs'

let common: string | null = null

/** `\n` + every listed password of MIN_LENGTH or more + `\n`, each followed by `\n`. */
function commonPasswords (): string {
  if (common !== null) return common
  const require = createRequire(import.meta.url)
  const before = new Set(Object.keys(require.cache))
  try {
    const passwords = require(PASSWORDS_FILE) as string[]
    common = `\n${passwords.filter(password => password.length >= MIN_LENGTH).join('\n')}\n`
  } finally {
    // The file and the decompressor it loads, out of the module cache: neither is needed
    // again, and the decompressor's `module.parent` would keep the file's 49,000-string
    // array (~2 MiB) alive.
    for (const file of Object.keys(require.cache)) if (!before.has(file)) Reflect.deleteProperty(require.cache, file)
  }
  return common
}

/** Why `password` may not be chosen by `username`, or null when it may. */
export function passwordProblem (username: string, password: string): string | null {
  const folded = password.toLowerCase()
  // No listed password holds a line break, and one would let two listed ones match as one.
  if (!folded.includes('\n') && commonPasswords().includes(`\n${folded}\n`)) return 'it is one of the most common passwords'
  if (folded === username.toLowerCase()) return 'it is the username'
  return null
}
