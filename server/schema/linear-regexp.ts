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

/**
 * Linear is not cheap: V8's linear engine steps through the pattern's states for each
 * character (and holds memory per step until the match ends), about 10 ns per character and
 * pattern character on a quiet machine; a pattern of 100 alternatives took 6 s and 900 MiB on
 * a 100,000-character string. So the pattern tests of one validation share a budget of
 * characters × pattern length (docs/design.md §13b): `^[^<>]*$` may check a 2 MiB string, a
 * 100-character pattern 160,000 characters. A validation past it throws, and the write is
 * refused (content-schema.ts reports it as a violation): it never runs long.
 */
export const PATTERN_BUDGET = 1 << 24

let remaining = PATTERN_BUDGET

/** Starts a validation's budget (content-schema.ts, before each validation). */
export function resetPatternBudget (): void {
  remaining = PATTERN_BUDGET
}

/** A linear RegExp whose tests are charged to the current validation's budget. */
class BudgetedRegExp {
  private readonly weight: number
  constructor (private readonly regExp: RegExp, pattern: string) {
    this.weight = Math.max(1, pattern.length)
  }

  test (input: string): boolean {
    remaining -= input.length * this.weight
    if (remaining < 0) {
      throw new Error(`testing patterns on this content needs more than ${PATTERN_BUDGET} characters × pattern characters (the last: ${input.length} characters against ${JSON.stringify(this.regExp.source.slice(0, 100))}); shorten the strings or the pattern`)
    }
    return this.regExp.test(input)
  }

  /** Ajv keys the compiled patterns it shares by this. */
  toString (): string {
    return this.regExp.toString()
  }
}

/** linearRegExp as Ajv's `code.regExp` engine (Ajv passes "u" as flags; the linear engine has no such flag). */
export const ajvLinearRegExp = Object.assign((pattern: string) => new BudgetedRegExp(linearRegExp(pattern), pattern), { code: 'linearRegExp' })
