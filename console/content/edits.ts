// Every edit the console makes is one content operation of the API (docs/api.md "Content"),
// sent with If-Match on the version the user was looking at (the SDK's ifVersion). When the
// content moved on meanwhile, the server answers 412 PRECONDITION_FAILED and nothing
// changes: the view shows what changed and offers to send the same edit again.
import { ContentdError, type Json, type JsonObject, type ProjectClient, type WriteResult } from '../../shared/client/index.js'
import { keyProblem } from '../../shared/path.js'
import { preview } from './value-input.js'

export type Edit =
  | { op: 'set', path: string, value: Json }
  | { op: 'delete', path: string }
  | { op: 'increment' | 'decrement', path: string, by: number }
  | { op: 'push', path: string, value: Json }
  | { op: 'insert', path: string, index: number, value: Json }
  | { op: 'update', value: JsonObject }

export function sendEdit (project: ProjectClient, edit: Edit, ifVersion: number): Promise<WriteResult> {
  const options = { ifVersion }
  switch (edit.op) {
    case 'set': return project.set(edit.path, edit.value, options)
    case 'delete': return project.delete(edit.path, options)
    case 'increment': return project.increment(edit.path, edit.by, options)
    case 'decrement': return project.decrement(edit.path, edit.by, options)
    case 'push': return project.push(edit.path, edit.value, options)
    case 'insert': return project.insert(edit.path, edit.index, edit.value, options)
    case 'update': return project.update(edit.value, options)
  }
}

/** "set stats.label to "hello"", for people. */
export function describeEdit (edit: Edit): string {
  switch (edit.op) {
    case 'set': return `set ${edit.path} to ${preview(edit.value, 60)}`
    case 'delete': return `delete ${edit.path}`
    case 'increment': return `add ${edit.by} to ${edit.path}`
    case 'decrement': return `subtract ${edit.by} from ${edit.path}`
    case 'push': return `append ${preview(edit.value, 60)} to ${edit.path}`
    case 'insert': return `insert ${preview(edit.value, 60)} at ${edit.path}.${edit.index}`
    case 'update': return 'replace the whole content'
  }
}

export function isConflict (error: unknown): boolean {
  return error instanceof ContentdError && error.code === 'PRECONDITION_FAILED'
}

/** The path's segments; "" is the root. Keys never contain "." (docs/design.md §3). */
export function segmentsOf (path: string): string[] {
  return path === '' ? [] : path.split('.')
}

export function childPath (parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`
}

/** The value at a dot path, or undefined when nothing is there. */
export function valueAt (doc: Json | undefined, path: string): Json | undefined {
  let node: Json | undefined = doc
  for (const segment of segmentsOf(path)) {
    if (node === null || typeof node !== 'object') return undefined
    node = Array.isArray(node) ? node[Number(segment)] : Object.prototype.hasOwnProperty.call(node, segment) ? node[segment] : undefined
  }
  return node
}

/** Why `key` cannot be a new object key (docs/design.md §3), or null when it can. */
export function newKeyProblem (key: string): string | null {
  if (key.includes('.')) return 'The key contains "." (a dot separates path segments)'
  const problem = keyProblem(key)
  return problem === null ? null : `The key ${problem}`
}
