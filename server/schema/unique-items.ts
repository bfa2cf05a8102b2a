// `uniqueItems` in linear time (docs/design.md §13b). Ajv's own check compares every pair of
// items with a deep equality unless the items are declared scalars: 15,000 objects in one
// array held the event loop for seconds, and every later write validating that array paid it
// again. Here each item gets a canonical key (its JSON with object members sorted by name),
// and a Set finds the first repeat: O(size of the array) to build the keys, O(n) expected
// lookups. JSON Schema equality is JSON equality: member order does not matter, 1 and 1.0 are
// the same number, and so (as in Ajv) are 0 and -0.
import type { FuncKeywordDefinition } from 'ajv/dist/2020.js'
import type { ErrorObject } from 'ajv/dist/2020.js'

/** The item as JSON with object members sorted by name: equal JSON values, equal keys. */
export function canonicalKey (value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalKey).join(',')}]`
  const object = value as Record<string, unknown>
  const names = Object.keys(object).sort()
  return `{${names.map(name => `${JSON.stringify(name)}:${canonicalKey(object[name])}`).join(',')}}`
}

/** Indices [earlier, later] of the first item that repeats an earlier one, or null. */
export function firstDuplicate (items: readonly unknown[]): [number, number] | null {
  const seen = new Map<string, number>()
  for (let i = 0; i < items.length; i++) {
    const key = canonicalKey(items[i])
    const earlier = seen.get(key)
    if (earlier !== undefined) return [earlier, i]
    seen.set(key, i)
  }
  return null
}

type Validate = ((schema: boolean, data: unknown[]) => boolean) & { errors?: Array<Partial<ErrorObject>> }

const validate: Validate = (schema, data) => {
  validate.errors = []
  if (!schema) return true
  const duplicate = firstDuplicate(data)
  if (duplicate === null) return true
  const [j, i] = duplicate
  // Ajv's own wording and params, so messages do not change with the implementation.
  validate.errors = [{ keyword: 'uniqueItems', params: { i, j }, message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)` }]
  return false
}

/** Replaces Ajv's built-in `uniqueItems` (compile.ts removes that one first). */
export const uniqueItemsKeyword: FuncKeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  errors: true,
  validate
}
