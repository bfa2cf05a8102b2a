// Accounts, projects and API keys (docs/api.md "Accounts, projects, members and keys"): the
// management half of the HTTP API. Signing up and in need no token; everything else here
// needs a session token (an API key gets 403 SESSION_REQUIRED), except listing projects.
import type { NarrowableOperation } from '../key-scope.js'
import type { Http } from './http.js'
import { readAllPages } from './pages.js'
import { parseProjectRef } from './project-ref.js'

export type ProjectRole = 'owner' | 'editor' | 'viewer'
export type MemberRole = 'editor' | 'viewer'
export type KeyPermission = 'read' | 'write'

/** What signup and login answer: a session token for createClient({ token }). */
export interface SessionGrant {
  token: string
  /** "@alice" */
  username: string
  expiresAt: string
}

export interface ProjectSummary {
  /** The owner, "@alice". */
  username: string
  slug: string
  name: string
  createdAt: string
  version: number
  /** The caller's role; absent only where the server has no caller (never from these calls). */
  role?: ProjectRole
  /** Only from project(…).info(): whether the project has a schema. */
  hasSchema?: boolean
}

export interface Member {
  /** "@bob" */
  username: string
  role: MemberRole
}

export interface ApiKeyInfo {
  id: string
  name: string
  /** The first characters of the key, to tell keys apart. */
  prefix: string
  permission: KeyPermission
  /** Project references the key is limited to; null: every project its user can access. */
  projects: string[] | null
  /** Dot paths the key is narrowed to (at or below one of them); null: not narrowed by path. */
  paths: string[] | null
  /** Operations the key is narrowed to; null: every operation its permission allows. */
  ops: NarrowableOperation[] | null
  expiresAt: string | null
  createdAt: string
}

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

/** The created key: `key` is the secret, returned this once and never again. */
export interface CreatedApiKey extends ApiKeyInfo {
  key: string
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
  async logout (): Promise<{ message: string }> {
    return (await this.http.request<{ message: string }>('POST', '/api/auth/logout')).body
  }

  async me (): Promise<{ username: string, createdAt: string }> {
    return (await this.http.request<{ username: string, createdAt: string }>('GET', '/api/me')).body
  }

  async projects (): Promise<ProjectSummary[]> {
    return readAllPages<ProjectSummary, 'projects'>(this.http, '/api/projects', 'projects')
  }

  async createProject (project: { slug: string, name?: string }): Promise<ProjectSummary> {
    return (await this.http.request<ProjectSummary>('POST', '/api/projects', { body: project })).body
  }

  /** Deletes the project with its content and memberships (owner only). */
  async deleteProject (ref: string): Promise<{ message: string }> {
    return (await this.http.request<{ message: string }>('DELETE', projectPath(ref))).body
  }

  async keys (): Promise<ApiKeyInfo[]> {
    return readAllPages<ApiKeyInfo, 'keys'>(this.http, '/api/keys', 'keys')
  }

  async createKey (key: NewApiKey): Promise<CreatedApiKey> {
    return (await this.http.request<CreatedApiKey>('POST', '/api/keys', { body: key })).body
  }

  /** The key stops working at once, and live connections using it end. */
  async revokeKey (id: string): Promise<{ message: string }> {
    return (await this.http.request<{ message: string }>('DELETE', `/api/keys/${encodeURIComponent(id)}`)).body
  }
}

/** "/api/@alice/demo" for "@alice/demo" or "alice/demo". */
export function projectPath (ref: string): string {
  const { owner, slug } = parseProjectRef(ref)
  return `/api/@${owner}/${encodeURIComponent(slug)}`
}
