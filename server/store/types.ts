// The storage interface, by concern. Every store (embedded SQLite, MongoDB) implements it,
// and one contract suite (test/store-contract/, a file per concern) runs against each, so
// they behave alike.
// Records carry hashes of secrets only, never the secrets.
import type { Actor, ChangeEntry } from '../../shared/events.js'
import type { JsonObject } from '../../shared/json.js'
import type { NarrowableOperation } from '../../shared/key-scope.js'
import type { JsonSchema } from '../schema/compile.js'
import type { AppRulesStore } from './app-rules-types.js'
import type { RulesCheck } from '../rules/check.js'
import type { WebhookStore } from './webhook-types.js'
import type { ContentOperation } from '../../shared/compound.js'
import type { ImportCounts, InstanceRecord } from './instance-records.js'

export type { Actor, ChangeEntry } from '../../shared/events.js'

export type Permission = 'read' | 'write'
export type MemberRole = 'viewer' | 'editor'
export type ProjectRole = 'owner' | MemberRole

export interface UserRecord {
  id: string
  /** Lower-case, without the "@". */
  username: string
  passwordHash: string
  createdAt: string
}

export interface SessionRecord {
  tokenHash: string
  userId: string
  createdAt: string
  expiresAt: string
}

export interface ApiKeyRecord {
  id: string
  userId: string
  name: string
  /** The visible start of the key, for people to recognise it; not enough to use it. */
  prefix: string
  keyHash: string
  permission: Permission
  /** Project ids the key is limited to; null means every project the user can access. */
  projectIds: string[] | null
  /** Dot paths the key may write at or below; null: anywhere (docs/design.md §12). */
  paths: string[] | null
  /** The only operations the key may use; null: every one. */
  ops: NarrowableOperation[] | null
  expiresAt: string | null
  createdAt: string
}

export interface ProjectRecord {
  id: string
  ownerId: string
  ownerName: string
  slug: string
  name: string
  createdAt: string
  version: number
}

export interface MemberRecord {
  userId: string
  username: string
  role: MemberRole
}

/** A project's content schema (docs/design.md §12). */
export interface SchemaRecord {
  /** New for every schema set; compiled schemas are cached by it. */
  revision: string
  schema: JsonSchema
  /** Who set it: "@alice", or "operator" for the CLI. */
  setBy: string
  setAt: string
}

/**
 * One page of a list, in the list's order: at most `limit` items strictly after `after` (the
 * sort key of the last item of the previous page; null for the first page). Every list is
 * read a page at a time, so no request costs more than a page, whoever owns the data
 * (docs/design.md §13).
 */
export interface PageRequest<Position> {
  after: Position | null
  limit: number
  /**
   * For lists whose items cost unequal work (keys: the projects they scope). The store may
   * then stop before `limit`, at an item before which the items it returns cost more than
   * `costBudget` in total, and never before the second item; it may also ignore it.
   */
  costBudget?: number
}

/** Keys are listed oldest first: by creation time, then id. */
export interface KeyPosition { createdAt: string, id: string }
/** Projects are listed by owner, then slug. */
export interface ProjectPosition { ownerName: string, slug: string }

/** A project as people name it: `@ownerName/slug`. */
export interface ProjectName { ownerName: string, slug: string }

export interface ListedApiKey extends ApiKeyRecord {
  /** The scoped projects that still exist, in the key's order; null: every project (projectIds null). */
  projectNames: ProjectName[] | null
}

/** `*` matches any version; otherwise one of the listed versions must be current. */
export type VersionCondition = '*' | number[]

/**
 * Makes the content what it was at `version`, as one new change (docs/design.md §9). Not a
 * pure operation on a document (it needs the history), so it is a store operation only.
 */
export interface RevertOperation {
  op: 'revert'
  version: number
}

/** What applyOperation takes: a content operation (batches and patches included), or a revert. */
export type StoreOperation = ContentOperation | RevertOperation

