// Presence shared through Redis (REDIS_URL), so every node lists every node's members and a
// node that dies without saying goodbye loses its members within PRESENCE_TTL
// (docs/design.md §14).
//
// Keys, all under `contentd:presence:`:
//   members:<projectId>        hash  member id → {node, project, member}
//   node:<nodeId>              string, expiring: the node's heartbeat
//   node-projects:<nodeId>     set   the projects the node has members in
//   nodes                      set   the nodes that may have members
//
// Every node renews its heartbeat every TTL/6 with an expiry of TTL/2, and every TTL/6 looks
// for nodes in `nodes` whose heartbeat has expired: it removes their members (each project in
// one Lua script, so two nodes doing it at once announce each `leave` once) and announces the
// leaves to the projects' rooms on every node. So a node that is killed loses its members at
// most TTL/2 + TTL/6 (two thirds of PRESENCE_TTL) after its last heartbeat, and a node is
// only taken for dead after missing two heartbeats in a row.
//
// A node that was taken for dead although it lives (its event loop or its Redis connection
// stalled for TTL/3), or whose Redis lost its data, finds its heartbeat key gone at its next
// heartbeat and writes all its members again, announcing them as joins. Between the time a
// node dies and its burial, lists already leave its members out (their heartbeat is gone).
import { randomUUID } from 'node:crypto'
import type { PresenceChangeType, PresenceMember } from '../../shared/presence.js'
import type { Logger } from '../logger.js'
import type { RedisConnection } from '../redis-connection.js'
import type { PresenceShare, SharedMember } from './presence-share.js'

const PREFIX = 'contentd:presence:'
const NODES = `${PREFIX}nodes`
const membersKey = (projectId: string) => `${PREFIX}members:${projectId}`
const heartbeatKey = (nodeId: string) => `${PREFIX}node:${nodeId}`
const nodeProjectsKey = (nodeId: string) => `${PREFIX}node-projects:${nodeId}`

// KEYS: members hash, this node's project set. ARGV: member id, entry, limit, project id.
// A member already there is replaced; a new one only while the project has room.
const JOIN = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[4])
return 1`

// KEYS: members hash, the dead node's heartbeat. ARGV: the dead node's id. Removes and returns
// its members, unless its heartbeat is back (then it has written them again, or is about to).
const BURY_MEMBERS = `
if redis.call('EXISTS', KEYS[2]) == 1 then return {} end
local removed = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local ok, entry = pcall(cjson.decode, all[i + 1])
  if not ok or entry.node == ARGV[1] then
    redis.call('HDEL', KEYS[1], all[i])
    if ok then table.insert(removed, all[i + 1]) end
  end
end
return removed`

// KEYS: nodes set, the dead node's heartbeat, its project set. ARGV: its id.
const FORGET_NODE = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[3])
return 1`

interface StoredEntry extends SharedMember {
  node: string
}

export interface RedisPresenceOptions {
  redis: RedisConnection
  ttlMs: number
  logger: Logger
  /** Tells a project's subscribers on every node: leaves of a dead node, joins after this node was taken for dead. */
  announce (entry: SharedMember, type: PresenceChangeType): void
}

export class RedisPresenceShare implements PresenceShare {
  readonly nodeId = randomUUID()
  /** This node's members by project id and member id: what it writes again when it was taken for dead. */
  private readonly local = new Map<string, Map<string, SharedMember>>()
  /** Leaves whose removal failed (Redis away): retried at every heartbeat. */
  private readonly unremoved = new Map<string, SharedMember>()
  /** Joins on their way to Redis, per project: the project stays in this node's set meanwhile. */
  private readonly joining = new Map<string, number>()
  private timer: NodeJS.Timeout | null = null
  private ticking: Promise<void> | null = null
  private started = false

  constructor (private readonly options: RedisPresenceOptions) {}

  /** Registers the node (its first heartbeat), clears what dead nodes left, then keeps doing both. */
  async start (): Promise<void> {
    await this.tick()
    this.timer = setInterval(() => { void this.tick() }, Math.max(100, Math.floor(this.options.ttlMs / 6)))
    this.timer.unref()
  }

  async join (entry: SharedMember, limit: number): Promise<boolean> {
    const { redis } = this.options
    this.joining.set(entry.projectId, (this.joining.get(entry.projectId) ?? 0) + 1)
    try {
      const joined = await redis.eval(JOIN, {
        keys: [membersKey(entry.projectId), nodeProjectsKey(this.nodeId)],
        arguments: [entry.member.id, this.encode(entry), String(limit), entry.projectId]
      })
      if (joined !== 1) return false
      this.localMembers(entry.projectId).set(entry.member.id, entry)
      return true
    } finally {
      const left = (this.joining.get(entry.projectId) ?? 1) - 1
      if (left === 0) this.joining.delete(entry.projectId)
      else this.joining.set(entry.projectId, left)
    }
  }

  async update (entry: SharedMember): Promise<void> {
    const members = this.local.get(entry.projectId)
    if (!members?.has(entry.member.id)) return
    members.set(entry.member.id, entry)
    await this.options.redis.hSet(membersKey(entry.projectId), entry.member.id, this.encode(entry))
  }

  async leave (entry: SharedMember): Promise<void> {
    const members = this.local.get(entry.projectId)
    if (!members?.delete(entry.member.id)) return
    if (members.size === 0) this.local.delete(entry.projectId)
    try {
      await this.remove(entry)
    } catch (e) {
      this.options.logger.warn({ err: e }, 'redis: removing a presence member failed; retrying at the next heartbeat')
      this.unremoved.set(`${entry.projectId}\n${entry.member.id}`, entry)
    }
  }

