// A byte-bounded LRU of parsed project documents, keyed by project and tagged with the
// version they hold. Parsing a 1 MiB document costs milliseconds; with the cache an
// operation on a large document costs about what it costs on a small one, apart from
// writing the result back. A stale entry (another process changed the file) is detected by
// comparing versions, never trusted blindly.
import type { JsonObject } from '../../shared/json.js'
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

/** What an entry counts against the budget: its parsed document and JSON, and its encoded forms. */
function costOf (entry: CachedDocument): number {
  return entry.bytes * MEMORY_PER_JSON_BYTE + (entry.encoded?.version === entry.version ? entry.encoded.bytes : 0)
}

export class DocumentCache {
  private readonly entries = new Map<string, CachedDocument>()
  private used = 0

  constructor (private readonly budgetBytes: number) {}

  get (projectId: string, version: number): CachedDocument | undefined {
    const entry = this.entries.get(projectId)
    if (!entry) return undefined
    if (entry.version !== version) { this.delete(projectId); return undefined }
    // Map order is insertion order: re-inserting marks the entry most recently used.
    this.entries.delete(projectId)
    this.entries.set(projectId, entry)
    return entry
  }

  set (projectId: string, entry: CachedDocument): void {
    this.delete(projectId)
    if (entry.encoded && entry.encoded.version !== entry.version) delete entry.encoded
    const cost = costOf(entry)
    if (cost > this.budgetBytes) return
    this.entries.set(projectId, entry)
    this.used += cost
    this.evict()
  }

  delete (projectId: string): void {
    const entry = this.entries.get(projectId)
    if (!entry) return
    this.entries.delete(projectId)
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
    for (const [id, oldest] of this.entries) {
      if (this.used <= this.budgetBytes) break
      this.entries.delete(id)
      this.used -= costOf(oldest)
    }
  }

  get usedBytes (): number { return this.used }
  get size (): number { return this.entries.size }
}
