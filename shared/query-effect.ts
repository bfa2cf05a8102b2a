// Which children of a queried path a committed change may alter (docs/design.md §16), decided
// by paths alone, as §15 decides what a change touches. A live result re-reads only those
// children; `all` (the path itself or an ancestor written, an update, a revert, an array
// element deleted or inserted so that every later index names another element) makes it
// rebuild. Pure: the same rules serve the server and any client.
import type { ChangeEntry } from './events.js'
import { pointerSegments } from './json-patch.js'
import { dotSegments } from './path.js'

export interface ChildrenTouched {
  /** Every child may have changed, or been renumbered. */
  all: boolean
  /** The children (keys) that may have changed, appeared or gone. */
  keys: Set<string>
  /** Elements may have been appended to the array (a push): the keys past its old end. */
  tail: boolean
}

type Kind = 'write' | 'remove' | 'add' | 'push'

const none = (): ChildrenTouched => ({ all: false, keys: new Set(), tail: false })

/**
 * What `change` may do to the children of `path` (segments). `wasArray`: the value at the
 * path was an array before the change, so removing or adding an element shifts the others.
 */
export function childrenTouched (change: Pick<ChangeEntry, 'op' | 'path' | 'operations'>, path: readonly string[], wasArray: boolean): ChildrenTouched {
  const touched = none()
  const at = (segments: readonly string[], kind: Kind) => touch(touched, segments, kind, path, wasArray)
  switch (change.op) {
    case 'update':
    case 'revert':
      touched.all = true
      break
    case 'batch':
      for (const operation of (change.operations ?? []) as Array<{ op: string, path: string }>) {
        if (operation.op === 'test') continue
        at(dotSegments(operation.path), batchKind(operation.op))
      }
      break
    case 'patch':
      for (const operation of (change.operations ?? []) as Array<{ op: string, path: string, from?: string }>) {
        if (operation.op === 'test') continue
        if (operation.op === 'move' && operation.from !== undefined) at(pointerSegments(operation.from), 'remove')
        at(pointerSegments(operation.path), operation.op === 'remove' ? 'remove' : operation.op === 'replace' ? 'write' : 'add')
      }
      break
    default:
      at(dotSegments(change.path ?? ''), batchKind(change.op))
  }
  return touched
}

function batchKind (op: string): Kind {
  if (op === 'delete') return 'remove'
  if (op === 'push') return 'push'
  // insert's path is the array itself: it lands on the queried path (all) or above it.
  return 'write'
}

function touch (touched: ChildrenTouched, segments: readonly string[], kind: Kind, path: readonly string[], wasArray: boolean): void {
  if (touched.all) return
  const common = Math.min(segments.length, path.length)
  for (let i = 0; i < common; i++) if (segments[i] !== path[i]) return
  if (segments.length <= path.length) {
    // At the queried path or above it: only a push onto the path itself is cheap.
    if (segments.length === path.length && kind === 'push') touched.tail = true
    else touched.all = true
    return
  }
  const key = segments[path.length] as string
  if (segments.length === path.length + 1 && wasArray) {
    // A JSON Patch "add" at "-" appends; any other add or remove of an element renumbers the rest.
    if (kind === 'add' && key === '-') { touched.tail = true; return }
    if (kind === 'remove' || kind === 'add') { touched.all = true; return }
  }
  touched.keys.add(key)
}
