// How a project's content and its history are kept in the file (docs/design.md §9). One
// layout serves both: the current content is simply the content at the latest version.
//
// - `changes`: the change log, one row per committed version, the entry as JSON (§9, without
//   `project`). A change is written in the same transaction as the new version, so a change
//   is in the content exactly when it is in the log.
//   A rowid table, appended at its end, with one unique index on (project_id, version);
//   each row's small columns (`bytes`, the entry's UTF-8 length kept at commit, and the
//   idempotency key) come before `entry`, so they are read without the entry (migrations.ts).
// - `checkpoints`: the whole content at some versions. `content` NULL marks a version whose
//   change replaced the whole content (update, revert): that entry's value IS the content,
//   so it is not stored twice.
// - The content at version N is the latest checkpoint at or below N (none: `{}` at version 0,
//   how every project starts) with the entries after it replayed, in order.
//
// Checkpoints bound what any read replays (history-policy.ts: every 1000 entries, or once the
// entries after the latest checkpoint weigh as much as the document). So reading any version
// costs about one document parse plus at most a document's worth of entries, however long
// the log.
//
// Retention (HISTORY_LIMIT = L > 0): logically, versions from max(history_floor, version − L)
// on are answerable (history-policy.ts): exactly the newest L entries. Physically, at a
// checkpoint once that bound has moved a tenth of L (at most 1000) since the last prune
// (history-policy.ts PruneSchedule), everything older than the latest checkpoint at or below
// the bound is deleted and history_floor raised to it: pruning is lazy and batched, the
// answers exact. history_floor also covers what was never recorded (history before the
// change log existed, see migrations.ts) and a changed HISTORY_LIMIT.
//
// Parsed current documents are kept in a DocumentCache tagged with their version, so most
// reads and writes parse nothing. Reads of past versions keep the checkpoints they start from
// in the same cache, as text with the members replays parsed, and replay onto them without
// changing them (SharedBaseReplay): a read parses what its entries touch and serializes what
// they changed, not the whole document (BENCHMARKS.md, "What the benchmark changed").
import type Database from 'better-sqlite3'
import { ContentdError } from '../../../shared/errors.js'
import type { JsonObject } from '../../../shared/json.js'
import { applyContentOperation } from '../../../shared/compound.js'
import { replayOperationOf, valueJsonOf } from '../change-entry.js'
import { DocumentCache, jsonOf, type CachedDocument } from '../document-cache.js'
import { PageBudget, projectMemberBytes } from '../change-pages.js'
import { pathLookup } from '../../../shared/live-path.js'
import { answerableFrom, CHECKPOINT_ENTRIES, checkpointDue, PruneSchedule } from '../history-policy.js'
import { PastContent, SharedBaseReplay } from '../shared-base-replay.js'
import { MultiRowInsert } from './multi-row-insert.js'
import { pathCandidates, PendingPathIndex, type PathIndexRow, type PathRowReader } from './path-index.js'
import type { ContentSnapshot, HistoryOptions, LoggedIdempotencyKey, LoggedIdempotentChange } from '../types.js'

/** A document a batch is changing, with what the log needs to know about it. */
export interface ChangedDocument extends CachedDocument {
  /** The batch changed it: write it (finish) when the batch ends. */
  dirty: boolean
  /** checkpointVersion when the batch began: a checkpoint added since lets retention prune. */
  checkpointVersionAtStart: number
}

const EMPTY_CONTENT = '{}'
/** Projects whose last path-index prune is remembered (ContentLog.prunePaths). */
const PATH_PRUNES_KEPT = 100_000

type Row = Record<string, unknown>

