// Which parts of a schema apply to the values along one path of a document, so that a change
// deep inside a large document can be checked where it happened (content-schema.ts).
//
// The walk follows only keywords whose effect on a container's members depends on nothing
// but the member's key or index: properties, patternProperties, additionalProperties,
// prefixItems, items, and the in-place $ref (a JSON pointer into this schema) and allOf. The
// container's own constraints that such a change can break are "shallow": they read the set
// of members, not their values (type, required, min/maxProperties, dependentRequired,
// propertyNames, min/maxItems). Every other keyword (anyOf, oneOf, not, if/then/else,
// dependentSchemas, unevaluated*, contains, uniqueItems, enum, const, ...) makes a schema
// "not walkable": the value it applies to is then validated as a whole.
import { linearRegExp } from './linear-regexp.js'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import type { JsonContainer } from '../../shared/json.js'
import type { CompiledSchema, JsonSchema } from './compile.js'
import { baseOf, eachSubschema, escapeSegment, hasOwn, isSchemaObject as isObject, resolveLocalRef, type SchemaObject } from './schema-refs.js'

/** A schema applied at some place, with its JSON pointer in the root schema. */
export interface Applied {
  pointer: string
  schema: JsonSchema
}

/** Every schema object in force at a value, `$ref` and `allOf` followed. */
export interface Expanded {
  objects: Array<{ pointer: string, schema: SchemaObject }>
  /** False when one of them (or a `false`, or a `$ref` the walk cannot follow) is beyond the walk. */
  walkable: boolean
}

const IGNORED = new Set(['$schema', '$id', '$comment', '$defs', 'definitions', 'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$anchor', 'format', 'contentMediaType', 'contentEncoding', 'contentSchema'])
/** Constrain strings and numbers only; the values the walk passes through are containers. */
const SCALAR = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'pattern'])
const SHALLOW = ['type', 'required', 'minProperties', 'maxProperties', 'dependentRequired', 'propertyNames', 'minItems', 'maxItems'] as const
const MEMBERS = new Set(['properties', 'patternProperties', 'additionalProperties', 'prefixItems', 'items'])
const IN_PLACE = new Set(['$ref', 'allOf'])
const WALKABLE = new Set([...IGNORED, ...SCALAR, ...SHALLOW, ...MEMBERS, ...IN_PLACE])

/** Keywords whose meaning depends on how a value was reached: only whole-document validation gets them right. */
const DYNAMIC = ['$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor']

function mentionsRef (schema: unknown): boolean {
  let found = false
  eachSubschema(schema, '', s => { if (hasOwn(s, '$ref')) found = true })
  return found
}

/**
 * True when changes can be checked where they happen: no dynamic references (their target
 * depends on the path of schemas that led to them) and no embedded resources (`$id` below the
 * root changes what a `$ref` means).
 */
function allowsLocalChecks (root: JsonSchema): boolean {
  let allowed = true
  eachSubschema(root, '', (schema, pointer) => {
    if (DYNAMIC.some(keyword => hasOwn(schema, keyword))) allowed = false
    if (pointer !== '' && hasOwn(schema, '$id')) allowed = false
  })
  return allowed
}

/** At most this many distinct sets of schemas are remembered per schema (they are few in practice). */
const MAX_REMEMBERED = 10_000

export class SchemaWalk {
  /** False: every change is checked by validating the whole document. */
  readonly local: boolean
  readonly rootEntries: Applied[]
  private readonly expanded = new Map<string, Expanded>()
  private readonly walkable = new WeakMap<SchemaObject, boolean>()
  private readonly shallow = new WeakMap<SchemaObject, ValidateFunction | null>()
  private readonly patterns = new Map<string, RegExp>()
  private readonly base: string | null

  constructor (private readonly compiled: CompiledSchema) {
    const root = compiled.root
    this.local = allowsLocalChecks(root)
    this.rootEntries = [{ pointer: '', schema: root }]
    this.base = baseOf(root)
  }

