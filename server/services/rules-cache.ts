// [rules, issue 31] A project's trust setting and compiled rules, kept per process so an app
// user's request does not read them from the store (docs/design.md §17, docs/rules.md).
//
// What is kept is dropped when the project's rules or trust setting change: the service that
// changes them announces `rules-changed` as an access event, which the change feed hands to
// this node at once and (through its Redis relay) to every other node (server/feed/).
// A message lost on the way (Redis away) or never sent (a process without the feed) is why
// an entry is also read again once it is MAX_AGE_MS old: a change of rules takes effect on
// every node within that bound, whatever happens to the message.
//
// Such a late read that finds other revisions than the entry it replaces calls `changed`, as
// the message would have (live streams are re-decided); the access re-check
// (access-recheck.ts) asks for the projects of open app streams every few seconds, so this
// happens even on a node no request reaches.
//
// A load that started before a change is never kept after it: the change deletes the entry
// that holds the load's promise, so later requests start a load of their own.
import type { AppAuthRecord } from '../store/app-rules-types.js'

/** How long a kept entry is trusted without a `rules-changed` message (the §13b bound for access). */
export const MAX_AGE_MS = 5000
/** Projects kept per process; the least recently used goes first. */
export const PROJECTS_KEPT = 1000

export interface ProjectTrust<R> {
  auth: AppAuthRecord | null
  rules: R | null
  /** The trust setting's and the rules' revisions together: what a late read compares. */
  revision: string
}

interface Entry<R> {
  value: Promise<ProjectTrust<R>>
  loadedAt: number
}

export class RulesCache<R> {
  private readonly entries = new Map<string, Entry<R>>()

  constructor (
    private readonly load: (projectId: string) => Promise<ProjectTrust<R>>,
    private readonly now: () => number,
    private readonly kept = PROJECTS_KEPT,
    private readonly maxAgeMs = MAX_AGE_MS,
    /** A read after MAX_AGE_MS found other revisions than the entry it replaced: a change no message told of. */
    private readonly changed: (projectId: string) => void = () => {}
  ) {}

  get (projectId: string): Promise<ProjectTrust<R>> {
    const now = this.now()
    const entry = this.entries.get(projectId)
    if (entry && now - entry.loadedAt < this.maxAgeMs) {
      // Most recently used last: the first entry is the one to drop.
      this.entries.delete(projectId)
      this.entries.set(projectId, entry)
      return entry.value
    }
    const fresh: Entry<R> = { value: this.load(projectId), loadedAt: now }
    this.entries.delete(projectId)
    if (this.entries.size >= this.kept) this.entries.delete(this.entries.keys().next().value as string)
    this.entries.set(projectId, fresh)
    // A failed load is not kept: the next request tries again.
    fresh.value.catch(() => { if (this.entries.get(projectId) === fresh) this.entries.delete(projectId) })
    if (entry) {
      // Still the entry kept (no forget since): a change was missed if the revisions differ.
      Promise.all([entry.value, fresh.value]).then(([before, after]) => {
        if (before.revision !== after.revision && this.entries.get(projectId) === fresh) this.changed(projectId)
      }, () => {})
    }
    return fresh.value
  }

  /** Reads again what is older than MAX_AGE_MS among these projects' entries (the access re-check's call). */
  refresh (projectIds: Iterable<string>): void {
    const now = this.now()
    for (const projectId of projectIds) {
      const entry = this.entries.get(projectId)
      if (entry && now - entry.loadedAt >= this.maxAgeMs) this.get(projectId).catch(() => {})
    }
  }

  /** The project's rules or trust setting changed (or it is gone): read them again when next asked. */
  forget (projectId: string): void {
    this.entries.delete(projectId)
  }

  get size (): number {
    return this.entries.size
  }
}
