// A project's schema as the stores apply it (docs/design.md §12): the whole document checked
// when a schema is set or the content replaced, and each path operation checked where it
// happened, at a cost that does not grow with the document.
//
// Why checking locally is sound: the document was valid before the operation (every write
// and the schema itself were checked), and an operation changes one value (the one at its
// path, or a member it adds or removes) and nothing else. Values elsewhere keep both their
// content and the schemas that apply to them, as long as every schema between the root and
// the change decides what applies to a member from the member's key or index alone
// (schema-walk.ts). So it suffices to validate the changed value against the schemas that
// apply to it, plus, when a container gains or loses a member, that container's own
// member-set constraints (required, minProperties, ...). Where a schema on the way decides
// otherwise (anyOf, if/then/else, dependentSchemas, unevaluatedProperties, uniqueItems, a
// prefixItems the change shifts, ...), the value that schema applies to is validated as a
// whole, up to the whole document. A property test (test/schema/change-check.property.test.ts)
// checks that this agrees with validating the whole document.
import type { ValidateFunction } from 'ajv/dist/2020.js'
import { ContentdError, type SchemaError } from '../../shared/errors.js'
import { isContainer, type Json, type JsonContainer, type JsonObject } from '../../shared/json.js'
import { isCompound, type ContentOperation } from '../../shared/compound.js'
import type { Operation } from '../../shared/operations.js'
import { isCanonicalIndex } from '../../shared/path.js'
import { compileSchema, type CompiledSchema, type JsonSchema } from './compile.js'
import { resetPatternBudget } from './linear-regexp.js'
import { SchemaWalk, type Applied } from './schema-walk.js'
import { MAX_REPORTED_ERRORS, Violations } from './violations.js'

/** What an operation changes, found by looking at the document before it. */
type Change =
  | { kind: 'nothing' }
  | { kind: 'whole' }
  /** The value at `path` is replaced; every container above keeps its members. */
  | { kind: 'replaced', path: string[] }
  /** A member appears at `path`; with `shift`, the array's later elements move up one. */
  | { kind: 'added', path: string[], shift: boolean }
  /** Member `index` (or key) of the container at `parent` disappears; with `shift`, later elements move down. */
  | { kind: 'removed', parent: string[], index: number, shift: boolean }

/** Checks the document after an operation; returns what breaks the schema (empty: valid). */
export type ChangeCheck = (after: JsonObject) => SchemaError[]

const hasOwn = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key)

export class ContentSchema {
  private readonly walk: SchemaWalk

  constructor (private readonly compiled: CompiledSchema) {
    this.walk = new SchemaWalk(compiled)
  }

  /** Compiles a schema; INVALID_SCHEMA when it is not one. */
  static compile (schema: unknown): ContentSchema {
    return new ContentSchema(compileSchema(schema))
  }

  get schema (): JsonSchema {
    return this.compiled.root
  }

  /** Whether changes are checked where they happen (false: always the whole document). */
  get checksLocally (): boolean {
    return this.walk.local
  }

  /** What breaks the schema in a whole document. */
  validate (content: JsonObject): SchemaError[] {
    return guarded(() => {
      const violations = new Violations()
      if (!this.compiled.validate(content)) violations.add(this.compiled.validate.errors)
      return violations.list
    })
  }

  /**
   * Call BEFORE applying `operation` to `before` (a valid document); call the result with the
   * document after it. The result agrees with validate(after) on whether it is valid. A batch
   * or patch is checked as a whole result (docs/design.md §10: only the result must match;
   * its steps may pass through documents that do not), so the whole document is validated.
   */
  prepare (before: JsonObject, operation: ContentOperation): ChangeCheck {
    const change = this.walk.local && !isCompound(operation) ? changeOf(before, operation) : { kind: 'whole' as const }
    switch (change.kind) {
      case 'nothing': return () => []
      case 'whole': return after => this.validate(after)
      case 'removed': return after => guarded(() => this.checkRemoved(after, change))
      default: return after => guarded(() => this.checkWritten(after, change))
    }
  }

  /**
   * For a store: call BEFORE applying `operation` to `before`; the result throws
   * SCHEMA_VIOLATION (422) when the document after it breaks the schema.
   */
  enforce (before: JsonObject, operation: ContentOperation): (after: JsonObject) => void {
    const check = this.prepare(before, operation)
    return after => {
      const violations = check(after)
      if (violations.length > 0) throw schemaViolation(violations)
    }
  }

  /** A value replaced or a member added: walk down to it, then validate it. */
  private checkWritten (after: JsonObject, change: Extract<Change, { kind: 'replaced' | 'added' }>): SchemaError[] {
    const violations = new Violations()
    const { path } = change
    let entries = this.walk.rootEntries
    let node: Json = after
    for (let depth = 0; depth < path.length; depth++) {
      const at = path.slice(0, depth)
      const expanded = this.walk.expand(entries)
      if (!expanded.walkable) return this.validateAt(after, node, entries, at)
      const container = node as JsonContainer
      const segment = path[depth] as string
      if (change.kind === 'added' && depth === path.length - 1) {
        if (change.shift && !this.walk.shiftKeepsSchemas(expanded, Number(segment))) return this.validateAt(after, node, entries, at)
        for (const validator of this.walk.shallowValidators(expanded)) if (!validator(container)) violations.add(validator.errors, at)
      }
      entries = this.walk.memberEntries(expanded, container, segment)
      node = memberOf(container, segment)
    }
    return [...violations.list, ...this.validateAt(after, node, entries, path)].slice(0, MAX_REPORTED_ERRORS)
  }