export interface ApplyOptions {
  ifMatch?: VersionCondition
  /** If-None-Match: refused (PRECONDITION_FAILED) when the current version matches. */
  ifNoneMatch?: VersionCondition
  /** Who makes the change: recorded in its log entry (docs/design.md §9). */
  actor: Actor
  /**
   * The request's Idempotency-Key, remembered beside the change's log entry (never in it) so a
   * retry after the key's stored answer expired is still known as applied (docs/design.md §19).
   */
  idempotency?: LoggedIdempotencyKey
  /** An app user's rules (docs/design.md §17), checked by the engine beside the schema; absent for everyone else. */
  rules?: RulesCheck
  /**
   * The caller made the operation for this one write and reads its value no more (the HTTP
   * routes): once a store has committed the write, and will not prepare it again, the
   * operation lets go of its value, which lives on in the document (server/engine/content-engine.ts).
   */
  valueHandedOver?: boolean
}

/** An Idempotency-Key as the change log remembers it (docs/design.md §19): who, which key, which request. */
export interface LoggedIdempotencyKey {
  caller: string
  key: string
  fingerprint: string
}

/** The logged change a key made (docs/design.md §19): enough to answer a retry as the first answer did. */
export interface LoggedIdempotentChange {
  fingerprint: string
  version: number
  op: string
  /** A revert's target version (its answer names it). */
  revertedTo?: number
}

/**
 * How much history a store keeps (docs/design.md §9). `limit`: the newest entries answerable
 * per project (HISTORY_LIMIT; 0 keeps all). `enabled: false` (HISTORY=off, the embedded
 * store only) records no history at all: the benchmark's reference for what the log costs.
 */
export interface HistoryOptions {
  limit: number
  enabled: boolean
}

/** A page of a project's change log: entries after `since`, ascending. */
export interface ChangesPage {
  /** The project's current version when the page was read. */
  version: number
  changes: ChangeEntry[]
  /**
   * More entries follow the last one of this page, cut by `limit` or by CHANGES_PAGE_BYTES
   * (ask again with its version as `since`).
   */
  more: boolean
}

/** Candidate entries for one path (ContentStorage.readPathEntries). */
export interface PathEntriesPage {
  /** The project's current version when the page was read. */
  version: number
  entries: ChangeEntry[]
  more: boolean
}

/** One entry of a ChangesJsonPage. */
export interface EntryJson {
  version: number
  /** The entry's JSON as the store keeps it: UTF-8, without `project` (change-pages.ts puts it in). */
  stored: Buffer
  /** UTF-8 length of the entry's JSON as sent, `project` included (what CHANGES_PAGE_BYTES counts). */
  bytes: number
}

/**
 * The same page as ChangesPage with each entry as its stored JSON, unparsed: SSE replay, the
 * changes API and Socket.IO resume acks write these as they are (change-pages.ts), so relaying
 * a large entry costs a copy, not a parse and a serialization (docs/design.md §13b).
 */
export interface ChangesJsonPage {
  version: number
  /** The entries' `project`, "@owner/slug". */
  project: string
  entries: EntryJson[]
  more: boolean
}

export interface ContentSnapshot {
  version: number
  /**
   * May be the store's live cached document, which later writes mutate in place: serialize
   * or copy it before yielding to the event loop (res.json and socket acks do so at once).
   */
  content: JsonObject
  /** The content serialized, when the store has it at hand (saves re-serializing 1 MiB). */
  json?: string
  /**
   * Where forms derived from `json` (compressed bodies) are kept with the store's cached
   * document, counted in CACHE_BYTES; absent when the store keeps no copy of this version.
   */
  encoded?: EncodedForms
}

/** Encoded forms of one version's JSON, by name ("gzip", "br"), each made once. */
export interface EncodedForms {
  get (name: string): Promise<Buffer> | undefined
  /** Keeps `form` (still being made) for later readers of the same version. */
  set (name: string, form: Promise<Buffer>): void
}