function prepareStatements (db: Database.Database) {
  return {
    projectVersion: db.prepare('SELECT version FROM projects WHERE id = ?').pluck(),
    projectState: db.prepare('SELECT version, history_floor FROM projects WHERE id = ?'),
    latestCheckpoint: db.prepare('SELECT version, content FROM checkpoints WHERE project_id = ? ORDER BY version DESC LIMIT 1'),
    // Without the content: a cached checkpoint need not be read (1 MiB copied out of SQLite).
    checkpointAtOrBelow: db.prepare('SELECT version, content IS NULL AS marker FROM checkpoints WHERE project_id = ? AND version <= ? ORDER BY version DESC LIMIT 1'),
    checkpointContent: db.prepare('SELECT content FROM checkpoints WHERE project_id = ? AND version = ?').pluck(),
    entryAt: db.prepare('SELECT entry FROM changes WHERE project_id = ? AND version = ?').pluck(),
    entriesBetween: db.prepare('SELECT entry FROM changes WHERE project_id = ? AND version > ? AND version <= ? ORDER BY version').pluck(),
    // As UTF-8 bytes, to be written to the wire as they are (change-pages.ts).
    storedEntriesBetween: db.prepare('SELECT CAST(entry AS BLOB) FROM changes WHERE project_id = ? AND version > ? AND version <= ? ORDER BY version').pluck(),
    // The sizes kept at commit: no entry is read to be measured. `bytes` comes before `entry`
    // in the row (migrations.ts, "The change log as a rowid table"), so each row is sized from
    // its first page; reading even the length of a 7 MB value walks its overflow pages.
    entrySizesAfter: db.prepare('SELECT version, bytes FROM changes INDEXED BY changes_by_version WHERE project_id = ? AND version > ? ORDER BY version LIMIT ?'),
    // The newest change made under a key (docs/design.md §19), through changes_by_idempotency_key.
    loggedKey: db.prepare(`SELECT version, idem_fingerprint AS fingerprint, json_extract(entry, '$.op') AS op, json_extract(entry, '$.revertedTo') AS revertedTo
      FROM changes INDEXED BY changes_by_idempotency_key WHERE project_id = ? AND idem_caller = ? AND idem_key = ? AND idem_key IS NOT NULL ORDER BY version DESC LIMIT 1`),
    pathIndexFrom: db.prepare('SELECT path_index_from FROM projects WHERE id = ?').pluck(),
    // The path-index rows that may hold a path's versions (docs/design.md §15; path-index.ts):
    // recorded at the root, an ancestor or the path itself (json_each of the list), or below
    // it (a range on the key). Two searches of the primary key, merged: written as one OR,
    // SQLite scans the project.
    pathRows: db.prepare(`SELECT version, versions FROM change_paths WHERE project_id = @project AND path IN (SELECT value FROM json_each(@exact)) AND version > @since AND version <= @until
      UNION ALL SELECT version, versions FROM change_paths WHERE project_id = @project AND path > @below AND path < @belowEnd AND version > @since AND version <= @until
      ORDER BY version LIMIT @limit`),
    unindexedVersions: db.prepare('SELECT version FROM changes WHERE project_id = ? AND version > ? AND version <= ? ORDER BY version LIMIT ?').pluck(),
    entryWithSize: db.prepare('SELECT entry, bytes FROM changes WHERE project_id = ? AND version = ?'),
    prunePaths: db.prepare('DELETE FROM change_paths WHERE project_id = ? AND version < ?'),
    insertCheckpoint: db.prepare('INSERT INTO checkpoints (project_id, version, content) VALUES (?, ?, ?)'),
    moveCheckpoint: db.prepare('UPDATE checkpoints SET version = ?, content = ? WHERE project_id = ? AND version = ?'),
    writeVersion: db.prepare('UPDATE projects SET version = ? WHERE id = ?'),
    writeVersionAndFloor: db.prepare('UPDATE projects SET version = ?, history_floor = ? WHERE id = ?'),
    pruneBase: db.prepare('SELECT max(version) FROM checkpoints WHERE project_id = ? AND version <= ?').pluck(),
    pruneEntries: db.prepare('DELETE FROM changes WHERE project_id = ? AND version < ?'),
    pruneCheckpoints: db.prepare('DELETE FROM checkpoints WHERE project_id = ? AND version < ?'),
    raiseFloor: db.prepare('UPDATE projects SET history_floor = ? WHERE id = ? AND history_floor < ?')
  }
}

/**
 * A page of the log as changes() settles it: the current version, the page's versions and
 * each entry's size as sent, and the entries as stored (null: read them off the event loop).
 */
export interface PageExtent { version: number, versions: number[], bytes: number[], stored: Buffer[] | null, more: boolean }

/** The content at a version, as read from the file: parsed, and its JSON. */
interface Materialized { doc: JsonObject, json: string, tailCount: number, tailBytes: number, checkpointBytes: number }

