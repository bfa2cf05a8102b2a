// How a content schema's refusals show (docs/schema.md): each `{path, message}` the server
// sent with SCHEMA_VIOLATION, the path as a dot path ("" is the whole content).
import type { SchemaError } from '../shared/client/index.js'

export function SchemaErrorList ({ errors }: { errors: SchemaError[] }) {
  if (errors.length === 0) return null
  return (
    <ul class="schema-errors">
      {errors.map((error, i) => (
        <li key={`${i}:${error.path}`}><span class="mono">{error.path === '' ? '(the whole content)' : error.path}</span>: {error.message}</li>
      ))}
    </ul>
  )
}
