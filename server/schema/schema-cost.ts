// What a schema may cost to compile and to apply (docs/design.md §13b): bounds checked before
// Ajv sees the schema, so that neither a PUT nor any later write can hold the event loop for
// long, whatever the schema says.
//
// - Compiling: Ajv generates code per subschema (and per `properties` / `patternProperties`
//   member); 2,000 patternProperties took seconds to compile. At most MAX_SUBSCHEMAS.
// - Applying: validation is cheap per keyword, but a schema can apply many subschemas to one
//   value, and multiply that down the document: `allOf` of two `$ref`s to a definition that is
//   itself an `allOf` of two, or two branches each sending member `x` back to the root, apply
//   2^depth subschemas to a value at that depth; 2,000 patternProperties test every key of an
//   object against 2,000 regular expressions; `properties` with 1,000 names, applied to each of
//   300,000 array items, looks up 300 million members. WORK_PER_VALUE bounds, for every value
//   below the root of any document, the work one validation spends on it: a unit per
//   subschema applied and per entry of its properties, required, enum and dependentRequired,
//   PATTERN_TEST_COST per pattern its key is tested against. A write's validation then costs
//   at most WORK_PER_VALUE per value it holds (WORK_AT_ROOT for the root): linear in the
//   write, with a small constant.
import { MAX_VALUE_DEPTH } from '../../shared/json.js'
import { baseOf, eachSubschema, escapeSegment, hasOwn, isSchemaObject, resolveLocalRef, type SchemaObject } from './schema-refs.js'

/** Subschemas (schema objects, the root and every `properties` member included) one schema may have. */
export const MAX_SUBSCHEMAS = 500
/** Work units (below) one value may cost below the root: a document may hold many such values. */
export const WORK_PER_VALUE = 128
/** The root is one value per document: it may cost more (a top-level object with many properties). */
export const WORK_AT_ROOT = 4096
/** A regular expression test costs several times a keyword (V8's linear engine is slower). */
const PATTERN_TEST_COST = 4

/** Subschemas applied to the value itself (not to its members). */
const IN_PLACE_ONE = ['not', 'if', 'then', 'else']
const IN_PLACE_LISTS = ['allOf', 'anyOf', 'oneOf']
/** At most one of these applies to a given member (the one named, or the one at the index). */
const ONE_OF_MAP = { object: 'properties', array: 'prefixItems' } as const
/** Every one of these may apply to the same member. */
const EACH_MEMBER = { object: ['additionalProperties', 'unevaluatedProperties', 'propertyNames'], array: ['items', 'contains', 'unevaluatedItems'] } as const

interface Node {
  inPlace: string[]
  /** Per container kind: the subschemas of which at most one applies to a member, and those that all may. */
  oneOf: { object: string[], array: string[] }
  each: { object: string[], array: string[] }
  /** Patterns a member's key is tested against (patternProperties). */
  patterns: number
  /** Work of one application to the value itself: 1, plus each entry Ajv checks one by one. */
  self: number
}

/** Keywords whose entries Ajv checks one by one on every application (`properties`: is each there?). */
const ENTRY_LISTS = ['required', 'enum']
const ENTRY_MAPS = ['properties', 'dependentRequired']

