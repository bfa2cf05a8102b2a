// [rules, issue 31] The allow/deny table of app users' reads and subscriptions (docs/design.md
// §17, §15, §16): each row states its outcome once; test/realtime/rules-transports.test.ts checks
// every row on every transport that can ask it (a one-shot GET, `changes?path=`, a Socket.IO
// path or query subscription, an SSE path or query stream).
import type { JWTPayload } from 'jose'

export const READ_RULES = {
  rules: {
    '.read': 'auth.role == "auditor"',
    users: { $uid: { '.read': 'auth.sub == uid', '.write': 'auth.sub == uid' } },
    leaderboard: { '.read': true },
    admin: { '.read': 'auth.role == "admin"', secret: { '.read': 'false' } },
    public: { '.read': 'true' },
    rooms: { $room: { '.read': 'auth.rooms[room] == true', members: { $member: { '.read': 'auth.sub == member' } } } }
  }
}

export const READ_CONTENT = {
  users: { u1: { name: 'A', tags: ['x', 'y'] }, u2: { name: 'B' } },
  leaderboard: { u1: { score: 5 }, u2: { score: 3 }, u3: { score: 9 } },
  admin: { flag: true, secret: { code: 7 } },
  public: { motd: 'hi' },
  rooms: { lobby: { topic: 't', members: { u1: { since: 1 }, u2: { since: 2 } } } }
}

/** Who asks: the claims of their token. */
export const USERS = {
  u1: { sub: 'u1' },
  u2: { sub: 'u2' },
  admin: { sub: 'boss', role: 'admin' },
  guest: { sub: 'guest', rooms: { lobby: true } },
  auditor: { sub: 'eve', role: 'auditor' }
} satisfies Record<string, JWTPayload>

export type User = keyof typeof USERS

export interface ReadRow {
  name: string
  user: User
  /** The dot path read or watched; '' is the whole project (a whole-content read, `changes`, a whole-project subscription or stream). */
  path: string
  /** A live query (§16) at `path` instead of its value: the query and, when allowed, the keys of its result in order. */
  query?: { orderBy: string, direction?: 'asc' | 'desc', limit: number, keys: string[] }
  /** The one expected outcome: allowed (the value at `path`, or the query's result), or 403 RULES_DENIED naming `path`. */
  allowed: boolean
}

export const READ_ROWS: ReadRow[] = [
  { name: 'an auditor watches the whole project (the root\'s .read)', user: 'auditor', path: '', allowed: true },
  { name: 'u1 may not watch the whole project', user: 'u1', path: '', allowed: false },
  { name: 'an admin may not watch the whole project either', user: 'admin', path: '', allowed: false },
  { name: 'the root\'s .read cascades to every path', user: 'auditor', path: 'users.u2.name', allowed: true },
  { name: 'and past a "false" below it', user: 'auditor', path: 'admin.secret.code', allowed: true },
  { name: 'u1 watches their own subtree', user: 'u1', path: 'users.u1', allowed: true },
  { name: 'u1 watches below their own subtree', user: 'u1', path: 'users.u1.name', allowed: true },
  { name: 'u1 watches a path not there yet in their subtree', user: 'u1', path: 'users.u1.missing', allowed: true },
  { name: 'u1 may not watch u2\'s subtree', user: 'u1', path: 'users.u2', allowed: false },
  { name: 'u1 may not watch below u2\'s subtree', user: 'u1', path: 'users.u2.name', allowed: false },
  { name: 'u1 may not watch users (no rule there)', user: 'u1', path: 'users', allowed: false },
  { name: 'u2 watches their own subtree', user: 'u2', path: 'users.u2', allowed: true },
  { name: 'anyone watches the leaderboard', user: 'u2', path: 'leaderboard', allowed: true },
  { name: 'the leaderboard\'s .read cascades down', user: 'u1', path: 'leaderboard.u3.score', allowed: true },
  { name: 'an admin claim watches admin', user: 'admin', path: 'admin', allowed: true },
  { name: 'a deeper false cannot take back an ancestor\'s true', user: 'admin', path: 'admin.secret', allowed: true },
  { name: 'without the claim, admin is refused', user: 'u1', path: 'admin.flag', allowed: false },
  { name: 'a "false" rule refuses who has no ancestor\'s true', user: 'u1', path: 'admin.secret', allowed: false },
  { name: 'a CEL string "true" allows', user: 'guest', path: 'public.motd', allowed: true },
  { name: 'a claim map grants a room', user: 'guest', path: 'rooms.lobby', allowed: true },
  { name: 'a room not in the claims is refused', user: 'u1', path: 'rooms.lobby.topic', allowed: false },
  { name: 'a member watches their own entry in a room they are not in', user: 'u1', path: 'rooms.lobby.members.u1', allowed: true },
  { name: 'but not another member\'s', user: 'u1', path: 'rooms.lobby.members.u2', allowed: false },
  { name: 'nor the room\'s member list', user: 'u1', path: 'rooms.lobby.members', allowed: false },
  { name: 'a query of the leaderboard by score', user: 'u1', path: 'leaderboard', query: { orderBy: 'score', direction: 'desc', limit: 2, keys: ['u3', 'u1'] }, allowed: true },
  { name: 'a query of the leaderboard by key', user: 'guest', path: 'leaderboard', query: { orderBy: 'key', limit: 10, keys: ['u1', 'u2', 'u3'] }, allowed: true },
  { name: 'a query of their own subtree', user: 'u1', path: 'users.u1', query: { orderBy: 'key', limit: 5, keys: ['name', 'tags'] }, allowed: true },
  { name: 'a query of users is refused (no rule there)', user: 'u1', path: 'users', query: { orderBy: 'key', limit: 5, keys: [] }, allowed: false },
  { name: 'a query of another user\'s subtree is refused', user: 'u2', path: 'users.u1', query: { orderBy: 'key', limit: 5, keys: [] }, allowed: false },
  { name: 'a query of a room\'s members is refused below a member rule', user: 'u2', path: 'rooms.lobby.members', query: { orderBy: 'key', limit: 5, keys: [] }, allowed: false },
  { name: 'an auditor queries any path', user: 'auditor', path: 'users', query: { orderBy: 'key', limit: 1, keys: ['u1'] }, allowed: true },
  { name: 'a query of a room granted by a claim', user: 'guest', path: 'rooms.lobby.members', query: { orderBy: 'since', limit: 5, keys: ['u1', 'u2'] }, allowed: true }
]

/** The value at a dot path of READ_CONTENT ('' is the root); undefined when nothing is there. */
export function valueAt (path: string): unknown {
  let at: unknown = READ_CONTENT
  for (const segment of path === '' ? [] : path.split('.')) {
    if (typeof at !== 'object' || at === null || !(segment in at)) return undefined
    at = (at as Record<string, unknown>)[segment]
  }
  return at
}

/** The query string of a row's query (§16: `startAt`/`endAt` would be JSON texts). */
export function queryString (query: NonNullable<ReadRow['query']>): string {
  return `orderBy=${encodeURIComponent(query.orderBy)}&limit=${query.limit}${query.direction ? `&direction=${query.direction}` : ''}`
}
