// Rules applied to what a request does (docs/design.md §17), pure: the content engine calls
// requireWriteAllowed inside the store's atomic step, beside the schema, and the read paths
// call requireReadAllowed on the content they answer from.
//
// A write is checked operation by operation, each with `data` and `newData` before and after
// that very operation: each one is dry-run on a copy-on-write working copy of the content
// (shared/working-copy.ts, which copies only the containers along the operation's path), so
// the document the store holds is never touched by a refusal. An operation the dry run cannot
// apply (a wrong type, say) is still checked, with `newData` equal to `data`, so a caller the
// rules refuse learns nothing about the content from the operation's own error; the real
// apply then reports that error.
import { applyBatch, type BatchOperation } from '../../shared/batch.js'
import type { ContentOperation } from '../../shared/compound.js'
import { ContentdError, OperationError } from '../../shared/errors.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { applyPatch, pointerSegments, type PatchOperation } from '../../shared/json-patch.js'
import { formatPath } from '../../shared/path.js'
import type { CompiledRules, RuleKind } from './document.js'
import { decide, type Decision, type EvaluationBudget } from './evaluate.js'

/** An app user's request, as the rules see it. */
export interface RulesCheck {
  /** The project's compiled rules; null when it has none (app users may do nothing). */
  rules: CompiledRules | null
  /** The token's claims. */
  auth: Json
  budget: EvaluationBudget
  /** Milliseconds since the epoch. */
  now: () => number
}

/** One read or write a step needs, at a path. */
interface Need { kind: RuleKind, path: readonly string[] }

/** Throws RULES_DENIED (naming `path`) unless the rules allow reading at `path` in `content`. */
export function requireReadAllowed (check: RulesCheck, content: Json, path: readonly string[]): Decision {
  const decision = decide(check.rules, { kind: 'read', path, auth: check.auth, before: content, now: check.now() }, check.budget)
  if (!decision.allowed) throw denied('read', path, decision)
  return decision
}

/**
 * Throws RULES_DENIED unless the rules allow every operation of `applied` against `before`
 * (update and revert: the root's `.write`, `after` being the new content). A batch's or
 * patch's refusal names the operation, as its other failures do.
 */
export function requireWriteAllowed (check: RulesCheck, before: JsonObject, applied: ContentOperation): void {
  switch (applied.op) {
    case 'update':
      requireStep(check, [{ kind: 'write', path: [] }], before, applied.value)
      return
    case 'batch':
      stepThrough(check, before, applied.operations, batchNeeds, (doc, step) => applyBatch(doc, [step]))
      return
    case 'patch':
      stepThrough(check, before, applied.operations, patchNeeds, (doc, step) => applyPatch(doc, [step]))
      return
    default:
      // One path operation: the same dry run as a batch of one, refusals without an index.
      dryRun(check, before, batchNeeds(applied), doc => applyBatch(doc, [applied]))
  }
}

function stepThrough<T> (check: RulesCheck, before: JsonObject, steps: readonly T[], needsOf: (step: T) => Need[], apply: (doc: JsonObject, step: T) => JsonObject): void {
  let current = before
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as T
    try {
      const next = dryRun(check, current, needsOf(step), doc => apply(doc, step))
      // The dry run could not apply it: the real apply stops at this step with its own error.
      if (next === null) return
      current = next
    } catch (error) {
      throw error instanceof ContentdError && error.code === 'RULES_DENIED' ? new OperationError(error, i) : error
    }
  }
}

/** Applies one step on a working copy and checks its needs; null when the step itself fails (checked unchanged). */
function dryRun (check: RulesCheck, before: JsonObject, needs: Need[], apply: (doc: JsonObject) => JsonObject): JsonObject | null {
  let after: JsonObject | null
  try {
    after = apply(before)
  } catch {
    after = null
  }
  requireStep(check, needs, before, after ?? before)
  return after
}

function requireStep (check: RulesCheck, needs: Need[], before: JsonObject, after: JsonObject): void {
  for (const need of needs) {
    const decision = decide(check.rules, { kind: need.kind, path: need.path, auth: check.auth, before, after, now: check.now() }, check.budget)
    if (!decision.allowed) throw denied(need.kind, need.path, decision)
  }
}

function batchNeeds (step: BatchOperation): Need[] {
  return [{ kind: step.op === 'test' ? 'read' : 'write', path: step.path }]
}

/** A patch operation's reads and writes: `move` writes at both ends, `copy` reads its source. */
function patchNeeds (step: PatchOperation): Need[] {
  const path = pointerSegments(step.path)
  switch (step.op) {
    case 'test': return [{ kind: 'read', path }]
    case 'move': return [{ kind: 'write', path: pointerSegments(step.from) }, { kind: 'write', path }]
    case 'copy': return [{ kind: 'read', path: pointerSegments(step.from) }, { kind: 'write', path }]
    default: return [{ kind: 'write', path }]
  }
}

function denied (kind: RuleKind, path: readonly string[], decision: Decision): ContentdError {
  const where = formatPath(path)
  const why = decision.budgetSpent ? 'the request spent its rules evaluation budget (RULES_EVALUATION_BUDGET)' : `no .${kind} rule allows it`
  return new ContentdError('RULES_DENIED', `${kind} at "${where}": ${why}`, { path: where })
}
