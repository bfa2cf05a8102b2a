// The path index of the change log on MongoDB (docs/design.md §15): each `changes` document
// carries `touchedPaths`, the paths its change writes (shared/live-path.ts indexPathsOf),
// indexed with the project and version. Pure, so the filter is checked with mingo
// (test/mongodb/path-index.test.ts).
import type { Document } from 'mongodb'
import { pathLookup } from '../../../shared/live-path.js'
import type { ChangeEntry } from '../../../shared/events.js'
import { PageBudget } from '../change-pages.js'
import { entryOfChangeDoc, type ChangeDoc } from './history.js'

/** The field, and the index that serves the filter below. */
export const TOUCHED_PATHS_FIELD = 'touchedPaths'
export const PATH_INDEX: Document = { projectId: 1, [TOUCHED_PATHS_FIELD]: 1, version: 1 }

/**
 * The changes after `since`, up to `version`, that may touch `path`: recorded at the root,
 * an ancestor or the path itself, or below it (`$elemMatch`: one element in the range; a
 * bare range on an array field may match with two different elements). Documents written
 * before the index have no field: they are all candidates.
 */
export function pathFilter (projectId: string, path: string, since: number, version: number): Document {
  const lookup = pathLookup(path)
  return {
    projectId,
    version: { $gt: since, $lte: version },
    $or: [
      { [TOUCHED_PATHS_FIELD]: { $in: lookup.exact } },
      { [TOUCHED_PATHS_FIELD]: { $elemMatch: { $gte: lookup.below, $lt: lookup.belowEnd } } },
      { [TOUCHED_PATHS_FIELD]: { $exists: false } }
    ]
  }
}

/**
 * One page of candidates from a cursor in version order: at most `limit` entries and at most
 * `maxBytes` of them as JSON (the first always). Stops reading where the page ends and closes
 * the cursor.
 */
export async function readPathPage (cursor: AsyncIterable<ChangeDoc> & { close (): Promise<void> }, project: string, limit: number, maxBytes: number): Promise<{ entries: ChangeEntry[], more: boolean }> {
  const entries: ChangeEntry[] = []
  const budget = new PageBudget(maxBytes)
  try {
    for await (const doc of cursor) {
      if (entries.length === limit) return { entries, more: true }
      const entry = entryOfChangeDoc(project, doc)
      if (!budget.admit(Buffer.byteLength(JSON.stringify(entry)))) return { entries, more: true }
      entries.push(entry)
    }
    return { entries, more: false }
  } finally {
    await cursor.close()
  }
}