/** Why the schema would cost too much, or null. Call after the in-place loop check (schema-refs.ts). */
export function costProblem (root: unknown): string | null {
  let count = 0
  const anchors = new Map<string, string>()
  eachSubschema(root, '', (schema, pointer) => {
    count++
    for (const keyword of ['$anchor', '$dynamicAnchor']) if (typeof schema[keyword] === 'string') anchors.set(`#${schema[keyword]}`, pointer)
  })
  if (count > MAX_SUBSCHEMAS) return `the schema has ${count} subschemas; at most ${MAX_SUBSCHEMAS}`
  const base = baseOf(root)
  const resolve = (ref: string): string | null => {
    const local = ref.startsWith('#') || base === null ? ref : ref.startsWith(`${base}#`) ? ref.slice(base.length) : ref
    return anchors.get(local) ?? resolveLocalRef(root, base, ref)?.pointer ?? null
  }
  const nodes = new Map<string, Node>()
  eachSubschema(root, '', (schema, pointer) => { nodes.set(pointer, nodeOf(schema, pointer, resolve)) })

  // work[d] of a subschema: the work one application of it causes at a value d levels below.
  let previous = new Map<string, number>()
  for (let depth = 0; depth <= MAX_VALUE_DEPTH; depth++) {
    const current = new Map<string, number>()
    // A boolean subschema (not a node) costs 1 where it applies and nothing below.
    const at = (pointer: string): number => depth === 0 ? 0 : previous.get(pointer) ?? (depth === 1 ? 1 : 0)
    const workOf = (pointer: string, trail: Set<string>): number => {
      const known = current.get(pointer)
      if (known !== undefined) return known
      const node = nodes.get(pointer)
      if (!node || trail.has(pointer)) return depth === 0 ? 1 : 0
      trail.add(pointer)
      let work = depth === 0 ? node.self : Math.max(memberWork(node, 'object', at), memberWork(node, 'array', at))
      for (const child of node.inPlace) work += workOf(child, trail)
      trail.delete(pointer)
      // Capped so that sums stay finite; anything above the bound is refused anyway.
      work = Math.min(work, Number.MAX_SAFE_INTEGER)
      current.set(pointer, work)
      return work
    }
    const rootWork = workOf('', new Set())
    const limit = depth === 0 ? WORK_AT_ROOT : WORK_PER_VALUE
    if (rootWork > limit) {
      return `the schema costs too much to check on one value (${rootWork > 1e9 ? 'over a billion' : rootWork} units of work at ${depth === 0 ? 'the root' : `depth ${depth}`}; at most ${limit}): use fewer properties or patternProperties in objects below the root, or fewer subschemas combined with allOf/anyOf/oneOf/$ref on the same value`
    }
    for (const pointer of nodes.keys()) workOf(pointer, new Set())
    previous = current
  }
  return null
}

function memberWork (node: Node, kind: 'object' | 'array', at: (pointer: string) => number): number {
  let work = 0
  for (const pointer of node.oneOf[kind]) work = Math.max(work, at(pointer))
  for (const pointer of node.each[kind]) work += at(pointer)
  return kind === 'object' ? work + node.patterns * PATTERN_TEST_COST : work
}

function nodeOf (schema: SchemaObject, pointer: string, resolve: (ref: string) => string | null): Node {
  const node: Node = { inPlace: [], oneOf: { object: [], array: [] }, each: { object: [], array: [] }, patterns: 0, self: 1 }
  for (const keyword of ENTRY_LISTS) if (Array.isArray(schema[keyword])) node.self += (schema[keyword] as unknown[]).length
  for (const keyword of ENTRY_MAPS) if (isSchemaObject(schema[keyword])) node.self += Object.keys(schema[keyword]).length
  for (const keyword of ['$ref', '$dynamicRef']) {
    const ref = schema[keyword]
    const target = typeof ref === 'string' ? resolve(ref) : null
    if (target !== null) node.inPlace.push(target)
  }
  for (const keyword of IN_PLACE_ONE) if (hasOwn(schema, keyword)) node.inPlace.push(`${pointer}/${keyword}`)
  for (const keyword of IN_PLACE_LISTS) {
    const list = schema[keyword]
    if (Array.isArray(list)) list.forEach((_, i) => node.inPlace.push(`${pointer}/${keyword}/${i}`))
  }
  const dependent = schema.dependentSchemas
  if (isSchemaObject(dependent)) for (const name of Object.keys(dependent)) node.inPlace.push(`${pointer}/dependentSchemas/${escapeSegment(name)}`)
  for (const kind of ['object', 'array'] as const) {
    const members = schema[ONE_OF_MAP[kind]]
    if (kind === 'object' && isSchemaObject(members)) for (const name of Object.keys(members)) node.oneOf.object.push(`${pointer}/properties/${escapeSegment(name)}`)
    if (kind === 'array' && Array.isArray(members)) members.forEach((_, i) => node.oneOf.array.push(`${pointer}/prefixItems/${i}`))
    for (const keyword of EACH_MEMBER[kind]) if (hasOwn(schema, keyword)) node.each[kind].push(`${pointer}/${keyword}`)
  }
  const patterns = schema.patternProperties
  if (isSchemaObject(patterns)) {
    for (const name of Object.keys(patterns)) node.each.object.push(`${pointer}/patternProperties/${escapeSegment(name)}`)
    node.patterns = Object.keys(patterns).length
  }
  return node
}
