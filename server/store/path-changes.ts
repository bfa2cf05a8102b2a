// The history of one path (docs/design.md §15): the change log's entries that touch it, each
// as a path subscription is sent it (shared/live-path.ts), a page at a time and bounded as
// every change-log read is (§13b): at most `limit` entries, at most CHANGES_PAGE_BYTES of them
// as sent (the first always). Shared by `GET …/content/changes?path=`, the SSE and Socket.IO
// path resumes; the store finds the candidates through its path index (readPathEntries).
import type { ChangeEntry } from '../../shared/events.js'
import { changeTouches, pathChangeOf, projectedChange, valueAtPath, type PathChange } from '../../shared/live-path.js'
import { dotSegments } from '../../shared/path.js'
import { PageBudget } from './change-pages.js'
import type { ContentStorage, ProjectRecord } from './types.js'

/**
 * Projections that need the content at their version (readContentAt: a checkpoint plus a
 * replay) that one page may make; past them the page ends (`more`). Most projections come
 * from the entry alone (an update, a set above the path).
 */
export const CONTENT_READS_PER_PAGE = 8

export interface PathChangesPage {
  /** The project's current version when the page was read. */
  version: number
  changes: PathChange[]
  more: boolean
  /**
   * The page ended at a change whose projection needs the content, and `contentReads` allowed
   * none: a resume answers with a snapshot instead (§15).
   */
  needsContent: boolean
}

export interface PathChangesRequest {
  path: string
  since: number
  limit: number
  pageBytes: number
  /** How many projections may read the content (CONTENT_READS_PER_PAGE; 0 for a resume). */
  contentReads: number
}

type Reader = Pick<ContentStorage, 'readPathEntries' | 'readContentAt'>

/** What is sent for one entry that touches the path; null when it takes a content read and none is left. */
async function sentFor (store: Reader, project: ProjectRecord, entry: ChangeEntry, path: string, reads: { left: number }): Promise<PathChange | null> {
  const sent = pathChangeOf(entry, path)
  if (sent) return sent
  if (reads.left === 0) return null
  reads.left -= 1
  const snapshot = await store.readContentAt(project.id, entry.version)
  // A copy: the snapshot may be the store's live document, which later writes change in place.
  const after = valueAtPath(snapshot.content, dotSegments(path))
  return projectedChange(entry, path, after.exists ? { exists: true, value: structuredClone(after.value) } : after)
}

/**
 * One page of the path's history after `since`. Throws as readChanges (INVALID_VERSION,
 * HISTORY_EXPIRED, PROJECT_NOT_FOUND). Candidates that turn out not to touch the path are
 * skipped; a page of only such candidates is followed by the next one, so an answer with
 * `more` always holds at least one change to continue from.
 */
export async function readPathChanges (store: Reader, project: ProjectRecord, request: PathChangesRequest): Promise<PathChangesPage> {
  const segments = dotSegments(request.path)
  const budget = new PageBudget(request.pageBytes)
  const reads = { left: request.contentReads }
  const changes: PathChange[] = []
  let since = request.since
  for (;;) {
    const page = await store.readPathEntries(project, request.path, since, request.limit)
    for (const entry of page.entries) {
      since = entry.version
      if (!changeTouches(entry, segments)) continue
      const sent = await sentFor(store, project, entry, request.path, reads)
      if (!sent) return { version: page.version, changes, more: true, needsContent: true }
      if (changes.length === request.limit || !budget.admit(Buffer.byteLength(JSON.stringify(sent)))) {
        return { version: page.version, changes, more: true, needsContent: false }
      }
      changes.push(sent)
    }
    if (!page.more || changes.length > 0) return { version: page.version, changes, more: page.more, needsContent: false }
  }
}