/** Emitted synchronously, in version order per project, right after a change commits. */
export interface CommittedChange {
  project: ProjectRecord
  /**
   * The change exactly as its log entry (`project` included): what the realtime layer sends
   * on. Its values are the listener's own; later changes never alter them.
   */
  entry: ChangeEntry
  /**
   * Makes the entry's JSON text from what the write already serialized (server/feed/wire.ts);
   * the change feed registers it only for a change some consumer is there to send.
   */
  wire?: () => string
  /**
   * performance.now() when the store's commit returned (durable; CommitEmitter stamps it), so
   * what is sent later can be timed from the commit (contentd_query_event_delay_seconds).
   */
  committedAt?: number
}

export type CommitListener = (change: CommittedChange) => void

/**
 * One Idempotency-Key (docs/design.md §10): per project, caller (`user:<id>` for a session,
 * `key:<id>` for an API key) and the key string the client chose.
 */
export interface IdempotencyId {
  projectId: string
  caller: string
  key: string
}

/** Claiming a key for a request: its fingerprint (method, path and body) and when the claim lapses. */
export interface IdempotencyClaim extends IdempotencyId {
  fingerprint: string
  /** ISO times: a record whose expiresAt <= now is gone (claimed anew). */
  now: string
  expiresAt: string
  /** The user the record counts against: the session's, or the API key's owner. */
  userId: string
  /**
   * MAX_IDEMPOTENCY_KEYS_PER_USER (docs/design.md §13b): with this many of the user's records
   * live, a new key is `full` (an existing one still answers). Without it, no limit.
   */
  maxPerUser?: number
}

/** The first answer, as it is replayed. */
export interface StoredResponse {
  status: number
  body: string
  etag: string | null
}

/** What claiming found: the key is now this request's, or an earlier request's, running or answered. */
export type IdempotencyState =
  | { state: 'claimed' }
  | { state: 'running', fingerprint: string }
  | { state: 'done', fingerprint: string, response: StoredResponse }
  /** The user has maxPerUser live records; `retryAt` (ISO) is when the oldest stops counting. */
  | { state: 'full', retryAt: string }

/**
 * The Store, split by concern (issue 27). A store implements the storage primitives of each
 * concern (StoreLifecycle, AccountStorage, ProjectStorage, ContentStorage, IdempotencyStorage,
 * InstanceStorage, and `webhooks`: WebhookStore) plus one content-write primitive handed to
 * the content engine (server/engine/content-engine.ts ContentCommitter), never called
 * directly. The write rules (ContentApi) are the engine's: EngineStore gives them to every
 * store. The contract suite has one file per concern (test/store-contract/).
 */
export interface Store extends StoreLifecycle, AccountStorage, ProjectStorage, ContentStorage, ContentApi, IdempotencyStorage, InstanceStorage {}

export interface StoreLifecycle {
  readonly kind: 'sqlite' | 'mongodb'
  /** Runs migrations / creates indexes. Throws with a clear message when unreachable. */
  init (): Promise<void>
  ping (): Promise<void>
  close (): Promise<void>
  /** Webhooks: cursors, leases, deliveries (webhook-types.ts; docs/design.md §11). */
  readonly webhooks: WebhookStore
  /** App users' rules and trust settings (docs/design.md §17, app-rules-types.ts). */
  readonly appRules: AppRulesStore
}

/** Users, sessions and API keys (docs/design.md §5). */
export interface AccountStorage {
  createUser (user: UserRecord): Promise<void>
  findUserByName (username: string): Promise<UserRecord | null>
  findUserById (id: string): Promise<UserRecord | null>

  createSession (session: SessionRecord): Promise<void>
  findSession (tokenHash: string): Promise<SessionRecord | null>
  deleteSession (tokenHash: string): Promise<void>

  /**
   * Adds the key unless the user already has `maxPerUser` keys: then QUOTA_EXCEEDED, nothing
   * added. Counting and adding are one atomic step, so concurrent creates at the limit
   * (from any number of processes) cannot both pass. The services always pass
   * MAX_KEYS_PER_USER; without it there is no limit.
   */
  createApiKey (key: ApiKeyRecord, maxPerUser?: number): Promise<void>
  findApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | null>
  /** One key by id, whoever owns it (the caller checks ownership). */
  findApiKeyById (id: string): Promise<ApiKeyRecord | null>
  /**
   * One page of the user's keys, each with its scoped projects' names: a fixed number of
   * queries, reading no more keys than the page holds. A key's cost (`costBudget`) is the
   * number of projects it is scoped to.
   */
  listApiKeys (userId: string, page: PageRequest<KeyPosition>): Promise<ListedApiKey[]>
  /** Removes the key; false when the user has no key with that id. */
  deleteApiKey (userId: string, id: string): Promise<boolean>

