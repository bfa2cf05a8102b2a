// A project's JSON Schema (draft 2020-12) compiled with Ajv. Each schema gets an Ajv instance
// of its own: a schema's `$id` then cannot clash with another project's, and the subschemas
// the change check validates with (validatorAt) resolve their `$ref`s inside this schema only.
// Nothing is ever fetched: a `$ref` to anything outside the schema is INVALID_SCHEMA.
import type { Ajv2020, AnySchema, ValidateFunction } from 'ajv/dist/2020.js'
import type formats from 'ajv-formats'
import { ContentdError } from '../../shared/errors.js'
import { onFirstUse, requireCommonJs } from '../first-use.js'
import { LINEAR_FORMATS, refusedFormat } from './formats.js'
import { ajvLinearRegExp } from './linear-regexp.js'
import { costProblem } from './schema-cost.js'
import { baseOf, inPlaceLoop } from './schema-refs.js'
import { uniqueItemsKeyword } from './unique-items.js'

// Ajv and ajv-formats are loaded when the first schema is checked or compiled, not at start:
// a node whose projects set no schema keeps them out of its heap (~0.7 MiB; BENCHMARKS.md, the
// memory scenario). A synchronous require of their CommonJS builds, so compiling stays
// synchronous; the first schema pays the load once.
const ajvLib = onFirstUse(() => ({
  Ajv2020: requireCommonJs<{ Ajv2020: typeof Ajv2020 }>('ajv/dist/2020.js').Ajv2020,
  // ajv-formats is CommonJS with `exports.default`.
  addFormats: requireCommonJs<typeof formats>('ajv-formats').default
}))

export type JsonSchema = boolean | { [keyword: string]: unknown }

/** The base URI of a schema without an `$id` of its own (subschemas are addressed under it). */
const DEFAULT_BASE = 'urn:contentd:project-schema'
const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema'

/** A compiled schema: the whole-document validator and, on demand, validators of subschemas. */
export class CompiledSchema {
  readonly validate: ValidateFunction
  private readonly subschemas = new Map<string, ValidateFunction | null>()

  constructor (private readonly ajv: Ajv2020, readonly root: JsonSchema, private readonly base: string) {
    this.validate = ajv.compile(typeof root === 'boolean' ? root : { ...root, $id: base })
  }

  /**
   * The validator of the subschema at a JSON pointer of the root (as Ajv would apply it
   * there, `$ref`s resolved in the root); null when Ajv cannot address it (the caller then
   * validates the whole document).
   */
  validatorAt (pointer: string): ValidateFunction | null {
    let found = this.subschemas.get(pointer)
    if (found !== undefined) return found
    found = null
    if (pointer === '') found = this.validate
    else if (typeof this.root !== 'boolean') {
      try {
        found = this.ajv.getSchema(`${this.base}#${encodePointer(pointer)}`) ?? null
      } catch {
        found = null
      }
    }
    this.subschemas.set(pointer, found)
    return found
  }

  /** A standalone validator for a fragment that has no `$ref` (the change check's shallow keywords). */
  compileFragment (fragment: JsonSchema): ValidateFunction {
    return this.ajv.compile(fragment as AnySchema)
  }
}

function encodePointer (pointer: string): string {
  return pointer.split('/').map(encodeURIComponent).join('/')
}

const STRICTNESS = {
  // Unknown keywords and formats are mistakes in the schema: refuse them. The type checks
  // Ajv would log about (a `minimum` without `type`, say) are legal JSON Schema, and so is a
  // member named in properties that also matches a patternProperties pattern (both apply).
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowMatchingProperties: true,
  logger: false
} as const

let metaValidator: Ajv2020 | null = null

/**
 * Checks a schema against the draft 2020-12 meta-schema with one Ajv kept for the purpose:
 * compiling the meta-schema costs tens of milliseconds, too much for every project's schema.
 */
function metaProblem (schema: JsonSchema): string | null {
  if (!metaValidator) {
    const { Ajv2020: Ajv, addFormats } = ajvLib()
    metaValidator = new Ajv({ ...STRICTNESS, allErrors: false })
    addFormats(metaValidator)
  }
  if (metaValidator.validateSchema(schema) as boolean) return null
  return metaValidator.errorsText(metaValidator.errors, { dataVar: 'schema' })
}

