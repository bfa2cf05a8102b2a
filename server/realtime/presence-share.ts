// Where a node's presence members are shared with the others, so `presence:list` on any node
// answers for all of them (docs/design.md §14). One node keeps them in memory; several share
// them through Redis (presence-redis.ts). Either way the members of one project are capped,
// and a join past the cap is refused, atomically: no two nodes can both take the last place.
import type { PresenceMember } from '../../shared/presence.js'

/** A member as shared: which project (id, for keys; canonical reference, for events). */
export interface SharedMember {
  projectId: string
  project: string
  member: PresenceMember
}

export interface PresenceShare {
  /** Adds the member unless its project already has `limit` others; false when it is full. */
  join (entry: SharedMember, limit: number): Promise<boolean>
  /** Replaces a joined member's state. */
  update (entry: SharedMember): Promise<void>
  leave (entry: SharedMember): Promise<void>
  /** Every live member of the project, on every node, in no particular order. */
  list (projectId: string): Promise<PresenceMember[]>
  close (): Promise<void>
}

/** One node: the members are all here. */
export class LocalPresenceShare implements PresenceShare {
  private readonly projects = new Map<string, Map<string, PresenceMember>>()

  async join ({ projectId, member }: SharedMember, limit: number): Promise<boolean> {
    let members = this.projects.get(projectId)
    if (!members) { members = new Map(); this.projects.set(projectId, members) }
    if (!members.has(member.id) && members.size >= limit) {
      if (members.size === 0) this.projects.delete(projectId)
      return false
    }
    members.set(member.id, member)
    return true
  }

  async update ({ projectId, member }: SharedMember): Promise<void> {
    const members = this.projects.get(projectId)
    if (members?.has(member.id)) members.set(member.id, member)
  }

  async leave ({ projectId, member }: SharedMember): Promise<void> {
    const members = this.projects.get(projectId)
    if (!members?.delete(member.id)) return
    if (members.size === 0) this.projects.delete(projectId)
  }

  async list (projectId: string): Promise<PresenceMember[]> {
    return [...this.projects.get(projectId)?.values() ?? []]
  }

  async close (): Promise<void> {
    this.projects.clear()
  }
}
