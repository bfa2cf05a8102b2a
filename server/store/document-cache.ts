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
import { PastContent } from './shared-base-replay.js'
import type { EncodedForms } from './types.js'

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
  /**
   * Forms derived from this version's JSON (compressed bodies, see server/http/encoded-content.ts),
   * tagged with the version they were made from: an entry copied for the next version
   * (content-log.ts editable) must not pass them on.
   */
  encoded?: { version: number, forms: Map<string, Promise<Buffer>>, bytes: number }
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

/** What an entry counts against the budget: its parsed document and JSON, and a current one's encoded forms. */
function costOf (entry: CachedDocument | PastContent): number {
  if (entry instanceof PastContent) return entry.bytes * MEMORY_PER_JSON_BYTE
  return entry.bytes * MEMORY_PER_JSON_BYTE + (entry.encoded?.version === entry.version ? entry.encoded.bytes : 0)
}

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
    if (entry.encoded && entry.encoded.version !== entry.version) delete entry.encoded
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
    const cost = costOf(entry)
    if (cost > this.budgetBytes) return
    this.entries.set(key, entry)
    this.used += cost
    this.evict()
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
    this.used -= costOf(entry)
  }

  /**
   * The encoded forms of the entry cached for `projectId`, to read and fill. Forms made for
   * an entry that is no longer the cached one (a newer version, evicted) are kept by no one:
   * the request that made them still answers with them, for the version it read.
   */
  formsOf (projectId: string, entry: CachedDocument): EncodedForms {
    return {
      get: name => entry.encoded?.version === entry.version ? entry.encoded.forms.get(name) : undefined,
      set: (name, form) => {
        if (this.entries.get(projectId) !== entry) return
        if (entry.encoded?.version !== entry.version) entry.encoded = { version: entry.version, forms: new Map(), bytes: 0 }
        const encoded = entry.encoded
        encoded.forms.set(name, form)
        form.then(buffer => {
          // Counted once known; the entry may have left the cache meanwhile (then nothing to count).
          if (encoded.forms.get(name) !== form) return
          if (this.entries.get(projectId) !== entry || entry.encoded !== encoded) { encoded.forms.delete(name); return }
          encoded.bytes += buffer.length
          this.used += buffer.length
          this.evict()
        }, () => { encoded.forms.delete(name) })
      }
    }
  }

  /** Drops the least recently used entries until the budget holds. */
  private evict (): void {
    for (const [key, oldest] of this.entries) {
      if (this.used <= this.budgetBytes) break
      this.entries.delete(key)
      this.used -= costOf(oldest)
    }
  }

  get usedBytes (): number { return this.used }
  get size (): number { return this.entries.size }
}