  /** One page of all users, by username (for the operator's CLI); `after` is a username. */
  listUsers (page: PageRequest<string>): Promise<UserRecord[]>
}

/** Projects and their members (docs/design.md §5, §6). */
export interface ProjectStorage {
  /**
   * Adds the project unless its owner already owns `maxPerOwner`: then QUOTA_EXCEEDED, nothing
   * added (atomically, like createApiKey). A taken slug is PROJECT_EXISTS. The services always
   * pass MAX_PROJECTS_PER_USER; without it there is no limit.
   */
  createProject (project: Omit<ProjectRecord, 'version'>, maxPerOwner?: number): Promise<ProjectRecord>
  findProject (ownerName: string, slug: string): Promise<ProjectRecord | null>
  /** The projects that exist among `ids`, in that order: one query. */
  findProjectsByIds (ids: string[]): Promise<ProjectRecord[]>
  /**
   * One page of the projects the user owns or is a member of, with the user's role in each;
   * with `scope` (an API key's project ids), only those.
   */
  listProjectsForUser (userId: string, page: PageRequest<ProjectPosition>, scope: string[] | null): Promise<Array<ProjectRecord & { role: ProjectRole }>>
  deleteProject (id: string): Promise<void>

  setMember (projectId: string, userId: string, role: MemberRole): Promise<void>
  removeMember (projectId: string, userId: string): Promise<boolean>
  findMemberRole (projectId: string, userId: string): Promise<MemberRole | null>
  /** One page of the project's members, by username; `after` is a username. */
  listMembers (projectId: string, page: PageRequest<string>): Promise<MemberRecord[]>
}

/**
 * A project's content as the store keeps it: reads of the current and past versions, the
 * change log, the schema. Writes go through the content engine (ContentApi), which hands each
 * to the store's commit primitive (server/engine/content-engine.ts ContentCommitter).
 */
export interface ContentStorage {
  readContent (projectId: string): Promise<ContentSnapshot | null>
  /**
   * The current content as JSON text only, for a caller that parses its own copy (live
   * queries, issue 30). Unlike readContent it hands out no live document, so the embedded
   * store's next write need not copy its cached one (content-log.ts).
   */
  readContentJson (projectId: string): Promise<{ version: number, json: string } | null>
  /** readChanges' page, the same entries, as JSON text (for the wire, unparsed). */
  readChangesJson (project: ProjectRecord, since: number, limit: number): Promise<ChangesJsonPage>

  /**
   * The content as it was at `version`, at a bounded cost (checkpoints; never a replay of
   * the whole log). Throws VERSION_NOT_FOUND above the current version, HISTORY_EXPIRED
   * below the oldest answerable one (the same bound as readChanges' `since`),
   * PROJECT_NOT_FOUND. Read-only: the snapshot may share values with the store's caches
   * (the embedded store keeps checkpoints parsed, content-log.ts) or be the live current
   * document (see ContentSnapshot).
   */
  readContentAt (projectId: string, version: number): Promise<ContentSnapshot>

  /**
   * The log entries after `since` that may touch the dot path `path` (docs/design.md §15),
   * found through the path index, never a scan of the whole log: a superset of those that
   * touch it (server/store/path-changes.ts decides exactly with shared/live-path.ts),
   * ascending, at most `limit` (>= 1) and at most CHANGES_PAGE_BYTES of them as stored (the
   * first always). `more`: candidates remain after the last one. Throws as readChanges.
   */
  readPathEntries (project: ProjectRecord, path: string, since: number, limit: number): Promise<PathEntriesPage>