export class ContentLog {
  private readonly statements: ReturnType<typeof prepareStatements>
  private readonly cache: DocumentCache
  // Documents handed out by read(). Callers keep snapshots across awaits, so a writer copies
  // such a document before changing it (see editable) instead of mutating it under their feet.
  private readonly lent = new WeakSet<JsonObject>()
  /** Per project, the version below which this process last pruned change_paths (see prune). */
  private readonly pathsPrunedBelow = new Map<string, number>()
  /** When retention deletes, in bulk (history-policy.ts). */
  private readonly prunes: PruneSchedule
  /** Rows append() held back for flushAppends, as the statements' parameters, row after row. */
  private readonly pendingEntries: Array<string | number | null> = []
  /** The path-index rows append() gathers by unit for flushAppends (path-index.ts). */
  private readonly pendingPaths = new PendingPathIndex()
  private readonly appendRows: { entries: MultiRowInsert, paths: MultiRowInsert }

  /** `pageBytes`: CHANGES_PAGE_BYTES, the most one page of changes() carries (docs/design.md §13b). */
  constructor (private readonly db: Database.Database, cacheBytes: number, private readonly history: HistoryOptions, private readonly pageBytes: number) {
    this.statements = prepareStatements(db)
    this.cache = new DocumentCache(cacheBytes)
    this.prunes = new PruneSchedule(history)
    this.appendRows = {
      entries: new MultiRowInsert(db, 'INSERT INTO changes (project_id, version, entry, bytes, idem_caller, idem_key, idem_fingerprint) VALUES', 7),
      paths: new MultiRowInsert(db, 'INSERT INTO change_paths (project_id, path, version, versions) VALUES', 4)
    }
  }

  /** The newest change still in the log made by `caller` under `key` (docs/design.md §19). */
  loggedIdempotency (projectId: string, caller: string, key: string): LoggedIdempotentChange | null {
    const row = this.statements.loggedKey.get(projectId, caller, key) as { version: number, fingerprint: string, op: string, revertedTo: number | null } | undefined
    if (!row) return null
    return { version: row.version, fingerprint: row.fingerprint, op: row.op, ...(row.revertedTo === null ? {} : { revertedTo: row.revertedTo }) }
  }

  /** The current content, for a caller to serialize or copy before its next await. */
  read (projectId: string): ContentSnapshot | null {
    const current = this.current(projectId)
    if (!current) return null
    this.lent.add(current.doc)
    return { version: current.version, content: current.doc, json: jsonOf(current), encoded: this.cache.formsOf(projectId, current) }
  }

  /**
   * The current content's JSON text only, lending nothing (issue 30): a caller that makes its
   * own copy (live queries) does not make the next write copy the cached document, as a
   * read() would (see editable).
   */
  readJson (projectId: string): { version: number, json: string } | null {
    const current = this.current(projectId)
    return current ? { version: current.version, json: jsonOf(current) } : null
  }

  /**
   * The current document, for a batch to change in place: a copy when read() lent it out.
   * Call inside the batch's transaction.
   */
  editable (projectId: string): ChangedDocument | null {
    const current = this.current(projectId)
    if (!current) return null
    const changed = { ...current, dirty: false, checkpointVersionAtStart: current.checkpointVersion }
    // Parsing the cached JSON copies about three times faster than structuredClone.
    if (this.lent.has(current.doc)) changed.doc = JSON.parse(jsonOf(current)) as JsonObject
    return changed
  }

  /**
   * Appends one committed change to the log, inside the batch's transaction, right when it
   * is applied: its entry text is final now (a later operation of the batch may change the
   * values it wrote), its rows are written by flushAppends, which every read of the log in
   * the transaction runs first (so a revert later in the same batch reads it). `replaced`:
   * the change replaced the whole content (update, revert), so its version becomes a checkpoint.
   * `entryBytes`: the entry's UTF-8 size, measured once when it was made (write-step.ts).
   */
  append (projectId: string, changed: ChangedDocument, entryJson: string, entryBytes: number, replaced: boolean, idempotency?: LoggedIdempotencyKey, paths: readonly string[] = []): void {
    if (this.history.enabled) {
      // Written by flushAppends, several rows to a statement, before anything reads the log.
      this.pendingEntries.push(projectId, changed.version, entryJson, entryBytes,
        idempotency?.caller ?? null, idempotency?.key ?? null, idempotency?.fingerprint ?? null)
      this.pendingPaths.add(projectId, changed.version, paths)
      if (replaced) this.statements.insertCheckpoint.run(projectId, changed.version, null)
    }
    if (replaced) {
      changed.checkpointVersion = changed.version
      // The entry holds the content: its value's size, near enough the entry's.
      changed.checkpointBytes = entryJson.length
      changed.tailCount = 0
      changed.tailBytes = 0
    } else {
      changed.tailCount += 1
      changed.tailBytes += entryJson.length
    }
  }

