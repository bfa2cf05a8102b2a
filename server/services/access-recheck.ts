// Revocation always reaches live streams (docs/design.md §13b): every few seconds, the node
// asks the store whether what its live streams rest on still holds, and announces what no
// longer does as the access event the revocation would have sent.
//
// The access event of a revocation is one message, sent by the process that made it: a CLI
// process (a separate process on the same store) has no live streams and no Redis relay,
// and a message published while Redis is down is lost. The store is what every node and the
// CLI share, so it is the one thing a stream can always re-check against.
//
// The cost is bounded by what is distinct, not by how many streams there are: one look-up
// per live credential (a user's thousand streams on one key are one check), one query for
// all the projects, and one look-up per (project, member) pair that is not the owner's.
import type { Logger } from '../logger.js'
import type { Clock } from '../clock.js'
import type { Store } from '../store/types.js'
import type { AccessEvent, AccessEvents } from './access-events.js'
import type { Identity } from './identity.js'

/** How often live streams are re-checked: with the check itself, well inside the 5 s of §13b. */
export const RECHECK_INTERVAL_MS = 2000

/** What one live stream or subscription rests on. */
export interface LiveGrant {
  identity: Identity
  /** The project it streams; null for a connection as such (a Socket.IO connection). */
  projectId: string | null
}

/** Something that holds live streams: lists what each rests on. */
export interface GrantSource {
  grants (): Iterable<LiveGrant>
}

export class AccessRecheck {
  private readonly sources: GrantSource[] = []
  private timer: NodeJS.Timeout | null = null
  private running: Promise<void> | null = null
  private appProjectsListener: ((projectIds: ReadonlySet<string>) => void) | null = null

  constructor (
    private readonly store: Store,
    private readonly accessEvents: AccessEvents,
    private readonly now: Clock,
    private readonly logger: Logger,
    private readonly intervalMs = RECHECK_INTERVAL_MS
  ) {}

  /** [rules, issue 31] Hears the projects app users' live streams rest on, at each round (app-rules.ts refresh). */
  watchAppProjects (listener: (projectIds: ReadonlySet<string>) => void): void {
    this.appProjectsListener = listener
  }

  addSource (source: GrantSource): void {
    this.sources.push(source)
  }

  start (): void {
    if (this.timer) return
    this.timer = setInterval(() => { void this.checkOnce() }, this.intervalMs)
    this.timer.unref()
  }

  async stop (): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.running
  }

  /** One round (skipped while the previous one still runs); resolves once it is done. */
  checkOnce (): Promise<void> {
    if (!this.running) {
      this.running = this.check()
        .catch((e: unknown) => { this.logger.warn({ err: e }, 're-checking live streams failed; trying again at the next interval') })
        .finally(() => { this.running = null })
    }
    return this.running
  }

  private async check (): Promise<void> {
    const credentials = new Map<string, Identity>()
    const pairs = new Map<string, { projectId: string, userId: string }>()
    // [rules, issue 31] An app user's stream rests on its token (ended at its exp) and on its
    // project being there: no contentd credential or membership to look up.
    const appProjects = new Set<string>()
    for (const source of this.sources) {
      for (const { identity, projectId } of source.grants()) {
        if (identity.app) {
          if (projectId !== null) appProjects.add(projectId)
          continue
        }
        credentials.set(identity.credentialHash, identity)
        if (projectId !== null) pairs.set(`${projectId}\0${identity.user.id}`, { projectId, userId: identity.user.id })
      }
    }
    if (appProjects.size > 0) this.appProjectsListener?.(appProjects)
    if (credentials.size === 0 && appProjects.size === 0) return
    // Every look-up first, then the events: a store that fails half-way announces nothing.
    const ended: AccessEvent[] = []
    for (const [credentialHash, identity] of credentials) {
      if (!await this.credentialHolds(identity)) ended.push({ kind: 'credential-revoked', credentialHash })
    }
    const projectIds = [...new Set([...pairs.values()].map(pair => pair.projectId).concat([...appProjects]))]
    const owners = new Map((await this.store.findProjectsByIds(projectIds)).map(project => [project.id, project.ownerId]))
    for (const projectId of projectIds) if (!owners.has(projectId)) ended.push({ kind: 'project-deleted', projectId })
    for (const { projectId, userId } of pairs.values()) {
      const owner = owners.get(projectId)
      if (owner === undefined || owner === userId) continue
      if (await this.store.findMemberRole(projectId, userId) === null) ended.push({ kind: 'member-removed', projectId, userId })
    }
    for (const event of ended) this.accessEvents.emit(event)
  }

  /** The session or key still exists and has not expired (the user behind it cannot be deleted). */
  private async credentialHolds (identity: Identity): Promise<boolean> {
    const { credentialHash } = identity
    const expiresAt = identity.session
      ? (await this.store.findSession(credentialHash))?.expiresAt
      : (await this.store.findApiKeyByHash(credentialHash))?.expiresAt
    if (expiresAt === undefined) return false
    return expiresAt === null || Date.parse(expiresAt) > this.now()
  }
}
