// Live queries (docs/design.md §16): the children of an object or array at a path, ordered
// and limited. Pure: parsing a query (Socket.IO member or HTTP query string), the order of
// children, and the result computed from scratch — what the one-shot read returns, what a
// subscription's first answer holds, and what the incremental result is checked against.
import { z } from 'zod'
import { ContentdError } from './errors.js'
import { isContainer, isPlainObject, type Json } from './json.js'
import { parsePath } from './path.js'

export const QUERY_LIMIT_MAX = 1000

/** An order value: the JSON scalars, or CONTAINER for any array or object (they are all equal). */
export type OrderValue = null | boolean | number | string | typeof CONTAINER
export const CONTAINER = Symbol('array or object')

/** A bound may only be a scalar: arrays and objects are all equal order values, so no bound. */
export type Bound = null | boolean | number | string

export interface LiveQuery {
  /** "key", "value" or a child dot path. */
  orderBy: string
  direction: 'asc' | 'desc'
  limit: number
  startAt?: Bound
  endAt?: Bound
}

/** A parsed query with its order path split once. */
export interface QueryPlan extends LiveQuery {
  /** null for "key" and "value"; the segments of the child path otherwise. */
  orderPath: string[] | null
}

export interface QueryItem { key: string, value: Json }

const bound = z.union([z.null(), z.boolean(), z.number().finite(), z.string()])

const querySchema = z.strictObject({
  orderBy: z.string(),
  direction: z.enum(['asc', 'desc']).optional(),
  limit: z.number().int().min(1).max(QUERY_LIMIT_MAX),
  startAt: bound.optional(),
  endAt: bound.optional()
})

/** A query as a client sends it (Socket.IO, SDK); throws 400 INVALID_QUERY naming the problem. */
export function parseQuery (input: unknown): QueryPlan {
  const parsed = querySchema.safeParse(input)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where = issue && issue.path.length > 0 ? `query.${issue.path.join('.')}` : 'query'
    throw new ContentdError('INVALID_QUERY', `${where}: ${issue?.message ?? 'not valid'} (limit is an integer 1..${QUERY_LIMIT_MAX}, direction asc or desc, bounds null, booleans, numbers or strings)`)
  }
  const { orderBy, direction, limit, startAt, endAt } = parsed.data
  let orderPath: string[] | null = null
  if (orderBy !== 'key' && orderBy !== 'value') {
    try {
      orderPath = parsePath(orderBy)
    } catch (e) {
      throw new ContentdError('INVALID_QUERY', `query.orderBy must be "key", "value" or a child dot path: ${(e as Error).message}`)
    }
    if (orderPath.length === 0) throw new ContentdError('INVALID_QUERY', 'query.orderBy must not be empty')
  }
  // Keys are strings: a bound of another type would make every key fall outside it.
  if (orderBy === 'key' && [startAt, endAt].some(b => b !== undefined && typeof b !== 'string')) {
    throw new ContentdError('INVALID_QUERY', 'with orderBy "key", startAt and endAt are strings')
  }
  const plan: QueryPlan = { orderBy, direction: direction ?? 'asc', limit, orderPath }
  if (startAt !== undefined) plan.startAt = startAt
  if (endAt !== undefined) plan.endAt = endAt
  return plan
}

const QUERY_PARAMS = ['orderBy', 'direction', 'limit', 'startAt', 'endAt'] as const
const CANONICAL_LIMIT = /^[1-9][0-9]{0,3}$/

/** True when an HTTP query string asks for a query (it names `orderBy` or `limit`). */
export function wantsQuery (params: Record<string, unknown>): boolean {
  return params.orderBy !== undefined || params.limit !== undefined || params.direction !== undefined ||
    params.startAt !== undefined || params.endAt !== undefined
}

/**
 * The query of an HTTP query string (`?orderBy=score&direction=desc&limit=10&startAt=10`):
 * `limit` a canonical integer, `startAt`/`endAt` JSON texts (docs/design.md §16). Each at most once.
 */
export function parseQueryParams (params: Record<string, unknown>): QueryPlan {
  const query: Record<string, unknown> = {}
  for (const name of QUERY_PARAMS) {
    const text = params[name]
    if (text === undefined) continue
    if (typeof text !== 'string') throw new ContentdError('INVALID_QUERY', `${name} must be given once`)
    if (name === 'limit') {
      if (!CANONICAL_LIMIT.test(text)) throw new ContentdError('INVALID_QUERY', `limit must be an integer from 1 to ${QUERY_LIMIT_MAX}`)
      query.limit = Number(text)
    } else if (name === 'startAt' || name === 'endAt') {
      try {
        query[name] = JSON.parse(text)
      } catch {
        throw new ContentdError('INVALID_QUERY', `${name} must be a JSON text: 10, true, null or "b" (quoted)`)
      }
    } else {
      query[name] = text
    }
  }
  return parseQuery(query)
}

/** The query as it is echoed in acks (direction always present, no internal members). */
export function publicQuery (plan: QueryPlan): LiveQuery {
  const { orderBy, direction, limit, startAt, endAt } = plan
  const query: LiveQuery = { orderBy, direction, limit }
  if (startAt !== undefined) query.startAt = startAt
  if (endAt !== undefined) query.endAt = endAt
  return query
}