  /**
   * Writes the entries and path-index rows appended since the last call, inside the batch's
   * transaction: a statement of up to 64 rows (multi-row-insert.ts) instead of one run per
   * row (a group commit of 16 increments ran 32 statements). Everything that reads the log in the
   * transaction calls it first (contentAt, finish); the writer calls it when its batch is applied.
   */
  flushAppends (): void {
    if (this.pendingEntries.length > 0) this.appendRows.entries.write(this.pendingEntries)
    const pathRows = this.pendingPaths.take()
    if (pathRows.length > 0) this.appendRows.paths.write(pathRows)
    this.discardAppends()
  }

  /** Drops what append() held back: written, or its transaction rolled back. */
  discardAppends (): void {
    this.pendingEntries.length = 0
    this.pendingPaths.clear()
  }

  /**
   * Ends a batch for one document, inside its transaction: the new version, a checkpoint when
   * one is due, retention. Returns the cache entry for the new version; hand it to remember()
   * once the transaction has committed.
   */
  finish (projectId: string, changed: ChangedDocument): CachedDocument {
    // Retention below deletes from the log: what this batch appended is written first.
    this.flushAppends()
    const { doc, version } = changed
    let json = changed.json
    if (!this.history.enabled) {
      // The benchmark's reference (HISTORY=off): no entries, the whole document rewritten as
      // the project's one checkpoint, and nothing before the current version answerable.
      json ??= JSON.stringify(doc)
      if (this.statements.moveCheckpoint.run(version, json, projectId, changed.checkpointVersion).changes === 0) {
        this.statements.insertCheckpoint.run(projectId, version, json)
      }
      this.statements.writeVersionAndFloor.run(version, version, projectId)
      const bytes = Buffer.byteLength(json)
      return { version, doc, json, bytes, tailCount: 0, tailBytes: 0, checkpointVersion: version, checkpointBytes: bytes }
    }
    this.statements.writeVersion.run(version, projectId)
    let { tailCount, tailBytes, checkpointVersion, checkpointBytes } = changed
    if (checkpointDue(tailCount, tailBytes, checkpointBytes)) {
      json ??= JSON.stringify(doc)
      this.statements.insertCheckpoint.run(projectId, version, json)
      checkpointVersion = version
      checkpointBytes = json.length
      tailCount = 0
      tailBytes = 0
    }
    // Pruning can only move when a checkpoint was added (this one, or a replacement's marker),
    // and waits until it has a bulk to delete (history-policy.ts PruneSchedule).
    if (checkpointVersion > changed.checkpointVersionAtStart && this.prunes.due(projectId, version)) this.prune(projectId, version)
    const bytes = json === undefined ? changed.bytes : Buffer.byteLength(json)
    return { version, doc, ...(json === undefined ? {} : { json }), bytes, tailCount, tailBytes, checkpointVersion, checkpointBytes }
  }

  /**
   * The content at `version`, at most `current` (the working version, inside a write
   * transaction). Checks retention first: VERSION_NOT_FOUND, HISTORY_EXPIRED.
   */
  contentAt (projectId: string, version: number, current: { version: number, doc: JsonObject }): string {
    // A revert later in a batch reads the entries written earlier in it.
    this.flushAppends()
    const floor = this.floor(current.version, Number((this.statements.projectState.get(projectId) as Row).history_floor))
    if (version > current.version) throw new ContentdError('VERSION_NOT_FOUND', `version ${version}; the current version is ${current.version}`)
    if (version < floor) throw new ContentdError('HISTORY_EXPIRED', `version ${version}; the oldest version kept is ${floor}`)
    if (version === current.version) return JSON.stringify(current.doc)
    // Inside a write transaction: checkpoints this batch wrote may yet roll back, so nothing
    // read here is kept.
    return this.materialize(projectId, version, false).json
  }

