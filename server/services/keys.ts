// API keys: minted by a signed-in user, shown once, stored as a SHA-256 hash with a visible
// prefix, optionally limited to some projects, to a lifetime, and narrowed to some paths and
// operations (docs/design.md §12).
import { ContentdError } from '../../shared/errors.js'
import type { NarrowableOperation } from '../../shared/key-scope.js'
import { hashSecret, newId, newSecret, VISIBLE_KEY_CHARS } from '../auth/tokens.js'
import type { Clock } from '../clock.js'
import type { ApiKeyRecord, Permission, Store } from '../store/types.js'
import type { AccessEvents } from './access-events.js'
import type { Identity } from './identity.js'
import { splitProjectRef } from '../../shared/project-ref.js'
import { projectRef, type Projects } from './projects.js'

export interface KeyView {
  id: string
  name: string
  prefix: string
  permission: Permission
  /** null: every project the user can access. */
  projects: string[] | null
  /** null: not narrowed to paths. */
  paths: string[] | null
  /** null: not narrowed to operations. */
  ops: NarrowableOperation[] | null
  expiresAt: string | null
  createdAt: string
}

export interface NewKeyRequest {
  name: string
  permission: Permission
  projects?: string[] | undefined
  /** Dot paths, already validated (apiKeyBody). */
  paths?: string[] | undefined
  ops?: NarrowableOperation[] | undefined
  expiresAt?: string | undefined
}

export class Keys {
  /** `accessEvents` hears of revoked keys, to end the connections using them. */
  constructor (private readonly store: Store, private readonly projects: Projects, private readonly accessEvents: AccessEvents, private readonly now: Clock) {}

  async create (identity: Identity, request: NewKeyRequest): Promise<KeyView & { key: string }> {
    let projectIds: string[] | null = null
    if (request.projects) {
      projectIds = []
      for (const ref of request.projects) {
        const parts = splitProjectRef(ref)
        if (!parts) throw new ContentdError('INVALID_BODY', `"${ref}" is not a project reference`)
        const project = await this.projects.find(`@${parts.owner}`, parts.slug)
        // A key can never reach further than its user: scope only projects the user can read.
        await this.projects.authorize(identity, project, 'read')
        if (!projectIds.includes(project.id)) projectIds.push(project.id)
      }
    }
    const expiresAt = request.expiresAt ? new Date(request.expiresAt).toISOString() : null
    if (expiresAt !== null && Date.parse(expiresAt) <= this.now()) throw new ContentdError('INVALID_BODY', 'expiresAt must be in the future')
    const key = newSecret('key')
    const record: ApiKeyRecord = {
      id: newId('key_'),
      userId: identity.user.id,
      name: request.name,
      prefix: key.slice(0, VISIBLE_KEY_CHARS),
      keyHash: hashSecret(key),
      permission: request.permission,
      projectIds,
      paths: request.paths ? [...new Set(request.paths)] : null,
      ops: request.ops ? [...new Set(request.ops)] : null,
      expiresAt,
      createdAt: new Date(this.now()).toISOString()
    }
    await this.store.createApiKey(record)
    return { ...(await this.view(record)), key }
  }

  async list (userId: string): Promise<KeyView[]> {
    const keys = await this.store.listApiKeys(userId)
    return Promise.all(keys.map(k => this.view(k)))
  }

  /** A user revokes one of their keys; another user's key is as unknown to them as a missing one. */
  async revoke (userId: string, id: string): Promise<void> {
    const key = await this.store.findApiKeyById(id)
    if (!key || key.userId !== userId) throw new ContentdError('KEY_NOT_FOUND')
    await this.remove(key)
  }

  /** The operator (CLI) revokes any key, whoever owns it. */
  async revokeAnyOwner (id: string): Promise<void> {
    const key = await this.store.findApiKeyById(id)
    if (!key) throw new ContentdError('KEY_NOT_FOUND', id)
    await this.remove(key)
  }

  private async remove (key: ApiKeyRecord): Promise<void> {
    // Gone already when another revocation won the race: the same answer as a missing key.
    if (!(await this.store.deleteApiKey(key.userId, key.id))) throw new ContentdError('KEY_NOT_FOUND')
    // The hash is what live connections are keyed by.
    this.accessEvents.emit({ kind: 'credential-revoked', credentialHash: key.keyHash })
  }

  private async view (k: ApiKeyRecord): Promise<KeyView> {
    const projects = k.projectIds === null ? null : (await this.store.findProjectsByIds(k.projectIds)).map(projectRef)
    return { id: k.id, name: k.name, prefix: k.prefix, permission: k.permission, projects, paths: k.paths, ops: k.ops, expiresAt: k.expiresAt, createdAt: k.createdAt }
  }
}
