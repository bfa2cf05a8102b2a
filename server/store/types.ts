// The storage interface. Every store (embedded SQLite, MongoDB) implements it, and one
// contract suite (test/store-contract.test.ts) runs against each, so they behave alike.
// Records carry hashes of secrets only, never the secrets.
import type { JsonObject } from '../../shared/json.js'
import type { Operation } from '../../shared/operations.js'

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

export interface ApplyOptions {
  ifMatch?: VersionCondition
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
}

/** Emitted synchronously, in version order per project, right after a change commits. */
export interface CommittedChange {
  project: ProjectRecord
  version: number
  operation: Operation
  at: string
}

export type CommitListener = (change: CommittedChange) => void

export interface Store {
  readonly kind: 'sqlite' | 'mongodb'
  /** Runs migrations / creates indexes. Throws with a clear message when unreachable. */
  init (): Promise<void>
  ping (): Promise<void>
  close (): Promise<void>
  onCommit (listener: CommitListener): void

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
   * One page of the user's keys, each with its scoped projects' names: one query. A key's
   * cost (`costBudget`) is the number of projects it is scoped to.
   */
  listApiKeys (userId: string, page: PageRequest<KeyPosition>): Promise<ListedApiKey[]>
  /** Removes the key; false when the user has no key with that id. */
  deleteApiKey (userId: string, id: string): Promise<boolean>

  /** One page of all users, by username (for the operator's CLI); `after` is a username. */
  listUsers (page: PageRequest<string>): Promise<UserRecord[]>

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

  readContent (projectId: string): Promise<ContentSnapshot | null>
  /**
   * Applies one operation atomically and bumps the version; resolves with the new version.
   * Throws ContentdError (PRECONDITION_FAILED, CONTENT_TOO_LARGE, an operation's 400s,
   * PROJECT_NOT_FOUND) having changed nothing.
   */
  applyOperation (project: ProjectRecord, operation: Operation, options?: ApplyOptions): Promise<{ version: number }>
}
