// The change log's entries (docs/design.md §9) as the stores build, keep and replay them.
// Shared by every store so an entry looks the same whichever store wrote it.
//
// A store keeps an entry without its `project` (the log is per project; a reader adds the
// reference) and in the order of §9: version, op, path, value, index, operations, revertedTo, at, actor.
// The embedded store serializes it by concatenation, reusing the value's JSON that the write
// already made to measure the content (a 1 MiB update is not serialized twice).
import type { Actor, ChangeEntry, ChangeOp } from '../../shared/events.js'
import { operationOfChange } from '../../shared/events.js'
import type { Json } from '../../shared/json.js'
import { operationsOfEntry, type ContentOperation } from '../../shared/compound.js'
import { formatPath } from '../../shared/path.js'
import { formatProjectRef } from '../../shared/project-ref.js'
import { valueEnd } from './json-members.js'
import type { ProjectRecord, StoreOperation } from './types.js'

/** What an entry says was done, besides its value, version, time and actor. */
export interface ChangeParts {
  op: ChangeOp
  /** Dot path (docs/design.md §2), for path operations. */
  path?: string
  index?: number
  revertedTo?: number
  /** batch and patch: the operations as the entry lists them (docs/design.md §10). */
  operations?: Json[]
}

/** "@alice/demo": the reference entries carry, from the project's owner and slug. */
export function projectRefOf (project: Pick<ProjectRecord, 'ownerName' | 'slug'>): string {
  return formatProjectRef(project.ownerName, project.slug)
}

export function changePartsOf (operation: StoreOperation): ChangeParts {
  switch (operation.op) {
    case 'revert': return { op: 'revert', revertedTo: operation.version }
    case 'batch':
    case 'patch': return { op: operation.op, operations: operationsOfEntry(operation) }
    case 'update': return { op: 'update' }
    case 'insert': return { op: 'insert', path: formatPath(operation.path), index: operation.index }
    default: return { op: operation.op, path: formatPath(operation.path) }
  }
}

/**
 * The entry as stored (without `project`), as JSON. `valueJson` is the value already
 * serialized (absent for delete); `actorJson` the actor serialized. Same bytes as
 * JSON.stringify of the entry object: a test checks it.
 */
export function serializeEntry (version: number, parts: ChangeParts, valueJson: string | undefined, at: string, actorJson: string): string {
  const { before, after } = entryAround(version, parts, valueJson !== undefined, at, actorJson)
  return valueJson === undefined ? before + after : before + valueJson + after
}

/**
 * serializeEntry's text on either side of the value's JSON (`before` ends with `"value":`
 * when `withValue`), so a caller can make the entry and find the value inside it.
 */
export function entryAround (version: number, parts: ChangeParts, withValue: boolean, at: string, actorJson: string): { before: string, after: string } {
  let before = '{"version":' + version + ',"op":"' + parts.op + '"'
  if (parts.path !== undefined) before += ',"path":' + JSON.stringify(parts.path)
  if (withValue) before += ',"value":'
  let after = ''
  if (parts.index !== undefined) after += ',"index":' + parts.index
  if (parts.operations !== undefined) after += ',"operations":' + JSON.stringify(parts.operations)
  if (parts.revertedTo !== undefined) after += ',"revertedTo":' + parts.revertedTo
  return { before, after: after + ',"at":' + JSON.stringify(at) + ',"actor":' + actorJson + '}' }
}

/**
 * A value known by its JSON text, parsed only when something reads it. Consumers of the
 * change feed send the change's JSON text (server/feed/wire.ts) and never read the value, so
 * a write's value is not parsed again for them (issue 35: parsed once per write).
 */
export class LazyValue {
  constructor (readonly json: string) {}
}

/** The entry as listeners and readers get it, `project` first. */
export function entryOf (project: string, version: number, parts: ChangeParts, value: Json | LazyValue | undefined, at: string, actor: Actor): ChangeEntry {
  // Built member by member so the members come in §9's order (JSON keeps insertion order).
  const entry = { project, version, op: parts.op } as ChangeEntry
  if (parts.path !== undefined) entry.path = parts.path
  if (value instanceof LazyValue) defineLazyValue(entry, value.json)
  else if (value !== undefined) entry.value = value
  if (parts.index !== undefined) entry.index = parts.index
  // A value of the listener's own: later changes may alter the values the operations wrote.
  if (parts.operations !== undefined) entry.operations = structuredClone(parts.operations)
  if (parts.revertedTo !== undefined) entry.revertedTo = parts.revertedTo
  entry.at = at
  entry.actor = actor
  return entry
}

/**
 * `entry.value` as an enumerable member in its place, parsed from `json` on first read and
 * then an ordinary data member (so JSON.stringify, spreading and deep equality all see the value).
 */
function defineLazyValue (entry: ChangeEntry, json: string): void {
  const settle = (value: Json | undefined) => {
    Object.defineProperty(entry, 'value', { value, enumerable: true, writable: true, configurable: true })
  }
  Object.defineProperty(entry, 'value', {
    enumerable: true,
    configurable: true,
    get () {
      const value = JSON.parse(json) as Json
      settle(value)
      return value
    },
    set (value: Json | undefined) { settle(value) }
  })
}

/**
 * The `value` of a stored update or revert entry as the JSON text it is stored as, without
 * parsing the entry: serializeEntry writes it right after `op` (they have no path).
 */
export function valueJsonOf (json: string): string {
  const prefix = /^\{"version":\d+,"op":"(?:update|revert)","value":/.exec(json)
  if (!prefix) return JSON.stringify((JSON.parse(json) as { value: Json }).value)
  return json.slice(prefix[0].length, valueEnd(json, prefix[0].length))
}

/** The operation to replay a stored entry with applyOperation (revert replays as update). */
export function replayOperationOf (json: string): ContentOperation {
  return operationOfChange(JSON.parse(json) as ChangeEntry)
}