  getSchema (projectId: string): Promise<SchemaRecord | null>
  /**
   * Stores the project's schema (replacing one), unless the current content breaks it:
   * SCHEMA_VIOLATION (409) with nothing stored. The check and the store are one atomic step
   * against content writes. Neither content nor version change. PROJECT_NOT_FOUND for a
   * missing project; INVALID_SCHEMA for a schema that does not compile.
   */
  putSchema (projectId: string, record: SchemaRecord): Promise<void>
  /** Removes the project's schema; false when it had none. */
  deleteSchema (projectId: string): Promise<boolean>
}

/** The write rules and their notification, the same for every store (server/engine/: EngineStore gives them). */
export interface ContentApi {
  /** Hears every change this store commits (CommittedChange). */
  onCommit (listener: CommitListener): void
  /**
   * Applies one operation atomically, bumps the version and appends the change to the
   * project's log in the same atomic step (docs/design.md §9); resolves with the new version.
   * Takes the operation's value over: the caller must not change it afterwards (the store
   * may keep it as its document).
   * Throws ContentdError (PRECONDITION_FAILED, CONTENT_TOO_LARGE, an operation's 400s,
   * SCHEMA_VIOLATION when the project's schema refuses the result, PROJECT_NOT_FOUND; for a
   * revert VERSION_NOT_FOUND or HISTORY_EXPIRED, after PRECONDITION_FAILED) having changed
   * nothing. The schema is the one stored when the write commits: read in the same atomic
   * step as the content and its log entry, so a schema set meanwhile is never bypassed.
   */
  applyOperation (project: ProjectRecord, operation: StoreOperation, options: ApplyOptions): Promise<{ version: number }>

  /**
   * The log entries after version `since`, ascending, at most `limit` (>= 1) of them and at
   * most CHANGES_PAGE_BYTES of them counted as their JSON as sent (the first entry always
   * comes, however large; docs/design.md §13b), read without loading what does not fit. Throws
   * INVALID_VERSION when `since` is above the current version, HISTORY_EXPIRED when an entry
   * after `since` is no longer kept (the oldest kept version − 1 is answerable),
   * PROJECT_NOT_FOUND. Streaming readers catch up with it, then follow onCommit.
   */
  readChanges (project: ProjectRecord, since: number, limit: number): Promise<ChangesPage>
}

/** Idempotency-Key records (docs/design.md §10, §13b). */
export interface IdempotencyStorage {
  /**
   * Idempotency-Key (docs/design.md §10). Atomically: when no unexpired record exists, records
   * the claim (running) and answers `claimed` — or `full`, recording nothing, when the user
   * has `maxPerUser` live records (server/store/idempotency-usage.ts); otherwise answers the
   * record. Works across nodes and restarts: the record is in the store.
   */
  claimIdempotencyKey (claim: IdempotencyClaim): Promise<IdempotencyState>
  /** Records the answer of a claimed key; null releases the claim (the answer is not kept). */
  finishIdempotencyKey (id: IdempotencyId, response: StoredResponse | null): Promise<void>
  /** Deletes the records expired at `now`; resolves with how many. */
  deleteExpiredIdempotencyKeys (now: string): Promise<number>
  /**
   * The change still in the project's log that was made under this Idempotency-Key by this
   * caller (docs/design.md §19), or null: the newest one, found through an index.
   */
  findLoggedIdempotency (id: IdempotencyId): Promise<LoggedIdempotentChange | null>
}

/** The whole instance, for export and import (docs/design.md §18). */
export interface InstanceStorage {
  /**
   * The whole instance as records, in the order of instance-records.ts (docs/design.md §18),
   * read one at a time: at most one project's content is held at once.
   */
  exportRecords (): AsyncIterable<InstanceRecord>
  /**
   * Loads an export into this store, all or nothing: refused when the store holds any user
   * or project; a record out of order (instance-import-order.ts) or refused by the store
   * throws InstanceLineError naming its line, as does an error of `records` itself, and
   * leaves the store as empty as it was.
   */
  importRecords (records: AsyncIterable<InstanceRecord>): Promise<ImportCounts>
}
