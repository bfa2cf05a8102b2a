// API keys: minted by a signed-in user, shown once, stored as a SHA-256 hash with a visible
// prefix, optionally limited to some projects and to a lifetime.
import { ContentdError } from '../../shared/errors.js'
import { hashSecret, newId, newSecret, VISIBLE_KEY_CHARS } from '../auth/tokens.js'
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
  expiresAt: string | null
  createdAt: string
}

export interface NewKeyRequest {
  name: string
  permission: Permission
  projects?: string[] | undefined
  expiresAt?: string | undefined
}

export class Keys {
  constructor (private readonly store: Store, private readonly projects: Projects, private readonly accessEvents?: AccessEvents) {}

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
    if (expiresAt !== null && Date.parse(expiresAt) <= Date.now()) throw new ContentdError('INVALID_BODY', 'expiresAt must be in the future')
    const key = newSecret('key')
    const record: ApiKeyRecord = {
      id: newId('key_'),
      userId: identity.user.id,
      name: request.name,
      prefix: key.slice(0, VISIBLE_KEY_CHARS),
      keyHash: hashSecret(key),
      permission: request.permission,
      projectIds,
      expiresAt,
      createdAt: new Date().toISOString()
    }
    await this.store.createApiKey(record)
    return { ...(await this.view(record)), key }
  }

  async list (userId: string): Promise<KeyView[]> {
    const keys = await this.store.listApiKeys(userId)
    return Promise.all(keys.map(k => this.view(k)))
  }

  async revoke (userId: string, id: string): Promise<void> {
    // The hash is what live connections are keyed by; look it up before it is gone.
    const keyHash = this.accessEvents ? (await this.store.listApiKeys(userId)).find(k => k.id === id)?.keyHash : undefined
    if (!(await this.store.deleteApiKey(userId, id))) throw new ContentdError('KEY_NOT_FOUND')
    if (keyHash) this.accessEvents?.emit({ kind: 'credential-revoked', credentialHash: keyHash })
  }

  private async view (k: ApiKeyRecord): Promise<KeyView> {
    const projects = k.projectIds === null ? null : (await this.store.findProjectsByIds(k.projectIds)).map(projectRef)
    return { id: k.id, name: k.name, prefix: k.prefix, permission: k.permission, projects, expiresAt: k.expiresAt, createdAt: k.createdAt }
  }
}
