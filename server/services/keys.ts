// API keys: minted by a signed-in user, shown once, stored as a SHA-256 hash with a visible
// prefix, optionally limited to some projects, to a lifetime, and narrowed to some paths and
// operations (docs/design.md §12).
import type { CreatedKeyView, KeyView } from '../../shared/api/keys.js'
import { ContentdError } from '../../shared/errors.js'
import type { NarrowableOperation } from '../../shared/key-scope.js'
import { hashSecret, newId, newSecret, VISIBLE_KEY_CHARS } from '../auth/tokens.js'
import type { Clock } from '../clock.js'
import type { ApiKeyRecord, ListedApiKey, Permission, ProjectName, Store } from '../store/types.js'
import type { AccessEvents } from './access-events.js'
import type { Identity } from './identity.js'
import { splitProjectRef } from '../../shared/project-ref.js'
import { displayName } from './identity.js'
import { createdAtIdPosition, readPage, type Page, type PageQuery } from './pagination.js'
import type { Projects } from './projects.js'

// What clients see of a key: the shape of shared/api/keys.ts.
export type { KeyView }

export interface NewKeyRequest {
  name: string
  permission: Permission
  projects?: string[] | undefined
  /** Dot paths, already validated (apiKeyBody). */
  paths?: string[] | undefined
  ops?: NarrowableOperation[] | undefined
  expiresAt?: string | undefined
}


/**
 * Scoped projects named on one page of keys, at most (a page still holds at least one key).
 * Each page is a block of the event loop that other users' requests wait behind: a page of
 * 100 keys scoped to 100 projects each took ~10-35 ms, and a few clients listing in a loop
 * held everyone else up (issue 12). At 200 (two such keys) a page costs about what any
 * other request does (docs/operations.md#rate-limits), whatever the keys' scopes.
 */
export const KEY_PAGE_SCOPE_BUDGET = 200
const scopeCost = { of: (k: ListedApiKey) => k.projectIds?.length ?? 0, budget: KEY_PAGE_SCOPE_BUDGET }

export class Keys {
  /**
   * `accessEvents` hears of revoked keys, to end the connections using them; `maxPerUser` is
   * MAX_KEYS_PER_USER.
   */
  constructor (private readonly store: Store, private readonly projects: Projects, private readonly accessEvents: AccessEvents, private readonly now: Clock, private readonly maxPerUser: number) {}

  async create (identity: Identity, request: NewKeyRequest): Promise<CreatedKeyView> {
    let projectIds: string[] | null = null
    const projectNames: ProjectName[] = []
    if (request.projects) {
      projectIds = []
      for (const ref of request.projects) {
        const parts = splitProjectRef(ref)
        if (!parts) throw new ContentdError('INVALID_BODY', `"${ref}" is not a project reference`)
        const project = await this.projects.find(`@${parts.owner}`, parts.slug)
        // A key can never reach further than its user: scope only projects the user can read.
        await this.projects.authorize(identity, project, 'read')
        if (!projectIds.includes(project.id)) {
          projectIds.push(project.id)
          projectNames.push({ ownerName: project.ownerName, slug: project.slug })
        }
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
    await this.store.createApiKey(record, this.maxPerUser)
    return { ...view({ ...record, projectNames: projectIds === null ? null : projectNames }), key }
  }

  /** One page of the user's keys, oldest first: one store query, whatever the keys' scopes. */
  async list (userId: string, query: PageQuery): Promise<Page<KeyView>> {
    const page = await this.listedPage(userId, query)
    return { items: page.items.map(view), nextCursor: page.nextCursor }
  }

  /**
   * The same page as the JSON text of `GET /api/keys`'s answer, byte for byte what
   * `JSON.stringify({keys, nextCursor})` of `list`'s page gives, and the number of scoped
   * projects it names (what the page is charged). Each key's view is serialized once per
   * listed-key object the store gives (see viewJson): a store that remembers its listed
   * keys (SQLite) makes a walk through the same keys again cost no serialization.
   */
  async listJson (userId: string, query: PageQuery): Promise<{ json: string, scopedProjects: number }> {
    const page = await this.listedPage(userId, query)
    let scopedProjects = 0
    const views: string[] = []
    for (const key of page.items) {
      scopedProjects += key.projectNames?.length ?? 0
      views.push(viewJson(key))
    }
    return { json: `{"keys":[${views.join(',')}],"nextCursor":${JSON.stringify(page.nextCursor)}}`, scopedProjects }
  }

  private async listedPage (userId: string, query: PageQuery): Promise<Page<ListedApiKey>> {
    return readPage(query, createdAtIdPosition, p => this.store.listApiKeys(userId, p), k => ({ createdAt: k.createdAt, id: k.id }), scopeCost)
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
}

/**
 * The JSON of each listed key's view, kept with the listed-key object itself: the store hands
 * out the same object until something changes (then a new one, and the old entry goes with
 * the old object), so the text is never stale and never outlives the key the store keeps.
 * Listed keys are not modified after the store builds them (nothing here or in the route does).
 */
const viewJsonOf = new WeakMap<ListedApiKey, string>()

function viewJson (k: ListedApiKey): string {
  let json = viewJsonOf.get(k)
  if (json === undefined) {
    json = JSON.stringify(view(k))
    viewJsonOf.set(k, json)
  }
  return json
}

/** What clients see of a key: no hash, its scope as project references that still exist, its narrowing. */
function view (k: ListedApiKey): KeyView {
  const projects = k.projectNames === null ? null : k.projectNames.map(p => `${displayName(p.ownerName)}/${p.slug}`)
  return { id: k.id, name: k.name, prefix: k.prefix, permission: k.permission, projects, paths: k.paths, ops: k.ops, expiresAt: k.expiresAt, createdAt: k.createdAt }
}
