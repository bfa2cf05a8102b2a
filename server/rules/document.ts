// A rules document (docs/design.md §17) checked and compiled once: a JSON tree mirroring the
// content, whose `$name` keys match any one segment and bind `name`, and whose `.read` and
// `.write` members are CEL expressions (expression.ts) or booleans. Anything else is
// INVALID_RULES naming the rule's path (`users.$uid/.write`), so a document that is stored
// always compiles and every evaluation has a compiled expression to run.
import { ContentdError } from '../../shared/errors.js'
import { MAX_PATH_SEGMENTS, keyProblem } from '../../shared/path.js'
import { compileExpression, constantExpression, variablesOf, type CompiledExpression } from './expression.js'

export type RuleKind = 'read' | 'write'

/** One level of the rules tree. */
export interface RuleNode {
  /** The node's path in the document, `users.$uid`; "" for the root. */
  readonly path: string
  readonly read: CompiledExpression | null
  readonly write: CompiledExpression | null
  readonly children: ReadonlyMap<string, RuleNode>
  /** The `$name` child, matching any segment no literal child matches. */
  readonly wildcard: { readonly name: string, readonly node: RuleNode } | null
}

export interface CompiledRules {
  readonly root: RuleNode
}

const WILDCARD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
// CEL's variables of every rule, and CEL's reserved words: a wildcard may not shadow either.
const RESERVED = new Set(['auth', 'data', 'newData', 'now', 'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'])

/** The path of a rule as INVALID_RULES and the simulator name it: `users.$uid/.write`, `/.read`. */
export function ruleName (nodePath: string, kind: RuleKind): string {
  return `${nodePath}/.${kind}`
}

/** Checks and compiles `{ "rules": { … } }`; throws INVALID_RULES naming what is wrong. */
export function compileRules (document: unknown): CompiledRules {
  if (!isPlainObject(document)) throw invalid('', 'the document must be a JSON object { "rules": { … } }')
  const extra = Object.keys(document).find(key => key !== 'rules')
  if (extra !== undefined) throw invalid('', `unknown member "${extra}": the document has only "rules"`)
  if (!('rules' in document)) throw invalid('', 'the document needs a "rules" object')
  return { root: compileNode(document.rules, [], []) }
}

function compileNode (value: unknown, segments: readonly string[], wildcards: readonly string[]): RuleNode {
  const path = segments.join('.')
  if (!isPlainObject(value)) throw invalid(path, 'a rules level must be a JSON object')
  if (segments.length > MAX_PATH_SEGMENTS) throw invalid(path, `rules may be at most ${MAX_PATH_SEGMENTS} levels deep, as paths are`)
  let read: CompiledExpression | null = null
  let write: CompiledExpression | null = null
  const children = new Map<string, RuleNode>()
  let wildcard: RuleNode['wildcard'] = null
  for (const [key, member] of Object.entries(value)) {
    if (key === '.read' || key === '.write') {
      const kind: RuleKind = key === '.read' ? 'read' : 'write'
      const compiled = compileRule(member, kind, wildcards, path)
      if (kind === 'read') read = compiled
      else write = compiled
    } else if (key.startsWith('.')) {
      throw invalid(path, `unknown rule "${key}": a level may have ".read" and ".write"`)
    } else if (key.startsWith('$')) {
      const name = key.slice(1)
      if (!WILDCARD_NAME.test(name)) throw invalid(path, `"${key}": a wildcard is "$" and a name of letters, digits and "_"`)
      if (RESERVED.has(name)) throw invalid(path, `"${key}": "${name}" is a variable or word of CEL already`)
      if (wildcards.includes(name)) throw invalid(path, `"${key}": "${name}" is bound above already`)
      if (wildcard) throw invalid(path, `"${key}": a level may have one wildcard ("$${wildcard.name}" is there)`)
      wildcard = { name, node: compileNode(member, [...segments, key], [...wildcards, name]) }
    } else {
      const problem = key.includes('.') ? 'contains "." (a level names one segment)' : keyProblem(key)
      if (problem) throw invalid(path, `"${key}": ${problem}`)
      children.set(key, compileNode(member, [...segments, key], wildcards))
    }
  }
  return { path, read, write, children, wildcard }
}

function compileRule (member: unknown, kind: RuleKind, wildcards: readonly string[], path: string): CompiledExpression {
  if (typeof member === 'boolean') return constantExpression(member)
  if (typeof member !== 'string') throw invalid(ruleName(path, kind), 'a rule is a CEL expression (a string) or a boolean')
  try {
    return compileExpression(member, variablesOf(kind, wildcards))
  } catch (error) {
    throw invalid(ruleName(path, kind), error instanceof Error ? error.message : String(error))
  }
}

function invalid (where: string, what: string): ContentdError {
  return new ContentdError('INVALID_RULES', `at "${where.includes('/') ? where : where === '' ? '/' : where}": ${what}`)
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
