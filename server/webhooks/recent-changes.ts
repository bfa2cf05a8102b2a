// The changes webhooks are most likely to deliver next, as the change feed (server/feed/)
// handed them over: the last few of the projects that have webhooks (hooked-projects.ts),
// this node's and the other nodes'. A change to any other project costs nothing here: it is
// not kept, not serialized, and wakes no dispatcher (whose scan is a store query). The
// dispatcher still reads the log for which versions follow a webhook's cursor (the log is
// the authority on order and retention, docs/design.md §11); for each one it finds here it
// uses the feed's entry and its one wire form (server/feed/wire.ts) instead of parsing the
// stored entry and serializing it again (issue 35: one parse, one serialization per write).
//
// Bounded by count and by the bytes of the changes' JSON text; the oldest go first. A change
// not found here (after a restart, or pushed out by newer ones) is read from the log.
import type { ChangeEntry } from '../../shared/events.js'
import type { ChangeFeed } from '../feed/change-feed.js'
import { wireOf } from '../feed/wire.js'
import type { HookedProjects } from './hooked-projects.js'

export interface RecentLimits {
  entries: number
  /** Characters of the changes' JSON text held at most. */
  chars: number
}

/** Enough for every webhook to find a burst of writes, small beside the process's other caches. */
export const RECENT_LIMITS: RecentLimits = { entries: 1000, chars: 8 * 1024 * 1024 }

const keyOf = (projectId: string, version: number) => `${projectId}\n${version}`

export class RecentChanges {
  private readonly kept = new Map<string, { change: ChangeEntry, chars: number }>()
  private chars = 0
  private readonly listeners = new Set<() => void>()
  private readonly stop: () => void

  constructor (feed: Pick<ChangeFeed, 'subscribeAll'>, private readonly hooked: Pick<HookedProjects, 'has'>, private readonly limits: RecentLimits = RECENT_LIMITS) {
    // The feed hands over only the projects with webhooks (and checks that before making a wire form).
    this.stop = feed.subscribeAll((projectId, change) => this.keep(projectId, change), projectId => hooked.has(projectId))
  }

  /** The feed's entry for that version of the project, if it is still held. */
  get (projectId: string, version: number): ChangeEntry | undefined {
    return this.kept.get(keyOf(projectId, version))?.change
  }

  /** Told of every change to a project with webhooks (the dispatcher looks for work). */
  onChange (listener: () => void): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  get size (): number {
    return this.kept.size
  }

  close (): void {
    this.stop()
    this.kept.clear()
    this.chars = 0
  }

  private keep (projectId: string, change: ChangeEntry): void {
    if (!this.hooked.has(projectId)) return
    const key = keyOf(projectId, change.version)
    if (!this.kept.has(key)) {
      const chars = wireOf(change).length
      if (chars <= this.limits.chars) {
        this.kept.set(key, { change, chars })
        this.chars += chars
        for (const [oldest, held] of this.kept) {
          if (this.kept.size <= this.limits.entries && this.chars <= this.limits.chars) break
          this.kept.delete(oldest)
          this.chars -= held.chars
        }
      }
    }
    for (const listener of this.listeners) listener()
  }
}