  async list (projectId: string): Promise<PresenceMember[]> {
    const { redis } = this.options
    const entries = Object.values(await redis.hGetAll(membersKey(projectId))).map(decode).filter(e => e !== null)
    const others = [...new Set(entries.map(e => e.node).filter(node => node !== this.nodeId))]
    const beating = await Promise.all(others.map(node => redis.exists(heartbeatKey(node))))
    const alive = new Set(others.filter((_, i) => beating[i] === 1))
    const members: PresenceMember[] = []
    for (const entry of entries) {
      if (entry.node !== this.nodeId) {
        if (alive.has(entry.node)) members.push(entry.member)
      } else if (this.local.get(projectId)?.has(entry.member.id)) {
        members.push(entry.member)
      } else if (!this.joining.has(projectId)) {
        // Ours, but gone here: a removal that failed while Redis was away. Finish it.
        void redis.hDel(membersKey(projectId), entry.member.id).catch(() => {})
      }
    }
    return members
  }

  async close (): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.ticking
    const { redis } = this.options
    try {
      for (const [projectId, members] of this.local) {
        if (members.size > 0) await redis.hDel(membersKey(projectId), [...members.keys()])
      }
      await Promise.all([redis.del([heartbeatKey(this.nodeId), nodeProjectsKey(this.nodeId)]), redis.sRem(NODES, this.nodeId)])
    } catch (e) {
      // The other nodes bury this one within PRESENCE_TTL instead.
      this.options.logger.warn({ err: e }, 'redis: could not remove this node\'s presence on shutdown')
    }
    this.local.clear()
  }

  /** One heartbeat, then one look for dead nodes; never two at once. */
  private tick (): Promise<void> {
    if (this.ticking) return this.ticking
    this.ticking = (async () => {
      try {
        await this.beat()
        await this.buryDeadNodes()
      } catch (e) {
        // The first tick is start-up: its failure is the caller's. Later ones retry.
        if (!this.started) throw e
        this.options.logger.warn({ err: e }, 'redis: presence heartbeat failed')
      } finally {
        this.ticking = null
      }
    })()
    return this.ticking
  }

  private async beat (): Promise<void> {
    const { redis, ttlMs } = this.options
    const previous = await redis.set(heartbeatKey(this.nodeId), String(Date.now()), { expiration: { type: 'PX', value: Math.max(1, Math.floor(ttlMs / 2)) }, GET: true })
    await redis.sAdd(NODES, this.nodeId)
    // Our heartbeat had expired: other nodes may have buried our members. Write them again.
    if (previous === null && this.started) await this.republish()
    this.started = true
    for (const [key, entry] of this.unremoved) {
      await this.remove(entry)
      this.unremoved.delete(key)
    }
  }

  private async republish (): Promise<void> {
    const { redis } = this.options
    for (const [projectId, members] of this.local) {
      if (members.size === 0) continue
      await redis.hSet(membersKey(projectId), Object.fromEntries([...members.values()].map(entry => [entry.member.id, this.encode(entry)])))
      await redis.sAdd(nodeProjectsKey(this.nodeId), projectId)
      for (const entry of members.values()) this.options.announce(entry, 'join')
    }
  }

  private async buryDeadNodes (): Promise<void> {
    const { redis } = this.options
    const others = (await redis.sMembers(NODES)).filter(node => node !== this.nodeId)
    const beating = await Promise.all(others.map(node => redis.exists(heartbeatKey(node))))
    for (const [i, node] of others.entries()) if (beating[i] === 0) await this.bury(node)
  }

  private async bury (node: string): Promise<void> {
    const { redis } = this.options
    for (const projectId of await redis.sMembers(nodeProjectsKey(node))) {
      const removed = await redis.eval(BURY_MEMBERS, { keys: [membersKey(projectId), heartbeatKey(node)], arguments: [node] }) as string[]
      for (const raw of removed) {
        const entry = decode(raw)
        if (entry) this.options.announce(entry, 'leave')
      }
    }
    await redis.eval(FORGET_NODE, { keys: [NODES, heartbeatKey(node), nodeProjectsKey(node)], arguments: [node] })
  }

  /**
   * Takes the member out of Redis, and the project out of this node's set once the node has
   * no member there and none joining (both commands sent together, so a join sent after
   * them cannot land in between).
   */
  private async remove (entry: SharedMember): Promise<void> {
    const { redis } = this.options
    const last = !this.local.has(entry.projectId) && !this.joining.has(entry.projectId)
    await Promise.all([
      redis.hDel(membersKey(entry.projectId), entry.member.id),
      last ? redis.sRem(nodeProjectsKey(this.nodeId), entry.projectId) : null
    ])
  }

  private localMembers (projectId: string): Map<string, SharedMember> {
    let members = this.local.get(projectId)
    if (!members) { members = new Map(); this.local.set(projectId, members) }
    return members
  }

  private encode (entry: SharedMember): string {
    const stored: StoredEntry = { node: this.nodeId, projectId: entry.projectId, project: entry.project, member: entry.member }
    return JSON.stringify(stored)
  }
}

function decode (raw: string): StoredEntry | null {
  try {
    const entry = JSON.parse(raw) as StoredEntry
    return typeof entry?.node === 'string' && typeof entry.member?.id === 'string' ? entry : null
  } catch {
    return null
  }
}
