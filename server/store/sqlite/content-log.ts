// How a project's content is kept in the file: `projects.content` holds the document as it
// was at `snapshot_version`, and `content_log` the operations committed after it, in version
// order. Reading replays the log over the snapshot. Writing a batch's result either appends
// its operations to the log (large documents, while the log is short) or writes a new
// snapshot, which empties the log (compaction). Parsed documents are kept in a
// DocumentCache tagged with their version, so most reads and writes parse nothing.
//
// This is the one place that knows the layout: a durable change log (history kept beyond
// the latest snapshot, retention, checkpoints) grows here, under the same transactions.
import type Database from 'better-sqlite3'
import type { JsonObject } from '../../../shared/json.js'
import { applyOperation, type Operation } from '../../../shared/operations.js'
import { DocumentCache, jsonOf, type CachedDocument } from '../document-cache.js'
import type { ContentSnapshot } from '../types.js'

/** A document a batch changed, ready to be written (see ContentLog.write). */
export interface ChangedDocument {
  doc: JsonObject
  version: number
  /** Upper bound of the serialized size; exact after writing. */
  bytes: number
  /** Operations already in content_log after the stored snapshot, and their size. */
  logCount: number
  logBytes: number
  /** The batch's operations, serialized when they ran, with their versions. */
  batchLog: Array<{ version: number, json: string }>
  /** An update in the batch replaced the whole document: write a snapshot. */
  replaced: boolean
}

// When a change is logged instead of rewriting the document: only documents this large gain
// from it, and the log stays short enough that replaying it (after another process wrote,
// or a cache eviction) costs less than parsing the document.
const LOG_MIN_DOCUMENT_BYTES = 64 * 1024
const LOG_MAX_ENTRIES = 1000

type Row = Record<string, unknown>

function prepareStatements (db: Database.Database) {
  return {
    projectVersion: db.prepare('SELECT version FROM projects WHERE id = ?'),
    projectContent: db.prepare('SELECT version, snapshot_version, content FROM projects WHERE id = ?'),
    logAfter: db.prepare('SELECT operation FROM content_log WHERE project_id = ? AND version > ? ORDER BY version'),
    writeSnapshot: db.prepare('UPDATE projects SET content = ?, version = ?, snapshot_version = ? WHERE id = ?'),
    clearLog: db.prepare('DELETE FROM content_log WHERE project_id = ?'),
    appendLog: db.prepare('INSERT INTO content_log (project_id, version, operation) VALUES (?, ?, ?)'),
    writeVersion: db.prepare('UPDATE projects SET version = ? WHERE id = ?')
  }
}

export class ContentLog {
  private readonly statements: ReturnType<typeof prepareStatements>
  private readonly cache: DocumentCache
  // Documents handed out by read(). Callers keep snapshots across awaits, so a writer copies
  // such a document before changing it (see editable) instead of mutating it under their feet.
  private readonly lent = new WeakSet<JsonObject>()

  constructor (private readonly db: Database.Database, cacheBytes: number) {
    this.statements = prepareStatements(db)
    this.cache = new DocumentCache(cacheBytes)
  }

  /** The current content, for a caller to serialize or copy before its next await. */
  read (projectId: string): ContentSnapshot | null {
    const current = this.current(projectId)
    if (!current) return null
    this.lent.add(current.doc)
    return { version: current.version, content: current.doc, json: jsonOf(current) }
  }

  /**
   * The current document, for a batch to change in place: a copy when read() lent it out.
   * Call inside the batch's transaction.
   */
  editable (projectId: string): CachedDocument | null {
    const current = this.current(projectId)
    if (!current || !this.lent.has(current.doc)) return current
    // Parsing the cached JSON copies about three times faster than structuredClone.
    return { ...current, doc: JSON.parse(jsonOf(current)) as JsonObject }
  }

  /**
   * Writes a changed document inside the batch's transaction: the batch's operations appended
   * to content_log when the document is large and the log still short, otherwise a new
   * snapshot (which empties the log). Returns the cache entry for the new version; hand it to
   * remember() once the transaction has committed.
   */
  write (projectId: string, changed: ChangedDocument): CachedDocument {
    const batchBytes = changed.batchLog.reduce((sum, entry) => sum + entry.json.length, 0)
    const logCount = changed.logCount + changed.batchLog.length
    const logBytes = changed.logBytes + batchBytes
    if (!changed.replaced && changed.bytes >= LOG_MIN_DOCUMENT_BYTES && logCount <= LOG_MAX_ENTRIES && logBytes <= changed.bytes / 2) {
      for (const entry of changed.batchLog) this.statements.appendLog.run(projectId, entry.version, entry.json)
      this.statements.writeVersion.run(changed.version, projectId)
      return { version: changed.version, doc: changed.doc, bytes: changed.bytes, logCount, logBytes }
    }
    const json = JSON.stringify(changed.doc)
    this.statements.writeSnapshot.run(json, changed.version, changed.version, projectId)
    if (changed.logCount > 0) this.statements.clearLog.run(projectId)
    return { version: changed.version, doc: changed.doc, json, bytes: Buffer.byteLength(json), logCount: 0, logBytes: 0 }
  }

  /** The committed version of a document, kept for the next read or batch. */
  remember (projectId: string, entry: CachedDocument): void {
    this.cache.set(projectId, entry)
  }

  /** Drops the cached document: the project is gone, or a failed batch may have mutated it. */
  forget (projectId: string): void {
    this.cache.delete(projectId)
  }

  /** The current document, from the cache when its version is still the stored one. */
  private current (projectId: string): CachedDocument | null {
    const versionRow = this.statements.projectVersion.get(projectId) as Row | undefined
    if (!versionRow) return null
    const hit = this.cache.get(projectId, Number(versionRow.version))
    if (hit) return hit
    const entry = this.load(projectId)
    if (entry) this.cache.set(projectId, entry)
    return entry
  }

  /** Snapshot plus logged operations, read in one transaction: another process may write. */
  private load (projectId: string): CachedDocument | null {
    return this.db.transaction((): CachedDocument | null => {
      const row = this.statements.projectContent.get(projectId) as Row | undefined
      if (!row) return null
      const snapshot = String(row.content)
      const log = this.statements.logAfter.all(projectId, Number(row.snapshot_version)) as Row[]
      const doc = JSON.parse(snapshot) as JsonObject
      let logBytes = 0
      for (const entry of log) {
        const text = String(entry.operation)
        logBytes += text.length
        applyOperation(doc, JSON.parse(text) as Operation)
      }
      // After a replay the snapshot text is stale; serialize once for an exact size.
      const json = log.length === 0 ? snapshot : JSON.stringify(doc)
      return { version: Number(row.version), doc, json, bytes: Buffer.byteLength(json), logCount: log.length, logBytes }
    })()
  }
}
