// What the console reads of one path's history (docs/design.md §15): the server's
// `changes?path=` (the SDK's `project.ref(path).changes()`), which finds a path's changes
// through the log's path index. That API pages forward from a version, and the console shows
// the newest first, so the newest changes before a version are read window by window going
// back (each window a forward read of its own range), the window growing while it finds too
// few, so a path written rarely in a long log costs a few reads, not a scan. Also: which of
// the keys made in this tab may watch a path. No DOM: test/console/path-history.test.ts.
import type { CreatedApiKey, PathChange, PathChangesPage } from '../../shared/client/index.js'
import { ContentdError } from '../../shared/client/index.js'
import { inScope } from '../snippets.js'

/** What reads a path's history forward from `since` (`ref.changes` of the SDK). */
export type PathChangesReader = (options: { since: number, limit: number }) => AsyncIterable<PathChangesPage>

/** Changes per request. */
const REQUEST_LIMIT = 100
/** The first window (versions) looked at, and how much it grows while it finds too few. */
const FIRST_WINDOW = 64
const GROWTH = 4
/** A window holding more changes than this is read again narrower (bounds one window's reads). */
const WINDOW_MOST = 500

class TooMany extends Error {}

/** The changes with a version in (lo, hi], oldest first; TooMany past WINDOW_MOST. */
async function range (read: PathChangesReader, lo: number, hi: number): Promise<PathChange[]> {
  const found: PathChange[] = []
  for await (const page of read({ since: lo, limit: REQUEST_LIMIT })) {
    for (const change of page.changes) if (change.version <= hi) found.push(change)
    if (found.length > WINDOW_MOST) throw new TooMany()
    const last = page.changes.at(-1)
    if (last === undefined || last.version >= hi) break
  }
  return found
}

export interface PathHistoryPart {
  /** Oldest first: every change touching the path with a version from `from` to the `upTo` asked. */
  changes: PathChange[]
  /** The first version read (1: the whole log). */
  from: number
  /** The server keeps no changes before `from` (HISTORY_EXPIRED). */
  expired: boolean
}

/**
 * At least `count` of the changes touching the path up to version `upTo` (fewer when the log
 * has fewer), the newest ones: every change in the versions from `from` on.
 */
export async function newestPathChanges (read: PathChangesReader, upTo: number, count: number): Promise<PathHistoryPart> {
  const changes: PathChange[] = []
  let hi = upTo
  let window = FIRST_WINDOW
  let expired = false
  while (changes.length < count && hi > 0) {
    const lo = Math.max(0, hi - window)
    try {
      changes.unshift(...await range(read, lo, hi))
    } catch (error) {
      // Narrower, until a window is one version (which cannot hold too many, nor be partly expired).
      const narrower = error instanceof TooMany || (error instanceof ContentdError && error.code === 'HISTORY_EXPIRED')
      if (!narrower) throw error
      if (window <= 1) {
        if (error instanceof TooMany) throw error
        expired = true
        break
      }
      window = Math.max(1, Math.floor(window / GROWTH))
      continue
    }
    hi = lo
    window *= GROWTH
  }
  return { changes, from: hi + 1, expired }
}

/**
 * Every change touching the path after version `since`, oldest first (what came in live), and
 * the project's version when the last page was read: nothing else touched the path up to it.
 */
export async function pathChangesAfter (read: PathChangesReader, since: number): Promise<{ changes: PathChange[], version: number }> {
  const changes: PathChange[] = []
  let version = since
  for await (const page of read({ since, limit: REQUEST_LIMIT })) {
    changes.push(...page.changes)
    version = Math.max(version, page.version)
  }
  return { changes, version }
}

/** Whether `path` is `scope` or below it. */
function within (path: string, scope: string): boolean {
  return scope === '' || path === scope || path.startsWith(`${scope}.`)
}

/**
 * The keys made in this tab (only their secrets are known) that may watch `path` of
 * `project`: reaching the project, not expired, and, when narrowed to paths, with the path at
 * or below one of them (docs/design.md §15; a key narrowed only by ops may watch any path).
 */
export function watchingKeys (created: readonly CreatedApiKey[], project: string, path: string, now = Date.now()): CreatedApiKey[] {
  return created.filter(k => inScope(k, project) && (k.expiresAt === null || Date.parse(k.expiresAt) > now) &&
    (k.paths === null || k.paths.some(scope => within(path, scope))))
}
