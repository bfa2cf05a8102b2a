// Schema-aware help in the JSON editors (docs/console.md, "Editors"): what to offer at a place
// in the text, and what looks wrong before anything is sent. Pure (no CodeMirror here, so it is
// tested without a browser: test/console/schema-assist.test.ts); console/editor/setup.ts maps
// places in the text to the paths used here.
//
// The server stays the judge (SCHEMA_VIOLATION, INVALID_SCHEMA): these hints follow the
// keywords people meet first — type, enum, const, required, properties, additionalProperties,
// items, local $ref — and say nothing where a schema uses more than that (anyOf, if/then …),
// rather than guess.
import type { Json, JsonObject, JsonSchema } from '../../shared/client/index.js'

/** A step into a JSON value: an object key or an array index. */
export type PathStep = string | number

export interface Suggestion {
  /** What is inserted: a key (unquoted) or a JSON value as text. */
  label: string
  /** Short: the expected type. */
  detail?: string
  /** Longer: the schema's description. */
  info?: string
}

export interface Issue { path: PathStep[], message: string }

/** How many $ref hops are followed before giving up (a schema may refer to itself). */
const REF_HOPS = 16
/** At most this many issues are reported; past it the rest would be noise. */
export const MAX_ISSUES = 50

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value)

/** Follows a local "$ref": "#/…" (JSON Pointer into the root); anything else is left alone. */
function deref (root: JsonSchema, schema: unknown): JsonObject | boolean | undefined {
  let current = schema
  for (let hop = 0; hop < REF_HOPS && isObject(current) && typeof current.$ref === 'string'; hop++) {
    const ref = current.$ref
    if (!ref.startsWith('#')) return undefined
    let target: unknown = root
    for (const raw of ref.slice(1).split('/').slice(1)) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
      target = isObject(target) || Array.isArray(target) ? (target as Record<string, unknown>)[key] : undefined
    }
    current = target
  }
  return typeof current === 'boolean' || isObject(current) ? current : undefined
}

/** The schema for the value at `path`, or undefined where these hints cannot tell. */
export function schemaAt (root: JsonSchema, path: PathStep[]): JsonObject | boolean | undefined {
  let schema = deref(root, root)
  for (const step of path) {
    if (!isObject(schema)) return schema === true ? true : undefined
    let next: unknown
    if (typeof step === 'number') {
      const prefix = schema.prefixItems
      next = Array.isArray(prefix) && step < prefix.length ? prefix[step] : schema.items
    } else {
      const properties = schema.properties
      next = isObject(properties) && step in properties ? properties[step] : schema.additionalProperties
    }
    if (next === undefined) return undefined
    schema = deref(root, next)
  }
  return schema
}

function typesOf (schema: JsonObject): string[] {
  const type = schema.type
  if (typeof type === 'string') return [type]
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string')
  return []
}

const describe = (schema: unknown): Pick<Suggestion, 'detail' | 'info'> => {
  if (!isObject(schema)) return {}
  const types = typesOf(schema)
  return {
    ...(types.length > 0 ? { detail: types.join(' | ') } : {}),
    ...(typeof schema.description === 'string' ? { info: schema.description } : {})
  }
}

/** Keys the schema names for the object at `path` that it does not have yet. */
export function keySuggestions (root: JsonSchema, path: PathStep[], present: string[]): Suggestion[] {
  const schema = schemaAt(root, path)
  if (!isObject(schema) || !isObject(schema.properties)) return []
  const required = Array.isArray(schema.required) ? schema.required : []
  return Object.entries(schema.properties)
    .filter(([key]) => !present.includes(key))
    .map(([key, sub]) => {
      const described = describe(deref(root, sub))
      return { label: key, ...described, ...(required.includes(key) ? { detail: `${described.detail ?? 'any'}, required` } : {}) }
    })
}

/** Values the schema allows at `path` when it lists them (enum, const, boolean, null). */
export function valueSuggestions (root: JsonSchema, path: PathStep[]): Suggestion[] {
  const schema = schemaAt(root, path)
  if (!isObject(schema)) return []
  if ('const' in schema) return [{ label: JSON.stringify(schema.const), detail: 'const' }]
  if (Array.isArray(schema.enum)) return schema.enum.map(v => ({ label: JSON.stringify(v), detail: 'enum' }))
  const out: Suggestion[] = []
  const types = typesOf(schema)
  if (types.includes('boolean')) out.push({ label: 'true', detail: 'boolean' }, { label: 'false', detail: 'boolean' })
  if (types.includes('null')) out.push({ label: 'null', detail: 'null' })
  return out
}

function typeOf (value: Json): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

