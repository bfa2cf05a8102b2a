// Per-process memory of the look-ups every request makes (credential by hash, user by id,
// project by owner and slug, member role), so a content operation does not pay three or
// four SQLite queries before it starts; and of the project names a page of API keys shows
// (by project id), which a key walk would otherwise read again on every page.
//
// Correctness rests on two rules:
// - Before use, SQLite is asked for `PRAGMA data_version`, which changes whenever ANY OTHER
//   connection (another process, or another store in this one) commits to the file; a
//   change empties every map. The answer is reused only by the look-ups of the same
//   event-loop callback and the promise continuations it sets off (see refresh), and only
//   while no store in this process has committed since (the CommitCounter every store of
//   the process shares): no request can have been read in between, so every request that
//   arrives after a commit elsewhere checks after that commit, and code that commits through
//   one store and reads through another sees its change. (The pragma opens a read
//   transaction, as costly as the queries it replaces; asking once per request instead of
//   once per look-up is the gain.)
// - This store's own writes to the records kept here empty the maps too (the pragma does
//   not move for a connection's own commits). So a revocation, here or in another process
//   on the same file, takes effect on the very next request.
// Misses are not remembered (except member roles, which are bounded like everything here),
// so unknown credentials cannot grow the maps; each map is emptied when it gets too big.
import type { ApiKeyRecord, ListedApiKey, MemberRole, ProjectName, ProjectRecord, SessionRecord, UserRecord } from '../types.js'

const MAX_ENTRIES_PER_MAP = 10_000
const MAX_LISTED_KEYS = 2_000

/**
 * Commits by the stores of one process: a check made before one of them is not reused.
 * Create one per process and give it to every store, so two stores on one file (tests do
 * this; so would a process serving two apps) see each other's commits at once.
 */
export class CommitCounter {
  private commits = 0

  get count (): number { return this.commits }

  /** After each commit (content and everything else). */
  note (): void {
    this.commits++
  }
}

class BoundedMap<V> extends Map<string, V> {
  constructor (private readonly maxEntries = MAX_ENTRIES_PER_MAP) {
    super()
  }

  remember (key: string, value: V): V {
    if (this.size >= this.maxEntries) this.clear()
    this.set(key, value)
    return value
  }
}

export class LookupCache {
  readonly keys = new BoundedMap<ApiKeyRecord>()
  readonly sessions = new BoundedMap<SessionRecord>()
  readonly users = new BoundedMap<UserRecord>()
  /** By `owner\0slug`; see rememberProject. */
  readonly projects = new BoundedMap<ProjectRecord>()
  private readonly projectNames = new Map<string, string>()
  /** Owner and slug by project id: the scopes listed on key pages (see SqliteRecords.listApiKeys). */
  readonly projectNamesById = new BoundedMap<ProjectName>()
  /**
   * Keys as a page of `GET /api/keys` shows them, by key id (SqliteRecords.listApiKeys): the
   * same object while nothing changed, so what is built from one (the view's JSON) can be
   * kept with it. Fewer entries than the other maps: each holds its scope (up to 100
   * project ids and names); 2,000 is two users' worth at MAX_KEYS_PER_USER's default.
   */
  readonly listedKeys = new BoundedMap<ListedApiKey>(MAX_LISTED_KEYS)
  /** By `projectId\0userId`; null remembers "not a member". */
  readonly memberRoles = new BoundedMap<MemberRole | null>()
  private dataVersion: number
  /** True from a check until the current callback's microtasks have all run. */
  private checked = false
  private checkedAfterCommits = 0
  private readonly forgetCheck = () => { this.checked = false }
  // A microtask that schedules a tick: the tick runs only after every microtask queued so far
  // (and those they queue) has run, and before Node goes back to timers or I/O.
  private readonly forgetCheckAfterMicrotasks = () => { process.nextTick(this.forgetCheck) }

  /** `readDataVersion` returns the connection's current `PRAGMA data_version`. */
  constructor (private readonly readDataVersion: () => number, private readonly processCommits: CommitCounter) {
    this.dataVersion = readDataVersion()
  }

  /**
   * Call before every use: forgets everything when another connection has committed. Asks
   * SQLite at most once per event-loop callback (with its promise continuations).
   */
  refresh (): this {
    const commits = this.processCommits.count
    if (this.checked && this.checkedAfterCommits === commits) return this
    if (!this.checked) queueMicrotask(this.forgetCheckAfterMicrotasks)
    this.checked = true
    this.checkedAfterCommits = commits
    const now = this.readDataVersion()
    if (now !== this.dataVersion) {
      this.dataVersion = now
      this.clear()
    }
    return this
  }

  /** After this store's own writes to users, credentials, projects or members. */
  forgetAfterOwnWrite (): void {
    this.processCommits.note()
    this.clear()
  }

  private clear (): void {
    this.keys.clear()
    this.sessions.clear()
    this.users.clear()
    this.projects.clear()
    this.projectNames.clear()
    this.projectNamesById.clear()
    this.listedKeys.clear()
    this.memberRoles.clear()
  }

  rememberProject (name: string, project: ProjectRecord): ProjectRecord {
    if (this.projects.size >= MAX_ENTRIES_PER_MAP) this.projectNames.clear()
    this.projectNames.set(project.id, name)
    return this.projects.remember(name, project)
  }

  /**
   * This store committed a new content version: other stores of the process check again,
   * and the remembered project shows it (a new record, as callers may still hold the old one).
   */
  contentCommitted (projectId: string, version: number): void {
    this.processCommits.note()
    const name = this.projectNames.get(projectId)
    const project = name === undefined ? undefined : this.projects.get(name)
    if (name !== undefined && project !== undefined) this.projects.set(name, { ...project, version })
  }
}