  /** The content at a past version, read in one transaction (another process may write). */
  readAt (projectId: string, version: number): ContentSnapshot {
    const snapshot = this.db.transaction((): ContentSnapshot | 'current' => {
      const row = this.statements.projectState.get(projectId) as Row | undefined
      if (!row) throw new ContentdError('PROJECT_NOT_FOUND')
      const currentVersion = Number(row.version)
      const floor = this.floor(currentVersion, Number(row.history_floor))
      if (version > currentVersion) throw new ContentdError('VERSION_NOT_FOUND', `version ${version}; the current version is ${currentVersion}`)
      if (version < floor) throw new ContentdError('HISTORY_EXPIRED', `version ${version}; the oldest version kept is ${floor}`)
      if (version === currentVersion) return 'current'
      const { json, content } = this.materialize(projectId, version, true)
      // Parsed only for a caller that reads into it (?path=): the whole answer is `json`.
      return { version, json, get content () { return content() } }
    })()
    if (snapshot !== 'current') return snapshot
    // The current version: the cached document, when there is one.
    const current = this.read(projectId)
    if (!current) throw new ContentdError('PROJECT_NOT_FOUND')
    // A write may have committed since the transaction above; fall back to the file.
    return current.version === version ? current : this.readAt(projectId, version)
  }

  /** The project's version, once `since` is checked against it and its history floor (inside the caller's read transaction). */
  private versionReadableSince (projectId: string, since: number): number {
    const row = this.statements.projectState.get(projectId) as Row | undefined
    if (!row) throw new ContentdError('PROJECT_NOT_FOUND')
    const version = Number(row.version)
    if (since > version) throw new ContentdError('INVALID_VERSION', `since ${since} is above the current version ${version}`)
    const floor = this.floor(version, Number(row.history_floor))
    if (since < floor) throw new ContentdError('HISTORY_EXPIRED', `changes after version ${since}; the oldest version kept is ${floor}`)
    return version
  }

  /**
   * Entries after `since`, at most `limit` and at most pageBytes of them (the first always),
   * in one read transaction, `project` being the entries' reference. The page's extent comes
   * from the sizes kept beside the entries; the entries themselves (as stored, never parsed)
   * are read here only when they weigh at most `inlineBytes`: larger ones are for the caller
   * to read off the event loop (entry-reader.ts), `stored` null.
   */
  changes (projectId: string, project: string, since: number, limit: number, inlineBytes: number): PageExtent {
    return this.db.transaction((): PageExtent => {
      const version = this.versionReadableSince(projectId, since)
      // The page's extent first, from the entries' sizes, then only its entries are read
      // (docs/design.md §13b): never a page of entries loaded and then cut.
      const budget = new PageBudget(this.pageBytes)
      const added = projectMemberBytes(project)
      const versions: number[] = []
      const bytes: number[] = []
      let stored = 0
      let more = false
      for (const row of this.statements.entrySizesAfter.iterate(projectId, since, limit + 1) as IterableIterator<{ version: number, bytes: number }>) {
        // Breaking off the loop resets the statement: nothing after it is measured, nor the
        // one row past `limit`, read only to know whether more follow.
        if (versions.length === limit) { more = true; break }
        const size = row.bytes
        if (!budget.admit(size + added)) { more = true; break }
        versions.push(row.version)
        bytes.push(size + added)
        stored += size
      }
      const last = versions.at(-1) ?? since
      const entries = versions.length === 0 ? [] : stored <= inlineBytes ? this.statements.storedEntriesBetween.all(projectId, since, last) as Buffer[] : null
      return { version, versions, bytes, stored: entries, more }
    })()
  }

