// What a NEW password may not be (NIST SP 800-63B §5.1.1.2): a value known to be commonly
// used, or a context-specific word such as the username. The list is zxcvbn-ts's
// common-password list (@zxcvbn-ts/language-common, MIT): about 49,000 passwords ranked by
// how often they appear in leaked password corpora, lower case, of which about 18,000 are
// long enough (8+) to reach this check. Compared without regard to case, so "Password1"
// is refused like "password1". Only signup and `contentd user create` ask: existing
// passwords keep working at login.
import { dictionary } from '@zxcvbn-ts/language-common'

const MIN_LENGTH = 8

const COMMON = new Set(dictionary['passwords-common'].filter(password => password.length >= MIN_LENGTH))

/** Why `password` may not be chosen by `username`, or null when it may. */
export function passwordProblem (username: string, password: string): string | null {
  const folded = password.toLowerCase()
  if (COMMON.has(folded)) return 'it is one of the most common passwords'
  if (folded === username.toLowerCase()) return 'it is the username'
  return null
}
