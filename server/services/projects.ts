// Projects, members and the access decision for one request.
import { z } from 'zod'
import { ContentdError } from '../../shared/errors.js'
import { accessDenial, type Access } from '../auth/rights.js'
import { newId } from '../auth/tokens.js'
import type { Clock } from '../clock.js'
import type { MemberRole, ProjectPosition, ProjectRecord, ProjectRole, Store } from '../store/types.js'
import type { MemberView, ProjectView } from '../../shared/api/projects.js'
import type { AccessEvents } from './access-events.js'
import { displayName, type Identity } from './identity.js'
import { readPage, type Page, type PageQuery } from './pagination.js'

// What clients see of projects and members: the shapes of shared/api/projects.ts.
export type { MemberView, ProjectView }

/** What the owner's settings tabs would otherwise have to ask for and get 404 (docs/rules.md): only for the owner. */
export interface OwnerFlags { hasRules: boolean, hasAppAuth: boolean }

export function projectView (project: ProjectRecord, role?: ProjectRole, hasSchema?: boolean, owner?: OwnerFlags): ProjectView {
  return { username: displayName(project.ownerName), slug: project.slug, name: project.name, createdAt: project.createdAt, version: project.version, ...(role ? { role } : {}), ...(hasSchema === undefined ? {} : { hasSchema }), ...(owner ?? {}) }
}

export function projectRef (project: ProjectRecord): string {
  return `${displayName(project.ownerName)}/${project.slug}`
}

const projectPosition: z.ZodType<ProjectPosition> = z.object({ ownerName: z.string(), slug: z.string() })
const usernamePosition: z.ZodType<string> = z.string()

export class Projects {
  /**
   * `accessEvents` hears of deleted projects and removed members, to end their subscriptions;
   * `maxPerUser` is MAX_PROJECTS_PER_USER.
   */
  constructor (private readonly store: Store, private readonly accessEvents: AccessEvents, private readonly now: Clock, private readonly maxPerUser: number) {}

  /**
   * The project a URL names. `usernameParam` must carry the "@" (400 otherwise); a missing
   * user or project is 404, told apart so callers can fix the right half.
   */
  async find (usernameParam: string, slug: string): Promise<ProjectRecord> {
    if (!usernameParam.startsWith('@')) throw new ContentdError('INVALID_USERNAME')
    const owner = usernameParam.slice(1).toLowerCase()
    const project = await this.store.findProject(owner, slug)
    if (project) return project
    if (!(await this.store.findUserByName(owner))) throw new ContentdError('USER_NOT_FOUND', displayName(owner))
    throw new ContentdError('PROJECT_NOT_FOUND', `${displayName(owner)}/${slug}`)
  }

  async roleOf (project: ProjectRecord, userId: string): Promise<ProjectRole | null> {
    if (project.ownerId === userId) return 'owner'
    return this.store.findMemberRole(project.id, userId)
  }

  /** Throws the right 403 unless the identity may read or write the project. */
  async authorize (identity: Identity, project: ProjectRecord, needed: Access): Promise<ProjectRole> {
    const role = await this.roleOf(project, identity.user.id)
    const denial = accessDenial(role, identity.key, project.id, needed)
    if (denial) throw new ContentdError(denial)
    return role as ProjectRole
  }

  async create (ownerId: string, ownerName: string, slug: string, name: string | undefined): Promise<ProjectRecord> {
    const project = { id: newId('prj_'), ownerId, ownerName, slug, name: name ?? slug, createdAt: new Date(this.now()).toISOString() }
    return this.store.createProject(project, this.maxPerUser)
  }

  /** One page of what the identity can see: its own and shared projects, narrowed by a key's scope. */
  async listFor (identity: Identity, query: PageQuery): Promise<Page<ProjectView>> {
    const scope = identity.key?.projectIds ?? null
    const page = await readPage(query, projectPosition, p => this.store.listProjectsForUser(identity.user.id, p, scope), p => ({ ownerName: p.ownerName, slug: p.slug }))
    return { items: page.items.map(p => projectView(p, p.role)), nextCursor: page.nextCursor }
  }

  /** Whether the project has a schema (GET of one project says so). */
  async hasSchema (project: ProjectRecord): Promise<boolean> {
    return (await this.store.getSchema(project.id)) !== null
  }

  /** Whether the project has rules and trusts an app sign-in (GET of one project tells its owner). */
  async ownerFlags (project: ProjectRecord): Promise<OwnerFlags> {
    const [rules, auth] = await Promise.all([this.store.appRules.getRules(project.id), this.store.appRules.getAppAuth(project.id)])
    return { hasRules: rules !== null, hasAppAuth: auth !== null }
  }

  async delete (project: ProjectRecord): Promise<void> {
    await this.store.deleteProject(project.id)
    this.accessEvents.emit({ kind: 'project-deleted', projectId: project.id })
  }

  async setMember (project: ProjectRecord, memberParam: string, role: MemberRole): Promise<{ username: string, role: MemberRole }> {
    const member = await this.memberUser(project, memberParam)
    await this.store.setMember(project.id, member.id, role)
    return { username: displayName(member.username), role }
  }

  async removeMember (project: ProjectRecord, memberParam: string): Promise<void> {
    const member = await this.memberUser(project, memberParam)
    if (!(await this.store.removeMember(project.id, member.id))) throw new ContentdError('MEMBER_NOT_FOUND')
    this.accessEvents.emit({ kind: 'member-removed', projectId: project.id, userId: member.id })
  }

  /** One page of the project's members, by username. */
  async members (project: ProjectRecord, query: PageQuery): Promise<Page<MemberView>> {
    const page = await readPage(query, usernamePosition, p => this.store.listMembers(project.id, p), m => m.username)
    return { items: page.items.map(m => ({ username: displayName(m.username), role: m.role })), nextCursor: page.nextCursor }
  }

  private async memberUser (project: ProjectRecord, memberParam: string) {
    const name = memberParam.replace(/^@/, '').toLowerCase()
    const user = await this.store.findUserByName(name)
    if (!user) throw new ContentdError('USER_NOT_FOUND', displayName(name))
    if (user.id === project.ownerId) throw new ContentdError('INVALID_BODY', 'the owner cannot be made a member of their own project')
    return user
  }
}
