// Ajv's errors in the API's form (docs/design.md §12): `path` is the dot path of the value at
// fault ("stock.apples", "" for the root), `message` says what is wrong with it.
import type { ErrorObject } from 'ajv/dist/2020.js'
import type { SchemaError } from '../../shared/errors.js'

/** Enough to fix a write; a document broken in thousands of places does not need them all. */
export const MAX_REPORTED_ERRORS = 50

/** The segments of a JSON pointer ("/stock/a~1b" → ["stock", "a/b"]). */
export function pointerSegments (pointer: string): string[] {
  if (pointer === '') return []
  return pointer.slice(1).split('/').map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'))
}

/** "/stock/apples" with `prefix` ["shop"] → "shop.stock.apples". */
function dotPath (prefix: readonly string[], instancePath: string): string {
  return [...prefix, ...pointerSegments(instancePath)].join('.')
}

function messageOf (error: ErrorObject): string {
  const message = error.message ?? `must pass "${error.keyword}"`
  // Ajv names the member it refuses in params only; people need it in the message.
  if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') {
    const member = (error.params as { additionalProperty?: string, unevaluatedProperty?: string })
    const name = member.additionalProperty ?? member.unevaluatedProperty
    if (name !== undefined) return `${message}: ${JSON.stringify(name)}`
  }
  return message
}

/** Collects violations, each once, at most MAX_REPORTED_ERRORS. */
export class Violations {
  readonly list: SchemaError[] = []
  private readonly seen = new Set<string>()

  add (errors: readonly ErrorObject[] | null | undefined, prefix: readonly string[] = []): void {
    for (const error of errors ?? []) {
      if (this.list.length >= MAX_REPORTED_ERRORS) return
      const violation = { path: dotPath(prefix, error.instancePath), message: messageOf(error) }
      const key = `${violation.path}\0${violation.message}`
      if (this.seen.has(key)) continue
      this.seen.add(key)
      this.list.push(violation)
    }
  }
}
