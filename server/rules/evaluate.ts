// Deciding one read or write at one path by a compiled rules document (docs/design.md §17),
// pure: the caller hands over the content before (and, for a write, after) the change. A
// read or write at P is allowed when a `.read` / `.write` rule at P or at any ancestor of P
// evaluates to true: rules cascade down as in Firebase, so a deeper false cannot take back an
// ancestor's true. Literal levels win over a level's wildcard, as in Firebase.
import type { Json } from '../../shared/json.js'
import { ruleName, type CompiledRules, type RuleKind, type RuleNode } from './document.js'

/**
 * The evaluations one request may spend (RULES_EVALUATION_BUDGET, docs/design.md §13b): a
 * batch of many operations at deep paths evaluates up to (operations × levels) expressions.
 * Once it is spent, every further rule counts as false: the request is refused, not slowed.
 */
export class EvaluationBudget {
  private spent = 0

  constructor (readonly limit: number) {}

  /** Takes one evaluation; false when none is left. */
  take (): boolean {
    if (this.spent >= this.limit) return false
    this.spent++
    return true
  }
}

export interface RuleRequest {
  kind: RuleKind
  path: readonly string[]
  /** The token's claims (an object), or null. */
  auth: Json
  /** The whole content before the write (a read: now). */
  before: Json
  /** The whole content after the write; writes only. */
  after?: Json
  now: number
}

export interface Decision {
  allowed: boolean
  /** The rule that allowed it (`users.$uid/.write`); absent for a refusal. */
  rule?: string
  /** True when the refusal came from a spent budget rather than from the rules. */
  budgetSpent?: boolean
}

/** Decides one read or write; `rules` null (none stored) allows nothing. */
export function decide (rules: CompiledRules | null, request: RuleRequest, budget: EvaluationBudget): Decision {
  if (!rules) return { allowed: false }
  let node: RuleNode | null = rules.root
  const wildcards: Record<string, string> = {}
  for (let depth = 0; node; depth++) {
    const expression = request.kind === 'read' ? node.read : node.write
    if (expression) {
      if (!budget.take()) return { allowed: false, budgetSpent: true }
      const here = request.path.slice(0, depth)
      const allowed = expression.allows({
        auth: request.auth,
        data: valueAt(request.before, here),
        ...(request.kind === 'write' ? { newData: valueAt(request.after ?? null, here) } : {}),
        now: request.now,
        wildcards
      })
      if (allowed) return { allowed: true, rule: ruleName(node.path, request.kind) }
    }
    if (depth === request.path.length) break
    const segment = request.path[depth] as string
    const literal: RuleNode | undefined = node.children.get(segment)
    if (literal) {
      node = literal
    } else if (node.wildcard) {
      wildcards[node.wildcard.name] = segment
      node = node.wildcard.node
    } else {
      node = null
    }
  }
  return { allowed: false }
}

/** The value at `path` inside `root`, null when nothing is there (own members only). */
export function valueAt (root: Json, path: readonly string[]): Json {
  let current: Json = root
  for (const segment of path) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment)) return null
      current = current[Number(segment)] ?? null
    } else if (typeof current === 'object' && current !== null && Object.prototype.hasOwnProperty.call(current, segment)) {
      current = current[segment] as Json
    } else {
      return null
    }
  }
  return current
}
