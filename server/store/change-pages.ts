// How much of the change log one read hands out (docs/design.md §13b): a page of
// `GET …/content/changes`, a Socket.IO `since` ack and an SSE replay burst each carry at most
// CHANGES_PAGE_BYTES of entries, counted as the UTF-8 length of each entry's JSON as sent; an
// entry larger than that comes alone. Counting entries alone let 1000 revert entries of a
// 7 MB document each be read, held and sent at once (issue 26).
//
// The stores stop reading at the budget rather than reading a page and cutting it: SQLite
// measures the stored entries without loading them (content-log.ts), MongoDB stops its cursor.

/** CHANGES_PAGE_BYTES' default (server/config.ts), for stores opened without configuration. */
export const DEFAULT_CHANGES_PAGE_BYTES = 1_048_576

/** Admits entries into one page, in order, while their bytes fit; the first always fits. */
export class PageBudget {
  private used = 0
  private count = 0

  constructor (private readonly maxBytes: number) {}

  /** Counts an entry of `bytes` into the page when it fits; false means the page ends before it. */
  admit (bytes: number): boolean {
    if (this.count > 0 && this.used + bytes > this.maxBytes) return false
    this.used += bytes
    this.count += 1
    return true
  }
}

/**
 * The bytes a stored entry (change-entry.ts keeps it without `project`) gains when the
 * reader puts `"project":"<ref>",` in front of its members (parseStoredEntry): stored length
 * plus this is the length of the entry's JSON as sent.
 */
export function projectMemberBytes (project: string): number {
  return Buffer.byteLength(`"project":${JSON.stringify(project)},`)
}
