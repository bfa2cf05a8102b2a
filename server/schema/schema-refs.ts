// Finding one's way around a schema document: its subschemas, where a `$ref` points inside
// it, and the one shape Ajv cannot compile safely: a schema that applies itself to the same
// value without end ({"$ref": "#"} at the root, two definitions referring to each other).
// Ajv compiles such a schema and then recurses forever when validating; JSON Schema calls it
// invalid, and so do we.
export type SchemaObject = { [keyword: string]: unknown }

const ONE_SUBSCHEMA = ['additionalProperties', 'items', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema']
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems']
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']
/** Keywords that apply subschemas to the value itself, not to its members. */
const IN_PLACE_ONE = ['not', 'if', 'then', 'else']
const IN_PLACE_LISTS = ['allOf', 'anyOf', 'oneOf']

export const isSchemaObject = (value: unknown): value is SchemaObject => typeof value === 'object' && value !== null && !Array.isArray(value)
export const hasOwn = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key)
export const escapeSegment = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1')

/** Calls `visit` on every subschema of `schema` (itself included), with its JSON pointer. */
export function eachSubschema (schema: unknown, pointer: string, visit: (schema: SchemaObject, pointer: string) => void): void {
  if (!isSchemaObject(schema)) return
  visit(schema, pointer)
  for (const keyword of ONE_SUBSCHEMA) if (hasOwn(schema, keyword)) eachSubschema(schema[keyword], `${pointer}/${keyword}`, visit)
  for (const keyword of SUBSCHEMA_LISTS) {
    const list = schema[keyword]
    if (Array.isArray(list)) list.forEach((item, i) => { eachSubschema(item, `${pointer}/${keyword}/${i}`, visit) })
  }
  for (const keyword of SUBSCHEMA_MAPS) {
    const map = schema[keyword]
    if (isSchemaObject(map)) for (const name of Object.keys(map)) eachSubschema(map[name], `${pointer}/${keyword}/${escapeSegment(name)}`, visit)
  }
}

/** The base URI a root's `$id` gives, or null. */
export function baseOf (root: unknown): string | null {
  return isSchemaObject(root) && typeof root.$id === 'string' && root.$id !== '' ? root.$id.replace(/#$/, '') : null
}

/**
 * Where a `$ref` points when it is a JSON pointer into this schema ("#/$defs/item", or the
 * root's own `$id` followed by one): the pointer (escaped, as in the schema) and the schema
 * there; null for anything else (an anchor, another resource).
 */
export function resolveLocalRef (root: unknown, base: string | null, ref: string): { pointer: string, schema: unknown } | null {
  let fragment: string
  if (ref.startsWith('#')) fragment = ref.slice(1)
  else if (base !== null && ref.startsWith(`${base}#`)) fragment = ref.slice(base.length + 1)
  else return null
  if (fragment !== '' && !fragment.startsWith('/')) return null
  let pointer: string
  try {
    pointer = decodeURIComponent(fragment)
  } catch {
    return null
  }
  let schema: unknown = root
  for (const segment of pointer === '' ? [] : pointer.slice(1).split('/')) {
    const name = segment.replace(/~1/g, '/').replace(/~0/g, '~')
    if (!(isSchemaObject(schema) || Array.isArray(schema)) || !hasOwn(schema, name)) return null
    schema = (schema as Record<string, unknown>)[name]
  }
  return { pointer, schema }
}

/**
 * A chain of `$ref`s and in-place applicators (allOf, anyOf, oneOf, not, if/then/else,
 * dependentSchemas) that leads from a schema back to itself without stepping into a member
 * of the value: the pointers on the loop, or null when there is none.
 */
export function inPlaceLoop (root: unknown): string[] | null {
  const base = baseOf(root)
  const state = new Map<string, 'open' | 'done'>()
  const trail: string[] = []
  const visit = (schema: unknown, pointer: string): string[] | null => {
    if (!isSchemaObject(schema)) return null
    const seen = state.get(pointer)
    if (seen === 'done') return null
    if (seen === 'open') return [...trail.slice(trail.indexOf(pointer)), pointer]
    state.set(pointer, 'open')
    trail.push(pointer)
    const next: Array<[unknown, string]> = []
    if (typeof schema.$ref === 'string') {
      const target = resolveLocalRef(root, base, schema.$ref)
      if (target) next.push([target.schema, target.pointer])
    }
    for (const keyword of IN_PLACE_ONE) if (hasOwn(schema, keyword)) next.push([schema[keyword], `${pointer}/${keyword}`])
    for (const keyword of IN_PLACE_LISTS) {
      const list = schema[keyword]
      if (Array.isArray(list)) list.forEach((item, i) => next.push([item, `${pointer}/${keyword}/${i}`]))
    }
    const dependent = schema.dependentSchemas
    if (isSchemaObject(dependent)) for (const name of Object.keys(dependent)) next.push([dependent[name], `${pointer}/dependentSchemas/${escapeSegment(name)}`])
    for (const [child, at] of next) {
      const loop = visit(child, at)
      if (loop) return loop
    }
    trail.pop()
    state.set(pointer, 'done')
    return null
  }
  let loop: string[] | null = null
  eachSubschema(root, '', (schema, pointer) => { loop ??= visit(schema, pointer) })
  return loop
}
