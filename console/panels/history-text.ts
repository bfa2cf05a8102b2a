// Pure helpers of the History tab: how an entry and its actor read to people, and which paths
// differ between two versions of the content. test/console/pure.test.ts covers them.
import type { Actor } from '../../shared/actor.js'
import type { ChangeEntry } from '../../shared/events.js'
import type { Json } from '../../shared/json.js'

type ActorLike = Actor | { type: string, name?: string, sub?: string }

/** "@alice", "key deploy", "cli" — never a secret (entries carry none). */
export function actorName (actor: ActorLike | undefined): string {
  if (!actor) return 'unknown'
  if (actor.type === 'key') return `key ${actor.name ?? ''}`.trim()
  // An app user (docs/design.md §17) by its token's sub.
  if ('sub' in actor && actor.sub !== undefined) return `app ${actor.sub}`
  return ('name' in actor ? actor.name : undefined) ?? actor.type
}

/** What an entry did, without its value: "set price", "reverted to v3", "replaced everything". */
export function entryTarget (entry: Pick<ChangeEntry, 'op' | 'path' | 'index' | 'revertedTo'>): string {
  if (entry.op === 'revert') return entry.revertedTo === undefined ? 'the whole content' : `the content of v${entry.revertedTo}`
  if (entry.op === 'update') return 'the whole content'
  if (entry.path === undefined || entry.path === '') return '(root)'
  return entry.op === 'insert' && entry.index !== undefined ? `${entry.path} at ${entry.index}` : entry.path
}

export interface PathDifference {
  path: string
  kind: 'added' | 'removed' | 'changed'
}

/**
 * The dot paths where `now` differs from `then`, outermost first: a key only one side has, or
 * a scalar (or a container against a scalar) that changed. At most `limit`; `truncated` says
 * whether there were more.
 */
export function diffPaths (then: Json, now: Json, limit = 200): { differences: PathDifference[], truncated: boolean } {
  const differences: PathDifference[] = []
  let truncated = false
  const push = (difference: PathDifference): boolean => {
    if (differences.length >= limit) { truncated = true; return false }
    differences.push(difference)
    return true
  }
  const join = (path: string, key: string) => path === '' ? key : `${path}.${key}`
  const walk = (a: Json, b: Json, path: string): boolean => {
    const aObject = a !== null && typeof a === 'object'
    const bObject = b !== null && typeof b === 'object'
    if (!aObject || !bObject || Array.isArray(a) !== Array.isArray(b)) {
      return JSON.stringify(a) === JSON.stringify(b) ? true : push({ path, kind: 'changed' })
    }
    const aRecord = a as Record<string, Json>
    const bRecord = b as Record<string, Json>
    for (const key of Object.keys(aRecord)) {
      if (!Object.hasOwn(bRecord, key)) { if (!push({ path: join(path, key), kind: 'removed' })) return false }
    }
    for (const key of Object.keys(bRecord)) {
      if (!Object.hasOwn(aRecord, key)) { if (!push({ path: join(path, key), kind: 'added' })) return false }
    }
    for (const key of Object.keys(aRecord)) {
      if (Object.hasOwn(bRecord, key) && !walk(aRecord[key] as Json, bRecord[key] as Json, join(path, key))) return false
    }
    return true
  }
  walk(then, now, '')
  return { differences, truncated }
}
