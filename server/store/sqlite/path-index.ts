// The rows of `change_paths`, the change log's path index (docs/design.md §15; migrations.ts).
// One row per path per *unit*: the versions of one project appended together (a group commit,
// or the part of it before a read of the log inside its transaction flushed it). The row's key
// is the unit's last version, the same for every path of the unit, and `versions` lists the
// unit's versions that recorded the path, as offsets below the key ("15,14,…,0"), NULL when
// that is the key alone (every row written before units, and every single-write unit).
//
// Why units: a group commit of 16 increments of one counter wrote 16 rows of one path, each a
// b-tree insert into an index-shaped tree that splits by rebalancing siblings; now it writes
// one (BENCHMARKS.md, "What the benchmark changed").
//
// Why the key is the unit's end for every path: units of a project are disjoint ranges of
// versions, in order, so every row keyed above K holds only versions above K. A search that
// took every row keyed at or below K therefore knows every indexed version at or below K
// (pathCandidates), whatever the rows keyed above K hold.

/** One row as read: its key and its `versions` column. */
export interface PathIndexRow { version: number, versions: string | null }

/**
 * The most versions one unit holds: a unit is closed when it reaches it, however large the
 * group commit, so a row lists at most this many and a search that completes a cut-off unit
 * reads at most this many versions' paths (docs/design.md §13b).
 */
export const UNIT_VERSIONS = 64

/** A project's versions appended since the last flush, and the paths each recorded. */
export class PathIndexUnit {
  last = 0
  versions = 0
  readonly byPath = new Map<string, number[]>()

  add (version: number, paths: readonly string[]): void {
    if (paths.length === 0) return
    this.last = version
    this.versions += 1
    for (const path of paths) {
      const versions = this.byPath.get(path)
      if (versions) versions.push(version)
      else this.byPath.set(path, [version])
    }
  }

  /** The unit's rows as INSERT parameters (project_id, path, version, versions), row after row. */
  rowsFor (projectId: string, out: Array<string | number | null>): void {
    for (const [path, versions] of this.byPath) out.push(projectId, path, this.last, encodeVersions(this.last, versions))
  }
}

/**
 * The path-index rows a transaction has yet to write, per project: its open unit, and the rows
 * of the units closed at UNIT_VERSIONS. Written by the log's flushAppends (content-log.ts).
 */
export class PendingPathIndex {
  private readonly open = new Map<string, PathIndexUnit>()
  /** Closed units' rows as INSERT parameters, row after row. */
  private readonly closed: Array<string | number | null> = []

  add (projectId: string, version: number, paths: readonly string[]): void {
    if (paths.length === 0) return
    let unit = this.open.get(projectId)
    if (!unit) this.open.set(projectId, unit = new PathIndexUnit())
    unit.add(version, paths)
    if (unit.versions < UNIT_VERSIONS) return
    unit.rowsFor(projectId, this.closed)
    this.open.delete(projectId)
  }

  /** Every pending row as INSERT parameters (empty: nothing to write), then nothing pending. */
  take (): Array<string | number | null> {
    const rows = this.closed.splice(0)
    for (const [projectId, unit] of this.open) unit.rowsFor(projectId, rows)
    this.open.clear()
    return rows
  }

  clear (): void {
    this.open.clear()
    this.closed.length = 0
  }
}

/** The `versions` column for `versions` (ascending, all at most `key`). */
export function encodeVersions (key: number, versions: readonly number[]): string | null {
  if (versions.length === 1 && versions[0] === key) return null
  return versions.map(version => key - version).join(',')
}

/** The versions a row stands for. */
export function decodeVersions (row: PathIndexRow): number[] {
  if (row.versions === null) return [row.version]
  return row.versions.split(',').map(offset => row.version - Number(offset))
}

/**
 * Reads the rows of a path search keyed in (since, until], ascending by key, at most `limit`
 * of them (-1: all).
 */
export type PathRowReader = (since: number, until: number, limit: number) => PathIndexRow[]

/**
 * The `want` smallest indexed versions above `since`, ascending, without duplicates. Reads
 * `want` rows at a time; when a read is cut off at key K, the rest of K's unit is read too,
 * so everything at or below K is known before anything is answered (the header's reason).
 */
export function pathCandidates (read: PathRowReader, since: number, want: number): number[] {
  const found = new Set<number>()
  let from = since
  for (;;) {
    const rows = read(from, Number.MAX_SAFE_INTEGER, want)
    const cut = rows.length === want
    const last = rows.at(-1)?.version ?? from
    const complete = cut ? [...rows.filter(row => row.version < last), ...read(last - 1, last, -1)] : rows
    for (const row of complete) for (const version of decodeVersions(row)) if (version > since) found.add(version)
    // Every row keyed above `last` holds versions above it only: enough found, or nothing left.
    if (!cut || found.size >= want) break
    from = last
  }
  return [...found].sort((a, b) => a - b).slice(0, want)
}
