// One rule expression of a rules document (docs/design.md §17): CEL, parsed and planned once
// per rules document by @bufbuild/cel (never `eval`), run per request. What an expression may
// do is bounded before it is ever run: its text has a maximum length, it may name only the
// variables its rule can bind, and the constructs whose cost grows with the data instead of
// with the expression are refused — the comprehension macros (`all`, `exists`, `exists_one`,
// `map`, `filter`) iterate over a list or map of the content, and `matches` runs a regular
// expression over a string of the content. So one evaluation costs about the expression's
// size, and a request's evaluations are counted by an EvaluationBudget.
//
// The CEL library (with protobuf and RE2: ~4 MiB of live heap) is loaded when the process
// compiles its first expression, not at start: most nodes serve no project with rules
// (BENCHMARKS.md, the memory scenario). It is loaded synchronously (require of its CommonJS
// build), so compiling stays synchronous; the first compile pays the load once (80-120 ms here).
import type { CelInput } from '@bufbuild/cel'
import type { Json } from '../../shared/json.js'
import { onFirstUse, requireCommonJs } from '../first-use.js'

/** The longest expression accepted, in characters. */
export const MAX_EXPRESSION_LENGTH = 2048

type Cel = typeof import('@bufbuild/cel')

const cel = onFirstUse(() => {
  const lib = requireCommonJs<Cel>('@bufbuild/cel')
  return { cel: lib, env: lib.celEnv() }
})

/** Functions refused because their cost follows the data, not the expression. */
const REFUSED_FUNCTIONS = new Set(['matches'])

/** What one evaluation sees (docs/design.md §17). */
export interface RuleBindings {
  /** The token's claims; null for a caller without one (the simulator's `auth: null`). */
  auth: Json
  /** The value at the rule's path before the write (a read: now); null when absent. */
  data: Json
  /** The value at the rule's path after the write; only `.write` rules see it. */
  newData?: Json
  /** Milliseconds since the epoch. */
  now: number
  /** The wildcard bindings on the way to the rule (`$uid` binds `uid`). */
  wildcards: Readonly<Record<string, string>>
}

export interface CompiledExpression {
  readonly source: string
  /** True only when the expression evaluated to the boolean true; an error counts as false. */
  allows (bindings: RuleBindings): boolean
}

/** The variables a rule's expression may name. */
export function variablesOf (kind: 'read' | 'write', wildcards: readonly string[]): Set<string> {
  return new Set(['auth', 'data', 'now', ...(kind === 'write' ? ['newData'] : []), ...wildcards])
}

/** A constant rule (`".read": true`). */
export function constantExpression (value: boolean): CompiledExpression {
  return { source: String(value), allows: () => value }
}

/**
 * Compiles one expression; throws an Error whose message says what is wrong (the CEL parse
 * error, an unknown variable, a refused construct), for INVALID_RULES to carry.
 */
export function compileExpression (source: string, variables: ReadonlySet<string>): CompiledExpression {
  if (source.length > MAX_EXPRESSION_LENGTH) throw new Error(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`)
  const { cel: { parse, plan, isCelError }, env } = cel()
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(source)
  } catch (error) {
    throw new Error(`CEL: ${error instanceof Error ? error.message : String(error)}`)
  }
  checkTree(parsed.expr, variables)
  const run = plan(env, parsed)
  return {
    source,
    allows (bindings) {
      const input: Record<string, CelInput> = {
        ...bindings.wildcards,
        auth: bindings.auth as CelInput,
        data: bindings.data as CelInput,
        newData: (bindings.newData ?? null) as CelInput,
        now: BigInt(bindings.now)
      }
      try {
        const result = run(input)
        return !isCelError(result) && result === true
      } catch {
        // The library returns its errors, but a rule that fails in any way is a refusal, never a 500.
        return false
      }
    }
  }
}

/** Walks the parsed expression: every identifier must be a known variable; no refused construct. */
function checkTree (node: unknown, variables: ReadonlySet<string>): void {
  if (typeof node !== 'object' || node === null) return
  if (Array.isArray(node)) {
    for (const item of node) checkTree(item, variables)
    return
  }
  const kind = (node as { exprKind?: { case?: string, value?: unknown } }).exprKind
  if (kind?.case === 'identExpr') {
    const name = (kind.value as { name: string }).name
    if (!variables.has(name)) throw new Error(`unknown variable "${name}" (known here: ${[...variables].join(', ')})`)
    return
  }
  if (kind?.case === 'comprehensionExpr') throw new Error('comprehensions (all, exists, exists_one, map, filter) are not allowed in rules: their cost grows with the data')
  if (kind?.case === 'callExpr') {
    const name = (kind.value as { function: string }).function
    if (REFUSED_FUNCTIONS.has(name)) throw new Error(`${name}() is not allowed in rules: its cost grows with the data`)
  }
  for (const [key, value] of Object.entries(node)) {
    if (key !== '$typeName') checkTree(value, variables)
  }
}