const matchesType = (value: Json, type: string) => {
  const actual = typeOf(value)
  return actual === type || (type === 'number' && actual === 'integer')
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** What in `value` the schema's simple keywords refuse, with the path of each (at most MAX_ISSUES). */
export function schemaIssues (root: JsonSchema, value: Json): Issue[] {
  const issues: Issue[] = []
  const visit = (schema: JsonObject | boolean | undefined, at: Json, path: PathStep[]) => {
    if (issues.length >= MAX_ISSUES || schema === undefined || schema === true) return
    if (schema === false) { issues.push({ path, message: 'not allowed here' }); return }
    const types = typesOf(schema)
    if (types.length > 0 && !types.some(t => matchesType(at, t))) {
      issues.push({ path, message: `must be ${types.join(' or ')}` })
      return
    }
    if ('const' in schema && !sameJson(schema.const, at)) issues.push({ path, message: `must be ${JSON.stringify(schema.const)}` })
    if (Array.isArray(schema.enum) && !schema.enum.some(v => sameJson(v, at))) {
      issues.push({ path, message: `must be one of ${schema.enum.map(v => JSON.stringify(v)).join(', ')}` })
    }
    if (isObject(at)) {
      if (Array.isArray(schema.required)) {
        for (const key of schema.required) if (typeof key === 'string' && !(key in at)) issues.push({ path, message: `must have "${key}"` })
      }
      const properties = isObject(schema.properties) ? schema.properties : {}
      for (const [key, child] of Object.entries(at)) {
        if (key in properties) visit(deref(root, properties[key]), child as Json, [...path, key])
        else if (schema.additionalProperties === false) issues.push({ path: [...path, key], message: `"${key}" is not allowed here` })
        else visit(deref(root, schema.additionalProperties), child as Json, [...path, key])
      }
    } else if (Array.isArray(at)) {
      const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : []
      at.forEach((item, index) => visit(deref(root, index < prefix.length ? prefix[index] : schema.items), item, [...path, index]))
    }
  }
  visit(deref(root, root), value, [])
  return issues.slice(0, MAX_ISSUES)
}

/** Keywords of JSON Schema draft 2020-12 offered while writing a schema, with what each does. */
export const SCHEMA_KEYWORDS: Suggestion[] = [
  ['$schema', 'the dialect: "https://json-schema.org/draft/2020-12/schema"'],
  ['type', 'string, number, integer, boolean, object, array, null'],
  ['properties', 'a schema for each named member'],
  ['required', 'members that must be present'],
  ['additionalProperties', 'members not named in properties (false: none)'],
  ['items', 'a schema for every item of an array'],
  ['prefixItems', 'schemas for the first items of an array'],
  ['enum', 'the allowed values'],
  ['const', 'the one allowed value'],
  ['minimum', 'number at least'],
  ['maximum', 'number at most'],
  ['minLength', 'string length at least'],
  ['maxLength', 'string length at most'],
  ['pattern', 'a regular expression the string matches (no backreferences)'],
  ['minItems', 'array length at least'],
  ['maxItems', 'array length at most'],
  ['uniqueItems', 'no two items equal'],
  ['description', 'for people'],
  ['title', 'for people'],
  ['$defs', 'schemas to refer to with "$ref": "#/$defs/…"'],
  ['$ref', 'a schema defined elsewhere in this one: "#/$defs/…"'],
  ['anyOf', 'matches at least one of these schemas'],
  ['oneOf', 'matches exactly one of these schemas'],
  ['allOf', 'matches all of these schemas'],
  ['not', 'does not match this schema'],
  ['format', 'date-time, email, uri, … (checked by the server)']
].map(([label, info]) => ({ label: label as string, detail: 'keyword', info: info as string }))

export const SCHEMA_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']

/**
 * Writing a schema: what to offer at `path` in the schema text. Under "properties" or "$defs"
 * the keys are names the owner chooses (nothing is offered); in a schema object, keywords;
 * as the value of "type", the type names.
 */
export function schemaEditingSuggestions (path: PathStep[], place: 'key' | 'value', present: string[]): Suggestion[] {
  const parent = path.at(-1)
  const grandparent = path.at(-2)
  if (place === 'key') {
    if (parent === 'properties' || parent === '$defs' || parent === 'patternProperties') return []
    return SCHEMA_KEYWORDS.filter(k => !present.includes(k.label))
  }
  const inTypeList = typeof parent === 'number' && grandparent === 'type'
  if (parent === 'type' || inTypeList) return SCHEMA_TYPES.map(t => ({ label: JSON.stringify(t), detail: 'type' }))
  return []
}
