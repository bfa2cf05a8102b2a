// The operator's actions, done with the same services as the HTTP API (so passwords and
// keys are hashed, validated and scoped exactly as over HTTP). No argument parsing and no
// terminal I/O here: each action takes values and returns the text to print.
import { z } from 'zod'
import { ContentdError } from '../../shared/errors.js'
import { parsePatch } from '../../shared/json-patch.js'
import { apiKeyBody, credentialsBody, projectBody, usernameField } from '../../shared/schemas.js'
import { parseDuration, type Config } from '../config.js'
import { displayName, type Identity } from '../services/identity.js'
import { createServices, type Services } from '../services/index.js'
import { readAll, readPage } from '../services/pagination.js'
import { splitProjectRef } from '../../shared/project-ref.js'
import type { Actor, Store, UserRecord } from '../store/types.js'
import { printChangeLog, type LogOptions } from './change-log.js'
import { parseContentFromStdin, parseInput, parseJsonInput } from './input.js'
import { UsageError } from './usage.js'
import { WebhookAdmin } from './webhook-admin.js'

/** Who the change log records for content the operator imports (docs/design.md §9). */
export const CLI_ACTOR: Actor = { type: 'system', name: 'cli' }

export class Admin {
  private readonly services: Services
  /** `contentd webhook …` (webhook-admin.ts). */
  readonly webhooks: WebhookAdmin
  private readonly batchLimit: number

  /** The operator is held to the same quotas as users (MAX_KEYS_PER_USER, MAX_PROJECTS_PER_USER). */
  constructor (private readonly store: Store, config: Config) {
    this.services = createServices({ store, sessionTtlMs: config.sessionTtlMs, quotas: config.quotas, schemaLimitBytes: config.schemaLimitBytes })
    this.webhooks = new WebhookAdmin(store, this.services.projects, config)
    this.batchLimit = config.batchLimit
  }

  async createUser (name: string, password: string): Promise<string> {
    const { username, password: checked } = parseInput(credentialsBody, { username: name, password }, 'user create')
    const user = await this.services.accounts.createUser(username, checked)
    return `Created user ${displayName(user.username)}`
  }

  /** Page by page, so even a very large user table is read in bounded steps. */
  async listUsers (): Promise<string> {
    const users = await readAll(query => readPage(query, z.string(), page => this.store.listUsers(page), u => u.username))
    if (users.length === 0) return 'No users.'
    return users.map(u => `${displayName(u.username)}\t${u.createdAt}`).join('\n')
  }

  async createProject (ref: string, name: string | undefined): Promise<string> {
    const parts = projectRefParts(ref)
    const owner = await this.user(parts.owner)
    const { slug, name: checkedName } = parseInput(projectBody, name === undefined ? { slug: parts.slug } : { slug: parts.slug, name }, 'project create')
    const project = await this.services.projects.create(owner.id, owner.username, slug, checkedName)
    return `Created project ${displayName(owner.username)}/${project.slug}`
  }

  async createKey (userName: string, options: { name: string, permission: string, projects: string[], paths: string[], ops: string[], expires: string | undefined }): Promise<string> {
    const user = await this.user(userName)
    let expiresAt: string | undefined
    if (options.expires !== undefined) {
      const ms = parseDuration(options.expires)
      if (ms === null || ms <= 0) throw new UsageError(`--expires must be a duration such as 30d, 12h, 90m or 45s (got "${options.expires}")`, 'key create')
      expiresAt = new Date(Date.now() + ms).toISOString()
    }
    const request = parseInput(apiKeyBody, {
      name: options.name,
      permission: options.permission,
      ...(options.projects.length > 0 ? { projects: options.projects } : {}),
      ...(options.paths.length > 0 ? { paths: options.paths } : {}),
      ...(options.ops.length > 0 ? { ops: options.ops } : {}),
      ...(expiresAt ? { expiresAt } : {})
    }, 'key create')
    // Acting as the user: a key never reaches further than its user could.
    const identity: Identity = { user, session: null, key: null, credentialHash: '' }
    const created = await this.services.keys.create(identity, request)
    const scope = created.projects === null ? 'all projects' : created.projects.join(',')
    return `Created API key ${created.id} "${created.name}" (${created.permission}, ${scope}${narrowing(created)}, expires ${created.expiresAt ?? 'never'}); shown once: ${created.key}`
  }

