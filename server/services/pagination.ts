// Reading lists a page at a time (docs/design.md §13): `?limit=&cursor=`, answered with the
// items and `nextCursor`, null after the last page. A cursor is opaque to clients: the sort
// key of the last item sent, as base64url JSON, checked against its schema when it comes
// back (anything else is 400 INVALID_QUERY). The store reads one item more than asked for,
// to know whether another page follows without a second query.
import { z } from 'zod'
import { ContentdError } from '../../shared/errors.js'
import type { PageRequest } from '../store/types.js'

export const PAGE_LIMIT_DEFAULT = 100
export const PAGE_LIMIT_MAX = 100

/** What a client asks for: how many items, after which cursor. */
export interface PageQuery {
  limit: number
  cursor?: string | undefined
}

export interface Page<T> {
  items: T[]
  nextCursor: string | null
}

export const FIRST_PAGE: PageQuery = { limit: PAGE_LIMIT_DEFAULT }

/** The position of lists ordered oldest first (keys, webhooks): creation time, then id. */
export const createdAtIdPosition = z.object({ createdAt: z.string(), id: z.string() })

export function encodeCursor (position: unknown): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url')
}

export function decodeCursor<P> (cursor: string, position: z.ZodType<P>): P {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    parsed = undefined
  }
  const result = position.safeParse(parsed)
  if (!result.success) throw new ContentdError('INVALID_QUERY', 'cursor is not one this list gave out')
  return result.data
}

/**
 * A page may also be cut by the work its items take (a key scoped to 100 projects costs 100
 * names to look up and send): the longest run of items whose costs total at most `budget`,
 * and always at least one item. Such a page holds fewer than `limit` items although more
 * follow; only `nextCursor: null` means the end.
 */
export interface PageCost<Item> {
  of: (item: Item) => number
  budget: number
}

/**
 * One page: `read` gets the store's page request (limit + 1 items after the decoded cursor,
 * and the cost budget if any), `positionOf` gives an item's sort key, which becomes the next
 * cursor. The store may stop early under a budget, as long as it returns at least one item
 * past what fits (see `listApiKeys` in server/store/types.ts).
 */
export async function readPage<Item, Position> (
  query: PageQuery,
  position: z.ZodType<Position>,
  read: (page: PageRequest<Position>) => Promise<Item[]>,
  positionOf: (item: Item) => Position,
  cost?: PageCost<Item>
): Promise<Page<Item>> {
  const after = query.cursor === undefined ? null : decodeCursor(query.cursor, position)
  const items = await read({ after, limit: query.limit + 1, ...(cost ? { costBudget: cost.budget } : {}) })
  const shown = cost ? withinBudget(items.slice(0, query.limit), cost) : items.slice(0, query.limit)
  if (shown.length === items.length) return { items: shown, nextCursor: null }
  return { items: shown, nextCursor: encodeCursor(positionOf(shown[shown.length - 1] as Item)) }
}

function withinBudget<Item> (items: Item[], cost: PageCost<Item>): Item[] {
  let total = 0
  let count = 0
  for (const item of items) {
    total += cost.of(item)
    if (count > 0 && total > cost.budget) break
    count++
  }
  return items.slice(0, count)
}

/** Every item of a list, page by page (the operator's CLI; never a request handler). */
export async function readAll<Item> (readOne: (query: PageQuery) => Promise<Page<Item>>): Promise<Item[]> {
  const all: Item[] = []
  let query: PageQuery = { limit: PAGE_LIMIT_MAX }
  for (;;) {
    const page = await readOne(query)
    all.push(...page.items)
    if (page.nextCursor === null) return all
    query = { limit: PAGE_LIMIT_MAX, cursor: page.nextCursor }
  }
}
