// The regular expressions of a project's schema (`pattern`, `patternProperties`) run on V8's
// linear-time engine (the `l` flag). Any signed-up user may own a project and set a schema;
// with the usual backtracking engine a pattern such as "^(a+)+$" against a crafted string
// would hold the event loop for minutes and stall every project on the process. The linear
// engine has no backreferences, lookaround or `u` flag (so no `\p{…}`, and a character outside
// the Basic Multilingual Plane counts as two): a pattern it cannot run is INVALID_SCHEMA.
import { setFlagsFromString } from 'node:v8'

// Makes the `l` flag available; it changes nothing for regular expressions without it.
setFlagsFromString('--enable-experimental-regexp-engine')

/** A pattern of a schema as a linear-time RegExp; throws (with a message for people) otherwise. */
export function linearRegExp (pattern: string): RegExp {
  try {
    // eslint-disable-next-line no-invalid-regexp -- `l` is V8's linear-engine flag, enabled above
    return new RegExp(pattern, 'l')
  } catch (error) {
    const reason = error instanceof Error && /linear/i.test(error.message)
      ? 'it needs backtracking (backreferences, lookaround), which patterns may not use'
      : 'it is not a valid regular expression'
    throw new Error(`pattern ${JSON.stringify(pattern)} cannot be used: ${reason}`)
  }
}

/** linearRegExp as Ajv's `code.regExp` engine (Ajv passes "u" as flags; the linear engine has no such flag). */
export const ajvLinearRegExp = Object.assign((pattern: string) => linearRegExp(pattern), { code: 'linearRegExp' })
