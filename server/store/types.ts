// The storage interface. Every store (embedded SQLite, MongoDB) implements it, and one
// contract suite (test/store-contract.test.ts) runs against each, so they behave alike.
// Records carry hashes of secrets only, never the secrets.
import type { JsonObject } from '../../shared/json.js'
import type { NarrowableOperation } from '../../shared/key-scope.js'
import type { Operation } from '../../shared/operations.js'
import type { JsonSchema } from '../schema/compile.js'

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

  createApiKey (key: ApiKeyRecord): Promise<void>
  findApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | null>
  /** One key by id, whoever owns it (the caller checks ownership). */
  findApiKeyById (id: string): Promise<ApiKeyRecord | null>
  listApiKeys (userId: string): Promise<ApiKeyRecord[]>
  /** Removes the key; false when the user has no key with that id. */
  deleteApiKey (userId: string, id: string): Promise<boolean>

  /** Every user, by username (for the operator's CLI). */
  listUsers (): Promise<UserRecord[]>

  createProject (project: Omit<ProjectRecord, 'version'>): Promise<ProjectRecord>
  findProject (ownerName: string, slug: string): Promise<ProjectRecord | null>
  findProjectsByIds (ids: string[]): Promise<ProjectRecord[]>
  /** Projects the user owns or is a member of, with the user's role in each. */
  listProjectsForUser (userId: string): Promise<Array<ProjectRecord & { role: ProjectRole }>>
  deleteProject (id: string): Promise<void>

  setMember (projectId: string, userId: string, role: MemberRole): Promise<void>
  removeMember (projectId: string, userId: string): Promise<boolean>
  findMemberRole (projectId: string, userId: string): Promise<MemberRole | null>
  listMembers (projectId: string): Promise<MemberRecord[]>

  readContent (projectId: string): Promise<ContentSnapshot | null>
  /**
   * Applies one operation atomically and bumps the version; resolves with the new version.
   * Throws ContentdError (PRECONDITION_FAILED, CONTENT_TOO_LARGE, an operation's 400s,
   * SCHEMA_VIOLATION when the project's schema refuses the result, PROJECT_NOT_FOUND)
   * having changed nothing. The schema is the one stored when the write commits: read in
   * the same atomic step, so a schema set meanwhile is never bypassed.
   */
  applyOperation (project: ProjectRecord, operation: Operation, options?: ApplyOptions): Promise<{ version: number }>

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