  async listKeys (userName: string): Promise<string> {
    const user = await this.user(userName)
    const keys = await readAll(query => this.services.keys.list(user.id, query))
    if (keys.length === 0) return `${displayName(user.username)} has no API keys.`
    return keys.map(k => [
      k.id, `${k.prefix}…`, k.permission, k.projects === null ? 'all' : k.projects.join(','),
      k.paths === null ? 'all paths' : k.paths.join(','), k.ops === null ? 'all ops' : k.ops.join(','),
      k.expiresAt ?? 'never', k.name
    ].join('\t')).join('\n')
  }

  async revokeKey (id: string): Promise<string> {
    await this.services.keys.revokeAnyOwner(id)
    return `Revoked API key ${id}`
  }

  /** The operator sets the schema; it records "operator" as who set it. */
  async setSchema (ref: string, text: string, source: string): Promise<string> {
    const project = await this.services.projects.find(...refArgs(ref))
    const schema = parseJsonInput(text, source)
    try {
      await this.services.schemas.set(project, schema, OPERATOR)
    } catch (e) {
      // Every violation on its own line after the first: the operator fixes them all at once.
      if (e instanceof ContentdError && e.errors && e.errors.length > 1) {
        throw new ContentdError(e.code, e.errors.map(v => `${v.path === '' ? '(root)' : v.path}: ${v.message}`).join('; '), { errors: e.errors, status: e.status })
      }
      throw e
    }
    return `Set the schema of ${displayName(project.ownerName)}/${project.slug}`
  }

  async getSchema (ref: string): Promise<string> {
    const project = await this.services.projects.find(...refArgs(ref))
    return JSON.stringify((await this.services.schemas.get(project)).schema, null, 2)
  }

  async removeSchema (ref: string): Promise<string> {
    const project = await this.services.projects.find(...refArgs(ref))
    await this.services.schemas.remove(project)
    return `Removed the schema of ${displayName(project.ownerName)}/${project.slug}`
  }

  async exportContent (ref: string): Promise<string> {
    const project = await this.services.projects.find(...refArgs(ref))
    const snapshot = await this.store.readContent(project.id)
    if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
    return snapshot.json ?? JSON.stringify(snapshot.content)
  }

  /** Prints the change log through `options.print` (line by line, as it is read); returns ''. */
  async log (ref: string, options: LogOptions): Promise<string> {
    await printChangeLog(this.store, this.services.projects, ...refArgs(ref), options)
    return ''
  }

  async importContent (ref: string, text: string): Promise<string> {
    const project = await this.services.projects.find(...refArgs(ref))
    const content = parseContentFromStdin(text)
    // An operator's action outside the API: its log entry names the CLI (docs/design.md §9).
    const { version } = await this.store.applyOperation(project, { op: 'update', value: content }, { actor: CLI_ACTOR })
    return `Imported content into ${displayName(project.ownerName)}/${project.slug} (version ${version})`
  }

  async patchContent (ref: string, text: string): Promise<string> {
    const project = await this.services.projects.find(...refArgs(ref))
    let patch: unknown
    try {
      patch = JSON.parse(text)
    } catch {
      throw new ContentdError('INVALID_JSON', 'the patch file is not JSON')
    }
    // As PATCH …/content does (docs/design.md §10), recorded as the operator's change.
    const { version } = await this.store.applyOperation(project, { op: 'patch', operations: parsePatch(patch, this.batchLimit) }, { actor: CLI_ACTOR })
    return `Patched ${displayName(project.ownerName)}/${project.slug} (version ${version})`
  }

  private async user (name: string): Promise<UserRecord> {
    const parsed = usernameField.safeParse(name)
    if (!parsed.success) throw new UsageError(`"${name}" is not a username like @alice`)
    const user = await this.store.findUserByName(parsed.data)
    if (!user) throw new ContentdError('USER_NOT_FOUND', displayName(parsed.data))
    return user
  }
}

/** Who set a schema through the CLI. */
const OPERATOR = 'operator'

function narrowing (key: { paths: string[] | null, ops: string[] | null }): string {
  return (key.paths === null ? '' : `, paths ${key.paths.join(',')}`) + (key.ops === null ? '' : `, ops ${key.ops.join(',')}`)
}

function projectRefParts (ref: string): { owner: string, slug: string } {
  const parts = splitProjectRef(ref)
  if (!parts) throw new UsageError(`"${ref}" is not a project reference like @alice/demo`)
  return parts
}

function refArgs (ref: string): [string, string] {
  const { owner, slug } = projectRefParts(ref)
  return [`@${owner}`, slug]
}