/** One text per distinct query: identical queries share one live result. */
export function queryIdentity (path: string, plan: QueryPlan): string {
  return JSON.stringify([path, plan.orderBy, plan.direction, plan.limit, plan.startAt ?? [], plan.endAt ?? []])
}

/** The index-sharing part: queries with the same path and orderBy order children alike. */
export function orderIdentity (path: string, orderBy: string): string {
  return JSON.stringify([path, orderBy])
}

const rank = (v: OrderValue): number =>
  v === null ? 0 : v === false ? 1 : v === true ? 2 : typeof v === 'number' ? 3 : typeof v === 'string' ? 4 : 5

/** JSON order: null < false < true < numbers < strings (UTF-16 code units) < arrays and objects. */
export function compareOrder (a: OrderValue, b: OrderValue): number {
  const ra = rank(a)
  const rb = rank(b)
  if (ra !== rb) return ra - rb
  if (ra === 3) return (a as number) - (b as number)
  if (ra === 4) return a === b ? 0 : (a as string) < (b as string) ? -1 : 1
  return 0
}

const INTEGER_KEY = /^(0|[1-9][0-9]*)$/

/** `0`, `7`, `10`; never `07`, `-1`, `1a` (a loop: this runs in every comparison of a sort). */
function isIntegerKey (key: string): boolean {
  const n = key.length
  if (n === 0) return false
  const first = key.charCodeAt(0)
  if (first < 48 || first > 57 || (first === 48 && n > 1)) return false
  for (let i = 1; i < n; i++) {
    const c = key.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

/** Firebase's key order: canonical non-negative integers first, as numbers; then by code unit. */
export function compareKeys (a: string, b: string): number {
  if (a === b) return 0
  const ai = isIntegerKey(a)
  const bi = isIntegerKey(b)
  if (ai !== bi) return ai ? -1 : 1
  // Canonical integers of any length: the shorter is smaller, equal lengths compare as text.
  if (ai && a.length !== b.length) return a.length - b.length
  return a < b ? -1 : 1
}

/**
 * The order value of a child. With `orderBy` "key" every child has null: the tie-break by
 * key is then the whole order, with the key rule (not plain code units).
 */
export function orderValueOf (plan: Pick<QueryPlan, 'orderBy' | 'orderPath'>, child: Json): OrderValue {
  if (plan.orderBy === 'key') return null
  if (plan.orderPath === null) return isContainer(child) ? CONTAINER : child
  if (!isPlainObject(child)) return null
  let current: Json = child
  for (const segment of plan.orderPath) {
    if (Array.isArray(current)) {
      if (!INTEGER_KEY.test(segment)) return null
      const next: Json | undefined = current[Number(segment)]
      if (next === undefined) return null
      current = next
    } else if (isPlainObject(current)) {
      if (!Object.prototype.hasOwnProperty.call(current, segment)) return null
      current = current[segment] as Json
    } else {
      return null
    }
  }
  return isContainer(current) ? CONTAINER : current
}

/** An entry of the order: the order value, ties by key. */
export interface OrderEntry { order: OrderValue, key: string }

export function compareEntries (a: OrderEntry, b: OrderEntry): number {
  return compareOrder(a.order, b.order) || compareKeys(a.key, b.key)
}

/** Within startAt ≤ order value ≤ endAt (keys compare by the key rule with orderBy "key"). */
export function withinBounds (plan: QueryPlan, entry: OrderEntry): boolean {
  const { startAt, endAt } = plan
  if (plan.orderBy === 'key') {
    if (typeof startAt === 'string' && compareKeys(entry.key, startAt) < 0) return false
    if (typeof endAt === 'string' && compareKeys(entry.key, endAt) > 0) return false
    return true
  }
  if (startAt !== undefined && compareOrder(entry.order, startAt) < 0) return false
  if (endAt !== undefined && compareOrder(entry.order, endAt) > 0) return false
  return true
}

/** The children of a value: an object's members, an array's elements (keys "0", "1", …); none for anything else. */
export function childrenOf (value: Json | undefined): Array<[string, Json]> {
  if (Array.isArray(value)) return value.map((child, index) => [String(index), child])
  if (isPlainObject(value)) return Object.entries(value)
  return []
}

/**
 * The query's result from scratch: O(n log n) in the children. The one-shot read and
 * snapshots use it; the live result (server/queries/live-result.ts) must always equal it.
 */
export function evaluateQuery (value: Json | undefined, plan: QueryPlan): QueryItem[] {
  const entries = childrenOf(value)
    .map(([key, child]): OrderEntry & { child: Json } => ({ key, child, order: orderValueOf(plan, child) }))
    .filter(entry => withinBounds(plan, entry))
  const sign = plan.direction === 'asc' ? 1 : -1
  entries.sort((a, b) => sign * compareEntries(a, b))
  return entries.slice(0, plan.limit).map(({ key, child }) => ({ key, value: child }))
}

/** A path that exists and holds neither an object nor an array cannot be queried (400 at subscribe). */
export function assertQueryable (value: Json | undefined): void {
  if (value === undefined || isContainer(value)) return
  throw new ContentdError('INVALID_QUERY', 'the path holds neither an object nor an array, so it has no children to query')
}
