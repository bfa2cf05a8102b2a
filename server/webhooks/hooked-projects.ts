// Which projects have webhooks, as this node knows it, so that a change to a project without
// any costs the webhooks nothing: recent-changes.ts keeps (and serializes) only these
// projects' changes, and only they wake the dispatcher (whose scan is a store query).
//
// The set is a shortcut, never the authority: deliveries are driven by the store (the
// dispatcher's poll finds every webhook with work, docs/design.md §11), so a project missing
// here for a while only means its changes are read from the log instead of taken from memory,
// and found by the next poll instead of at once. A project kept here after its last webhook
// went costs a little memory and a wasted scan. How it stays current, on every node:
// - loaded from the store when deliveries start (none kept before: nothing delivers then),
//   and again every REFRESH_MS (a webhook made by the CLI, a message lost while Redis was away);
// - a create or delete on this node updates it at once and tells the other nodes through the
//   change feed's relay (server/feed/), which ask the store again for that one project;
// - every webhook the dispatcher's poll finds due adds its project.
import type { Store } from '../store/types.js'

/** How often the whole set is read again from the store. */
export const REFRESH_MS = 60_000

export class HookedProjects {
  private ids = new Set<string>()
  private isLoaded = false
  /** Projects changed while a load's query ran: their membership here is newer than the query's. */
  private touched: Set<string> | null = null
  /** Counts add(): a recheck that saw no webhook does not undo an add made while it asked. */
  private adds = 0

  constructor (private readonly store: Pick<Store, 'webhooks'>) {}

  /** True when the project may have a webhook; false before the first load. */
  has (projectId: string): boolean {
    return this.isLoaded && this.ids.has(projectId)
  }

  /** Read from the store at least once (deliveries have started). */
  get loaded (): boolean {
    return this.isLoaded
  }

  get size (): number {
    return this.ids.size
  }

  /** Reads the whole set from the store (at start, then every REFRESH_MS). */
  async load (): Promise<void> {
    const touched = this.touched = new Set()
    try {
      const fresh = new Set(await this.store.webhooks.projectIds())
      for (const id of touched) {
        if (this.ids.has(id)) fresh.add(id)
        else fresh.delete(id)
      }
      this.ids = fresh
      this.isLoaded = true
    } finally {
      if (this.touched === touched) this.touched = null
    }
  }

  /** The project has a webhook (one was created, or the poll found one due). */
  add (projectId: string): void {
    this.touched?.add(projectId)
    this.adds += 1
    this.ids.add(projectId)
  }

  /** A webhook of the project was created or deleted, here or on another node: asks the store. */
  async recheck (projectId: string): Promise<void> {
    const adds = this.adds
    const left = await this.store.webhooks.list(projectId, { after: null, limit: 1 })
    this.touched?.add(projectId)
    if (left.length > 0) this.ids.add(projectId)
    else if (this.adds === adds) this.ids.delete(projectId)
  }
}