function newAjv (): Ajv2020 {
  // Checked against the meta-schema already (metaProblem); this instance only compiles.
  const { Ajv2020: Ajv, addFormats } = ajvLib()
  const ajv = new Ajv({
    ...STRICTNESS,
    meta: false,
    validateSchema: false,
    // The first violation only: Ajv's allErrors mode has thrown TypeErrors on some valid
    // schemas (dependentSchemas with recursive $refs), and one violation is enough to fix a write.
    allErrors: false,
    // Patterns in linear time, never backtracking (linear-regexp.ts). No optimization pass:
    // Ajv's walks the generated code once per nesting level, and each keyword nests the next,
    // which made compiling quadratic in a schema object's keywords (docs/design.md §13b).
    code: { regExp: ajvLinearRegExp, optimize: false }
  })
  // Only formats checked in linear time (formats.ts); `uniqueItems` by hashing, not pairs.
  addFormats(ajv, LINEAR_FORMATS)
  ajv.removeKeyword('uniqueItems')
  ajv.addKeyword(uniqueItemsKeyword)
  return ajv
}

/**
 * JSON nesting a schema may have: 64 levels of subschemas written out (`properties` → name →
 * schema is two levels each), like content's 64 (docs/design.md §3). Ajv and the meta-schema
 * check recurse once per level: deeper schemas would exhaust the stack, and their compile
 * time grows with depth.
 */
export const MAX_SCHEMA_DEPTH = 128

/** How deep `value` nests, counted without recursion (the value may be deeper than the stack). */
function nestingDepth (value: unknown, limit: number): number {
  let deepest = 0
  const pending: Array<[unknown, number]> = [[value, 1]]
  while (pending.length > 0) {
    const [node, depth] = pending.pop() as [unknown, number]
    if (node === null || typeof node !== 'object') continue
    if (depth > deepest) deepest = depth
    if (deepest > limit) return deepest
    for (const child of Object.values(node)) pending.push([child, depth + 1])
  }
  return deepest
}

/** Compiles a schema sent by a project's owner; anything wrong with it is INVALID_SCHEMA. */
export function compileSchema (schema: unknown): CompiledSchema {
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
    throw new ContentdError('INVALID_SCHEMA', 'a schema is a JSON object (or true or false)')
  }
  if (nestingDepth(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH) {
    throw new ContentdError('INVALID_SCHEMA', `the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels of JSON`)
  }
  const root = schema as JsonSchema
  if (typeof root === 'object' && root.$schema !== undefined && root.$schema !== DRAFT_2020_12 && root.$schema !== `${DRAFT_2020_12}#`) {
    throw new ContentdError('INVALID_SCHEMA', `only draft 2020-12 is supported: "$schema" must be "${DRAFT_2020_12}"`)
  }
  const base = baseOf(root) ?? DEFAULT_BASE
  try {
    const problem = metaProblem(root)
    if (problem) throw new ContentdError('INVALID_SCHEMA', cap(problem))
    const loop = inPlaceLoop(root)
    if (loop) throw new ContentdError('INVALID_SCHEMA', `the schema applies itself to the same value without end: ${loop.map(p => `"#${p}"`).join(' → ')}`)
    // Bounded work (docs/design.md §13b): before Ajv compiles anything.
    const refused = refusedFormat(root) ?? costProblem(root)
    if (refused) throw new ContentdError('INVALID_SCHEMA', refused)
    return new CompiledSchema(newAjv(), root, base)
  } catch (error) {
    if (error instanceof ContentdError) throw error
    throw new ContentdError('INVALID_SCHEMA', compileProblem(error, base))
  }
}

function compileProblem (error: unknown, base: string): string {
  if (error instanceof RangeError) return 'the schema nests or refers to itself too deeply to compile'
  if (!(error instanceof Error)) return 'the schema could not be compiled'
  const { missingRef, missingSchema } = error as { missingRef?: unknown, missingSchema?: unknown }
  if (typeof missingRef === 'string') {
    return missingSchema === '' || missingSchema === base
      ? `$ref "${missingRef}" points to nothing in the schema`
      : `$ref "${missingRef}" is outside the schema; remote schemas are never fetched, so a schema must be self-contained`
  }
  // Ajv's messages describe the schema ("unknown keyword", "unknown format"); cap them.
  return cap(error.message)
}

function cap (message: string): string {
  return message.length > 500 ? `${message.slice(0, 500)}…` : message
}
