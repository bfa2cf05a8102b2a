// A byte-bounded LRU of parsed project documents, keyed by project and tagged with the
// version they hold. Parsing a 1 MiB document costs milliseconds; with the cache an
// operation on a large document costs about what it costs on a small one, apart from
// writing the result back. A stale entry (another process changed the file) is detected by
// comparing versions, never trusted blindly.
//
// The same budget holds past contents (checkpoints) that reads of past versions start from
// (content-log.ts, shared-base-replay.ts): a past version never changes once committed, so
// those need no version check. Current documents come first: every write and plain read
// needs one, and rebuilding a 1 MiB one from the file costs tens of milliseconds. So past
// contents are kept in their own LRU, within at most half the budget and only in what current
// documents leave free: over budget, the least recently used past contents go first, then
// the least recently used current documents. A burst of history reads never evicts a current
// document; together they never exceed the budget.
//
// A past content is charged what it holds, not a parsed document's 4× estimate: its text (1
// byte a character, 2 when any character is outside Latin-1: how V8 stores strings), 128
// bytes per member located in it, and, at the parsed documents' estimate, the members
// replays parsed (with the JSON sharedJsonOf keeps for their large containers: at most their
// text once more). It grows as replays parse members, so it is charged again after each
// replay (chargePast). Measured with node --expose-gc, heapUsed over 20 copies built from
// fresh strings, on the bench's 1 MiB document of small records: a checkpoint that 1,000
// increments of its counter were replayed onto takes 0.92 bytes a character and is charged
// ~1.0 (4.0 before); one whose every member was parsed (a `?path=` read) takes 2.7 and is
// charged 5.0; each located member of an object of 50,000 takes 93 bytes beyond the text.
import type { JsonObject } from '../../shared/json.js'
import type { PastContent } from './shared-base-replay.js'
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

/** What one located member of a past content takes: its span, its key, its place in the index. */
const MEMORY_PER_MEMBER = 128

/** The share of the budget past contents may take at most. */
const PAST_SHARE = 1 / 2

/** What a current document counts against the budget: its parsed document and JSON, and its encoded forms. */
function costOf (entry: CachedDocument): number {
  return entry.bytes * MEMORY_PER_JSON_BYTE + (entry.encoded?.version === entry.version ? entry.encoded.bytes : 0)
}

/** What a past content counts against the budget now (see the header). */
function pastCostOf (past: PastContent): number {
  return past.textBytes + past.found.length * MEMORY_PER_MEMBER + past.parsedTextLength * MEMORY_PER_JSON_BYTE
}

// Past contents are keyed `id\0version` (ids hold no NUL).
const pastKey = (projectId: string, version: number) => `${projectId}\0${version}`

export class DocumentCache {
  /** Current documents by project id, least recently used first (Map order is insertion order). */
  private readonly entries = new Map<string, CachedDocument>()
  /** Past contents, least recently used first, with what each was last charged. */
  private readonly past = new Map<string, { content: PastContent, cost: number }>()
  private used = 0
  private pastUsed = 0
  private readonly pastBudgetBytes: number

  constructor (private readonly budgetBytes: number) {
    this.pastBudgetBytes = Math.floor(budgetBytes * PAST_SHARE)
  }

  get (projectId: string, version: number): CachedDocument | undefined {
    const entry = this.entries.get(projectId)
    if (!entry) return undefined
    if (entry.version !== version) { this.delete(projectId); return undefined }
    // Re-inserting marks the entry most recently used.
    this.entries.delete(projectId)
    this.entries.set(projectId, entry)
    return entry
  }

  set (projectId: string, entry: CachedDocument): void {
    if (entry.encoded && entry.encoded.version !== entry.version) delete entry.encoded
    this.delete(projectId)
    const cost = costOf(entry)
    if (cost > this.budgetBytes) return
    this.entries.set(projectId, entry)
    this.used += cost
    this.evict()
  }

  /** The content at a past `version`, if kept. */
  getPast (projectId: string, version: number): PastContent | undefined {
    const key = pastKey(projectId, version)
    const slot = this.past.get(key)
    if (!slot) return undefined
    this.past.delete(key)
    this.past.set(key, slot)
    return slot.content
  }

  /** Keeps the committed content at a past `version` (never one a running batch wrote). */
  setPast (projectId: string, version: number, content: PastContent): void {
    const key = pastKey(projectId, version)
    this.dropPast(key)
    const slot = { content, cost: 0 }
    this.past.set(key, slot)
    this.charge(key, slot)
  }

  /** Charges the kept past `content` again for what replays have parsed of it since. */
  chargePast (projectId: string, version: number, content: PastContent): void {
    const key = pastKey(projectId, version)
    const slot = this.past.get(key)
    if (slot?.content === content) this.charge(key, slot)
  }

  /** Drops the project's current document. */
  delete (projectId: string): void {
    const entry = this.entries.get(projectId)
    if (!entry) return
    this.entries.delete(projectId)
    this.used -= costOf(entry)
  }

  /** Drops everything kept of the project: it is gone (an id could be used again). */
  deleteProject (projectId: string): void {
    this.delete(projectId)
    const prefix = pastKey(projectId, 0).slice(0, -1)
    for (const key of [...this.past.keys()]) if (key.startsWith(prefix)) this.dropPast(key)
  }

  private charge (key: string, slot: { content: PastContent, cost: number }): void {
    const cost = pastCostOf(slot.content)
    this.used += cost - slot.cost
    this.pastUsed += cost - slot.cost
    slot.cost = cost
    // One that outgrew the past contents' share goes by itself, not with all the others.
    if (cost > this.pastBudgetBytes) this.dropPast(key)
    this.evict()
  }

  private dropPast (key: string): void {
    const slot = this.past.get(key)
    if (!slot) return
    this.past.delete(key)
    this.used -= slot.cost
    this.pastUsed -= slot.cost
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

  /** Drops past contents, then current documents, least recently used first, until both bounds hold. */
  private evict (): void {
    for (const key of this.past.keys()) {
      if (this.pastUsed <= this.pastBudgetBytes && this.used <= this.budgetBytes) return
      this.dropPast(key)
    }
    for (const key of this.entries.keys()) {
      if (this.used <= this.budgetBytes) return
      this.delete(key)
    }
  }

  get usedBytes (): number { return this.used }
  /** The part of usedBytes past contents take. */
  get pastBytes (): number { return this.pastUsed }
  get size (): number { return this.entries.size + this.past.size }
}