  /** The schema objects in force where `entries` apply. */
  expand (entries: readonly Applied[]): Expanded {
    const key = JSON.stringify(entries.map(e => e.pointer))
    let result = this.expanded.get(key)
    if (result) return result
    result = { objects: [], walkable: true }
    const seen = new Set<string>()
    const add = (pointer: string, schema: unknown): void => {
      if (seen.has(pointer)) return
      seen.add(pointer)
      if (schema === true) return
      if (!isObject(schema)) { result.walkable = false; return }
      result.objects.push({ pointer, schema })
      if (!this.isWalkable(schema)) result.walkable = false
      if (typeof schema.$ref === 'string') {
        const target = this.resolve(schema.$ref)
        if (target === null) result.walkable = false
        else add(target.pointer, target.schema)
      }
      if (Array.isArray(schema.allOf)) schema.allOf.forEach((item, i) => { add(`${pointer}/allOf/${i}`, item) })
    }
    for (const entry of entries) add(entry.pointer, entry.schema)
    if (this.expanded.size >= MAX_REMEMBERED) this.expanded.clear()
    this.expanded.set(key, result)
    return result
  }

  /** The schemas that apply to member `segment` of `container`, given the container's schema objects. */
  memberEntries (expanded: Expanded, container: JsonContainer, segment: string): Applied[] {
    const entries: Applied[] = []
    for (const { pointer, schema } of expanded.objects) {
      if (Array.isArray(container)) {
        const index = Number(segment)
        const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : []
        if (index < prefix.length) entries.push({ pointer: `${pointer}/prefixItems/${index}`, schema: prefix[index] as JsonSchema })
        else if (hasOwn(schema, 'items')) entries.push({ pointer: `${pointer}/items`, schema: schema.items as JsonSchema })
        continue
      }
      let matched = false
      const properties = schema.properties
      if (isObject(properties) && hasOwn(properties, segment)) {
        entries.push({ pointer: `${pointer}/properties/${escapeSegment(segment)}`, schema: properties[segment] as JsonSchema })
        matched = true
      }
      const patterns = schema.patternProperties
      if (isObject(patterns)) {
        for (const pattern of Object.keys(patterns)) {
          if (!this.regExp(pattern).test(segment)) continue
          entries.push({ pointer: `${pointer}/patternProperties/${escapeSegment(pattern)}`, schema: patterns[pattern] as JsonSchema })
          matched = true
        }
      }
      if (!matched && hasOwn(schema, 'additionalProperties')) entries.push({ pointer: `${pointer}/additionalProperties`, schema: schema.additionalProperties as JsonSchema })
    }
    return entries
  }

  /**
   * Validators of the shallow keywords of each schema object: what a container's change of
   * members (one added or removed) can break in the container itself.
   */
  shallowValidators (expanded: Expanded): ValidateFunction[] {
    const validators: ValidateFunction[] = []
    for (const { schema } of expanded.objects) {
      let validator = this.shallow.get(schema)
      if (validator === undefined) {
        const fragment: SchemaObject = {}
        for (const keyword of SHALLOW) if (hasOwn(schema, keyword)) fragment[keyword] = schema[keyword]
        validator = Object.keys(fragment).length === 0 ? null : this.compiled.compileFragment(fragment)
        this.shallow.set(schema, validator)
      }
      if (validator) validators.push(validator)
    }
    return validators
  }

  /** True when members from `index` on of an array shift without changing which schema applies to them. */
  shiftKeepsSchemas (expanded: Expanded, index: number): boolean {
    return expanded.objects.every(({ schema }) => !Array.isArray(schema.prefixItems) || schema.prefixItems.length <= index)
  }

  private isWalkable (schema: SchemaObject): boolean {
    let known = this.walkable.get(schema)
    if (known === undefined) {
      // propertyNames is validated on its own (a fragment), where a $ref would resolve nowhere.
      known = Object.keys(schema).every(keyword => WALKABLE.has(keyword)) && !mentionsRef(schema.propertyNames)
      this.walkable.set(schema, known)
    }
    return known
  }

  /** A `$ref` to a JSON pointer of this schema: its target, or null when the walk cannot follow it. */
  private resolve (ref: string): Applied | null {
    const target = resolveLocalRef(this.compiled.root, this.base, ref)
    return target && (typeof target.schema === 'boolean' || isObject(target.schema)) ? { pointer: target.pointer, schema: target.schema as JsonSchema } : null
  }

  private regExp (pattern: string): RegExp {
    let regExp = this.patterns.get(pattern)
    if (!regExp) {
      // As Ajv compiles them (compile.ts): linear time.
      regExp = linearRegExp(pattern)
      this.patterns.set(pattern, regExp)
    }
    return regExp
  }
}