  /**
   * The entries after `since` that may touch `path` (docs/design.md §15), found through the
   * path index (a superset: the caller decides exactly, shared/live-path.ts), ascending, at
   * most `limit` and at most pageBytes of them as stored (the first always), in one read
   * transaction. Checks as changes() does. Entries older than the index (path_index_from)
   * are all candidates.
   */
  pathEntries (projectId: string, path: string, since: number, limit: number): { version: number, entries: string[], more: boolean } {
    return this.db.transaction(() => {
      const version = this.versionReadableSince(projectId, since)
      const lookup = pathLookup(path)
      const indexFrom = this.statements.pathIndexFrom.get(projectId) as number
      const unindexed = since < indexFrom ? this.statements.unindexedVersions.all(projectId, since, indexFrom, limit + 1) as number[] : []
      const exact = JSON.stringify(lookup.exact)
      const read: PathRowReader = (after, until, most) => this.statements.pathRows.all({ project: projectId, since: after, until, exact, below: lookup.below, belowEnd: lookup.belowEnd, limit: most }) as PathIndexRow[]
      const indexed = pathCandidates(read, Math.max(since, indexFrom), limit + 1)
      const versions = [...unindexed, ...indexed].slice(0, limit + 1)
      const budget = new PageBudget(this.pageBytes)
      const entries: string[] = []
      let more = false
      for (const candidate of versions) {
        if (entries.length === limit) { more = true; break }
        const stored = this.statements.entryWithSize.get(projectId, candidate) as { entry: string, bytes: number } | undefined
        if (!stored) continue
        if (!budget.admit(stored.bytes)) { more = true; break }
        entries.push(stored.entry)
      }
      return { version, entries, more }
    })()
  }

  /** The committed version of a document, kept for the next read or batch. */
  remember (projectId: string, entry: CachedDocument): void {
    this.cache.set(projectId, entry)
  }

  /** Drops the cached document: a failed batch may have mutated it. */
  forget (projectId: string): void {
    this.cache.delete(projectId)
  }

  /** Drops all that is cached of a deleted project, past versions included. */
  forgetProject (projectId: string): void {
    this.cache.deleteProject(projectId)
    // The id may come back with a log starting at version 0.
    this.prunes.forget(projectId)
    this.pathsPrunedBelow.delete(projectId)
  }

  private floor (version: number, storedFloor: number): number {
    return answerableFrom(version, storedFloor, this.history)
  }

  /** Deletes what no answerable version needs any more, and records the new floor. */
  private prune (projectId: string, version: number): void {
    const base = this.statements.pruneBase.get(projectId, version - this.history.limit) as number | null
    if (base === null) return
    this.statements.pruneEntries.run(projectId, base)
    this.prunePaths(projectId, base)
    this.statements.pruneCheckpoints.run(projectId, base)
    this.statements.raiseFloor.run(base, projectId, base)
  }

  /**
   * The path index below `base`, in bulk. change_paths has no index by version (it would lead
   * the planner astray, see pathVersions), so its prune reads every row of the project: about
   * HISTORY_LIMIT rows per path written, 430 µs at the default 10,000 for one path (against
   * 20 µs for the entries), and it ran at every checkpoint, some 3.7% of the 1 KiB increment's
   * CPU. Rows below the floor are never read (pathEntries asks for versions after `since`,
   * which is at least the floor), so they may wait: they go once at least as many versions
   * as are kept have left, which makes the scan's cost per write constant, and the index at
   * most about twice its pruned size. Another process on the file, or a restart, prunes on
   * its own reckoning; a rolled-back prune only leaves rows for the next one.
   */
  private prunePaths (projectId: string, base: number): void {
    const prunedBelow = this.pathsPrunedBelow.get(projectId) ?? 0
    if (base - prunedBelow < Math.max(this.history.limit, CHECKPOINT_ENTRIES)) return
    this.statements.prunePaths.run(projectId, base)
    // One number per project written to; started again rather than grown without end.
    if (this.pathsPrunedBelow.size >= PATH_PRUNES_KEPT) this.pathsPrunedBelow.clear()
    this.pathsPrunedBelow.set(projectId, base)
  }

  /** The current document, from the cache when its version is still the stored one. */
  private current (projectId: string): CachedDocument | null {
    const version = this.statements.projectVersion.get(projectId) as number | undefined
    if (version === undefined) return null
    const hit = this.cache.get(projectId, version)
    if (hit) return hit
    const entry = this.load(projectId)
    if (entry) this.cache.set(projectId, entry)
    return entry
  }