  /** A member removed: only its container's member-set constraints can break (or shifted elements). */
  private checkRemoved (after: JsonObject, change: Extract<Change, { kind: 'removed' }>): SchemaError[] {
    const { parent } = change
    let entries = this.walk.rootEntries
    let node: Json = after
    for (let depth = 0; depth <= parent.length; depth++) {
      const at = parent.slice(0, depth)
      const expanded = this.walk.expand(entries)
      if (!expanded.walkable) return this.validateAt(after, node, entries, at)
      if (depth === parent.length) {
        if (change.shift && !this.walk.shiftKeepsSchemas(expanded, change.index)) return this.validateAt(after, node, entries, at)
        const violations = new Violations()
        for (const validator of this.walk.shallowValidators(expanded)) if (!validator(node)) violations.add(validator.errors, at)
        return violations.list
      }
      const segment = parent[depth] as string
      entries = this.walk.memberEntries(expanded, node as JsonContainer, segment)
      node = memberOf(node as JsonContainer, segment)
    }
    return []
  }

  /** Validates `value` (at `at`) against each schema applied to it. */
  private validateAt (after: JsonObject, value: Json, entries: readonly Applied[], at: string[]): SchemaError[] {
    const violations = new Violations()
    for (const { pointer, schema } of entries) {
      if (schema === true) continue
      if (schema === false && pointer.endsWith('/additionalProperties') && at.length > 0) {
        // As whole-document validation words it: at the object, naming the member.
        violations.list.push({ path: at.slice(0, -1).join('.'), message: `must NOT have additional properties: ${JSON.stringify(at[at.length - 1])}` })
        continue
      }
      const validator: ValidateFunction | null = this.compiled.validatorAt(pointer)
      if (!validator) return this.validate(after)
      if (!validator(value)) violations.add(validator.errors, at)
    }
    return violations.list
  }
}

/** True while a check runs (guarded nests when a local check falls back to the whole document). */
let validating = false

/**
 * Runs a validation. Should Ajv itself fail on some schema and value (it has had bugs), the
 * value counts as breaking the schema: the write is refused and nothing changes, instead of
 * an unexpected error failing every write committed with it.
 */
function guarded (validation: () => SchemaError[]): SchemaError[] {
  // One pattern budget per check, also when the check falls back to the whole document.
  const outermost = !validating
  if (outermost) resetPatternBudget()
  validating = true
  try {
    return validation()
  } catch (error) {
    return [{ path: '', message: `the schema could not be evaluated on this content (${error instanceof Error ? error.message : String(error)})` }]
  } finally {
    if (outermost) validating = false
  }
}

/** SCHEMA_VIOLATION listing the violations: 422 for a write, or `status` (409 for setting a schema). */
export function schemaViolation (violations: readonly SchemaError[], status?: number): ContentdError {
  const first = violations[0]
  const detail = first === undefined
    ? undefined
    : `${first.path === '' ? 'the content' : `"${first.path}"`} ${first.message}${violations.length > 1 ? ` (and ${violations.length - 1} more)` : ''}`
  return new ContentdError('SCHEMA_VIOLATION', detail, { errors: [...violations], ...(status === undefined ? {} : { status }) })
}

function memberOf (container: JsonContainer, segment: string): Json {
  return (Array.isArray(container) ? container[Number(segment)] : container[segment]) as Json
}

/** Where `operation` will change `doc`, walking it as shared/operations.ts will. */
function changeOf (doc: JsonObject, operation: Operation): Change {
  if (operation.op === 'update') return { kind: 'whole' }
  const { path } = operation
  let current: JsonContainer = doc
  for (let depth = 0; depth < path.length; depth++) {
    const segment = path[depth] as string
    let next: Json | undefined
    if (Array.isArray(current)) {
      // The operation will fail here (or, for delete, find nothing): nothing to check.
      if (!isCanonicalIndex(segment) || Number(segment) > current.length) return operation.op === 'delete' ? { kind: 'nothing' } : { kind: 'whole' }
      next = current[Number(segment)]
    } else {
      next = hasOwn(current, segment) ? current[segment] : undefined
    }
    const here = path.slice(0, depth + 1)
    if (next === undefined) return operation.op === 'delete' ? { kind: 'nothing' } : { kind: 'added', path: here, shift: false }
    if (depth === path.length - 1) return changeAt(operation, here, current, next)
    if (!isContainer(next)) return { kind: 'whole' }
    current = next
  }
  return { kind: 'whole' }
}

function changeAt (operation: Exclude<Operation, { op: 'update' }>, path: string[], parent: JsonContainer, target: Json): Change {
  switch (operation.op) {
    case 'increment':
    case 'decrement':
    case 'set':
      return { kind: 'replaced', path }
    case 'delete':
      return { kind: 'removed', parent: path.slice(0, -1), index: Array.isArray(parent) ? Number(path[path.length - 1]) : 0, shift: Array.isArray(parent) }
    case 'push':
      return Array.isArray(target) ? { kind: 'added', path: [...path, String(target.length)], shift: false } : { kind: 'whole' }
    case 'insert':
      return Array.isArray(target) ? { kind: 'added', path: [...path, String(operation.index)], shift: operation.index < target.length } : { kind: 'whole' }
  }
}
