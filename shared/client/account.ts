// Accounts, projects and API keys (docs/api.md "Accounts, projects, members and keys"): the
// management half of the HTTP API. Signing up and in need no token; everything else here
// needs a session token (an API key gets 403 SESSION_REQUIRED), except listing projects.
import type { SessionGrant, MeView } from '../api/accounts.js'
import type { MessageBody } from '../api/common.js'
import type { CreatedKeyView, KeyPermission, KeyView } from '../api/keys.js'
import type { MemberRole, MemberView, ProjectRole, ProjectView } from '../api/projects.js'
import type { NarrowableOperation } from '../key-scope.js'
import type { Http } from './http.js'
import { readAllPages } from './pages.js'
import { parseProjectRef } from './project-ref.js'

// The answers' types are the server's own: aliases of the response schemas in shared/api/, so
// an SDK type cannot drift from what the server sends (test/api/shapes-types.test.ts).
export type { KeyPermission, MemberRole, ProjectRole }

/** What signup and login answer: a session token for createClient({ token }). */
export type { SessionGrant }

/** A project as listed and created; `role` is the caller's (absent only where the server has no caller). */
export type ProjectSummary = ProjectView

/** A member: "@bob" and the role. */
export type Member = MemberView

/** A key as listed: never its secret; `projects`, `paths` and `ops` null when the key is not limited by them. */
export type ApiKeyInfo = KeyView

/** The created key: `key` is the secret, returned this once and never again. */
export type CreatedApiKey = CreatedKeyView

/** Who the token belongs to. */
export type Me = MeView

export interface NewApiKey {
  name: string
  permission: KeyPermission
  /** Limit the key to these projects ("@alice/demo"); absent: every project, now or later. */
  projects?: string[]
  /** Narrow the key to these dot paths (1 to 100; docs/schema.md#narrowed-keys); absent: every path. */
  paths?: string[]
  /** Narrow the key to these operations; absent: every operation its permission allows. */
  ops?: NarrowableOperation[]
  /** ISO 8601 with an offset, in the future; absent: never expires. */
  expiresAt?: string
}

export class AccountRequests {
  constructor (private readonly http: Http) {}

  async signup (username: string, password: string): Promise<SessionGrant> {
    return (await this.http.request<SessionGrant>('POST', '/api/auth/signup', { body: { username, password } })).body
  }

  async login (username: string, password: string): Promise<SessionGrant> {
    return (await this.http.request<SessionGrant>('POST', '/api/auth/login', { body: { username, password } })).body
  }

  /** Ends the session the client was made with. */
  async logout (): Promise<MessageBody> {
    return (await this.http.request<MessageBody>('POST', '/api/auth/logout')).body
  }

  async me (): Promise<Me> {
    return (await this.http.request<Me>('GET', '/api/me')).body
  }

  async projects (): Promise<ProjectSummary[]> {
    return readAllPages<ProjectSummary, 'projects'>(this.http, '/api/projects', 'projects')
  }

  async createProject (project: { slug: string, name?: string }): Promise<ProjectSummary> {
    return (await this.http.request<ProjectSummary>('POST', '/api/projects', { body: project })).body
  }

  /** Deletes the project with its content and memberships (owner only). */
  async deleteProject (ref: string): Promise<MessageBody> {
    return (await this.http.request<MessageBody>('DELETE', projectPath(ref))).body
  }

  async keys (): Promise<ApiKeyInfo[]> {
    return readAllPages<ApiKeyInfo, 'keys'>(this.http, '/api/keys', 'keys')
  }

  async createKey (key: NewApiKey): Promise<CreatedApiKey> {
    return (await this.http.request<CreatedApiKey>('POST', '/api/keys', { body: key })).body
  }

  /** The key stops working at once, and live connections using it end. */
  async revokeKey (id: string): Promise<MessageBody> {
    return (await this.http.request<MessageBody>('DELETE', `/api/keys/${encodeURIComponent(id)}`)).body
  }
}

/** "/api/@alice/demo" for "@alice/demo" or "alice/demo". */
export function projectPath (ref: string): string {
  const { owner, slug } = parseProjectRef(ref)
  return `/api/@${owner}/${encodeURIComponent(slug)}`
}