  /** The current document from the file, in one transaction: another process may write. */
  private load (projectId: string): CachedDocument | null {
    return this.db.transaction((): CachedDocument | null => {
      const version = this.statements.projectVersion.get(projectId) as number | undefined
      if (version === undefined) return null
      const checkpoint = this.statements.latestCheckpoint.get(projectId) as Row | undefined
      const { doc, json, tailCount, tailBytes, checkpointBytes } = this.replay(projectId, checkpoint, version)
      return { version, doc, json, bytes: Buffer.byteLength(json), tailCount, tailBytes, checkpointVersion: checkpoint ? Number(checkpoint.version) : 0, checkpointBytes }
    })()
  }

  /**
   * The content at a version below the current one, from the checkpoint at or below it (its
   * text, from the cache or the file) with the entries after it replayed onto it without
   * changing it (SharedBaseReplay). `keep`: the checkpoint is committed, so it may be cached.
   * `content` is parsed only when asked for. Call inside a transaction.
   */
  private materialize (projectId: string, version: number, keep: boolean): { json: string, content: () => JsonObject } {
    const checkpoint = this.statements.checkpointAtOrBelow.get(projectId, version) as Row | undefined
    const from = checkpoint ? Number(checkpoint.version) : 0
    const entries = from === version ? [] : this.statements.entriesBetween.all(projectId, from, version) as string[]
    // Retention never deletes what an answerable version needs; a gap means a broken file.
    if (entries.length !== version - from) throw new Error(`change log of ${projectId}: ${entries.length} entries between versions ${from} and ${version}`)
    let base = checkpoint ? this.cache.getPast(projectId, from) : undefined
    if (!base) {
      if (!checkpoint) base = new PastContent(EMPTY_CONTENT)
      else if (checkpoint.marker === 0) base = new PastContent(this.statements.checkpointContent.get(projectId, from) as string)
      // A marker: the entry at `from` (an update or revert) holds the content.
      else base = new PastContent(valueJsonOf(this.statements.entryAt.get(projectId, from) as string))
      if (keep && checkpoint) this.cache.setPast(projectId, from, base)
    }
    const replay = new SharedBaseReplay(base)
    for (const entry of entries) replay.apply(replayOperationOf(entry))
    // What the replay parsed of the base stays with it, and counts against the cache's budget.
    const kept = base
    const charge = () => { if (keep && checkpoint) this.cache.chargePast(projectId, from, kept) }
    charge()
    let content: JsonObject | undefined
    const parsed = () => {
      if (content === undefined) { content = replay.result; charge() }
      return content
    }
    return { json: entries.length === 0 ? base.json : replay.serialize(), content: parsed }
  }

  /** A checkpoint (or the implicit `{}` at 0) with the entries after it, up to `version`, applied. */
  private replay (projectId: string, checkpoint: Row | undefined, version: number): Materialized {
    const from = checkpoint ? Number(checkpoint.version) : 0
    // The content at `from` as JSON, unless the checkpoint is a marker: then the entry at
    // `from` (an update or revert) holds it, parsed once as part of its entry.
    const base = !checkpoint ? EMPTY_CONTENT : checkpoint.content !== null ? String(checkpoint.content) : undefined
    const entries = from === version ? [] : this.statements.entriesBetween.all(projectId, from, version) as string[]
    // Retention never deletes what an answerable version needs; a gap means a broken file.
    if (entries.length !== version - from) throw new Error(`change log of ${projectId}: ${entries.length} entries between versions ${from} and ${version}`)
    let doc: JsonObject
    let checkpointBytes: number
    if (base !== undefined) {
      doc = JSON.parse(base) as JsonObject
      checkpointBytes = base.length
    } else {
      const replacement = this.statements.entryAt.get(projectId, from) as string
      doc = (JSON.parse(replacement) as { value: JsonObject }).value
      checkpointBytes = replacement.length
    }
    let tailBytes = 0
    for (const entry of entries) {
      tailBytes += entry.length
      doc = applyContentOperation(doc, replayOperationOf(entry))
    }
    // Unchanged since a stored checkpoint: its text is the JSON; otherwise serialize once.
    const json = entries.length === 0 && base !== undefined ? base : JSON.stringify(doc)
    return { doc, json, tailCount: entries.length, tailBytes, checkpointBytes }
  }
}
