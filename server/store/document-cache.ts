// A byte-bounded LRU of parsed project documents, keyed by project and tagged with the
// version they hold. Parsing a 1 MiB document costs milliseconds; with the cache an
// operation on a large document costs about what it costs on a small one, apart from
// writing the result back. A stale entry (another process changed the file) is detected by
// comparing versions, never trusted blindly.
//
// The same budget holds past contents (checkpoints) that reads of past versions start from
// (content-log.ts, shared-base-replay.ts): a past version never changes once committed, so
// those need no version check. They are charged like a parsed document of their size: their
// text, and the members replays parse, take less than the 4 bytes per byte. One LRU for both:
// a burst of history reads can push out current documents, and the other way round, but
// together they never exceed the budget.
import type { JsonObject } from '../../shared/json.js'
import type { PastContent } from './shared-base-replay.js'

export interface CachedDocument {
  version: number
  doc: JsonObject
  /** The serialized document for this version, when known (see jsonOf). */
  json?: string
  /** UTF-8 size of the serialized document; an upper bound when `json` is absent. */
  bytes: number
  /** Change log entries after the latest checkpoint, and their serialized size (see content-log.ts). */
  tailCount: number
  tailBytes: number
  /** Version of the latest checkpoint (0 when there is none: the implicit `{}` at version 0). */
  checkpointVersion: number
  /** Serialized size of the content at that checkpoint: what a replay from it parses first. */
  checkpointBytes: number
}

/** The entry's JSON, serialized once on first need and kept with the entry. */
export function jsonOf (entry: CachedDocument): string {
  entry.json ??= JSON.stringify(entry.doc)
  return entry.json
}

// A parsed document takes several times its JSON size in memory; this is a rough but
// deliberately pessimistic factor so the budget bounds the real footprint.
const MEMORY_PER_JSON_BYTE = 4

// Keys: the project id for its current document, `id\0version` for a past one (ids hold no NUL).
const pastKey = (projectId: string, version: number) => `${projectId}\0${version}`

export class DocumentCache {
  private readonly entries = new Map<string, CachedDocument | PastContent>()
  private used = 0

  constructor (private readonly budgetBytes: number) {}

  get (projectId: string, version: number): CachedDocument | undefined {
    const entry = this.entries.get(projectId) as CachedDocument | undefined
    if (!entry) return undefined
    if (entry.version !== version) { this.drop(projectId); return undefined }
    this.touch(projectId, entry)
    return entry
  }

  set (projectId: string, entry: CachedDocument): void {
    this.put(projectId, entry)
  }

  /** The content at a past `version`, if kept. */
  getPast (projectId: string, version: number): PastContent | undefined {
    const key = pastKey(projectId, version)
    const entry = this.entries.get(key) as PastContent | undefined
    if (entry) this.touch(key, entry)
    return entry
  }

  /** Keeps the committed content at a past `version` (never one a running batch wrote). */
  setPast (projectId: string, version: number, entry: PastContent): void {
    this.put(pastKey(projectId, version), entry)
  }

  /** Drops the project's current document. */
  delete (projectId: string): void {
    this.drop(projectId)
  }

  /** Drops everything kept of the project: it is gone (an id could be used again). */
  deleteProject (projectId: string): void {
    this.drop(projectId)
    const prefix = pastKey(projectId, 0).slice(0, -1)
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.drop(key)
  }

  private put (key: string, entry: CachedDocument | PastContent): void {
    this.drop(key)
    const cost = entry.bytes * MEMORY_PER_JSON_BYTE
    if (cost > this.budgetBytes) return
    this.entries.set(key, entry)
    this.used += cost
    for (const [oldestKey, oldest] of this.entries) {
      if (this.used <= this.budgetBytes) break
      this.entries.delete(oldestKey)
      this.used -= oldest.bytes * MEMORY_PER_JSON_BYTE
    }
  }

  /** Map order is insertion order: re-inserting marks the entry most recently used. */
  private touch (key: string, entry: CachedDocument | PastContent): void {
    this.entries.delete(key)
    this.entries.set(key, entry)
  }

  private drop (key: string): void {
    const entry = this.entries.get(key)
    if (!entry) return
    this.entries.delete(key)
    this.used -= entry.bytes * MEMORY_PER_JSON_BYTE
  }

  get usedBytes (): number { return this.used }
  get size (): number { return this.entries.size }
}
