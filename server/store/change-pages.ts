// How much of the change log one read hands out (docs/design.md §13b): a page of
// `GET …/content/changes`, a Socket.IO `since` ack and an SSE replay burst each carry at most
// CHANGES_PAGE_BYTES of entries, counted as the UTF-8 length of each entry's JSON as sent; an
// entry larger than that comes alone. Counting entries alone let 1000 revert entries of a
// 7 MB document each be read, held and sent at once (issue 26).
//
// The stores stop reading at the budget rather than reading a page and cutting it: SQLite
// pages by the sizes it keeps beside the entries, never reading an entry to measure it
// (content-log.ts), MongoDB stops its cursor. A page goes to the wire as the entries' JSON
// text (ChangesJsonPage): relaying a 7 MB entry is a copy, not a parse and a serialization.
import type { ChangeEntry } from '../../shared/events.js'
import type { ChangesJsonPage, ChangesPage, EntryJson } from './types.js'

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
 * reader puts `"project":"<ref>",` in front of its members (projectMemberOf): stored length
 * plus this is the length of the entry's JSON as sent.
 */
export function projectMemberBytes (project: string): number {
  return Buffer.byteLength(projectMemberOf(project))
}

/** `"project":"<ref>",`: the member put in front of a stored entry's members to send it. */
export function projectMemberOf (project: string): string {
  return `"project":${JSON.stringify(project)},`
}

/**
 * The page's entries as a JSON array, `project` put in each, between `before` and `after`,
 * into one Buffer: the stored entries are copied, never parsed or serialized.
 */
function withEntries (page: ChangesJsonPage, before: string, after: string, separator: string, frame: (entry: EntryJson) => string = () => ''): Buffer {
  const opening = Buffer.from('{' + projectMemberOf(page.project))
  const parts: Buffer[] = [Buffer.from(before)]
  page.entries.forEach((entry, i) => {
    const head = (i > 0 ? separator : '') + frame(entry)
    if (head !== '') parts.push(Buffer.from(head))
    parts.push(opening, entry.stored.subarray(1))
  })
  parts.push(Buffer.from(after))
  return Buffer.concat(parts)
}

/**
 * `GET …/content/changes`' answer, `{version, changes, more}`: the same text as JSON.stringify
 * of readChanges' page.
 */
export function changesPageBody (page: ChangesJsonPage): Buffer {
  return withEntries(page, `{"version":${page.version},"changes":[`, `],"more":${page.more}}`, ',')
}

/** A subscribe's resume ack, `{ok, project, version, changes, more?}`, as the JSON of that object. */
export function resumeAckJson (page: ChangesJsonPage, project: string, version: number, more: boolean): string {
  return withEntries(page, `{"ok":true,"project":${JSON.stringify(project)},"version":${version},"changes":[`, `]${more ? ',"more":true' : ''}}`, ',').toString()
}

/** The page's entries as SSE `change` events (docs/design.md §9), one after another. */
export function changeEvents (page: ChangesJsonPage): Buffer {
  if (page.entries.length === 0) return Buffer.alloc(0)
  return withEntries(page, '', '\n\n', '\n\n', entry => `id: ${entry.version}\nevent: change\ndata: `)
}

/** The bytes of a page's entries as a JSON array, from their sizes. */
export function entriesArrayBytes (entries: readonly EntryJson[]): number {
  return entries.reduce((sum, entry) => sum + entry.bytes, 0) + Math.max(entries.length - 1, 0) + 2
}

/** The entries of a JSON page, parsed: readChanges' page from readChangesJson's. */
export function parsedPage (page: ChangesJsonPage): ChangesPage {
  const opening = '{' + projectMemberOf(page.project)
  return { version: page.version, changes: page.entries.map(entry => JSON.parse(opening + entry.stored.toString('utf8', 1)) as ChangeEntry), more: page.more }
}
