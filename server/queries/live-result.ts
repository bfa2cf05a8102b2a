// The incremental side of live queries (docs/design.md §16). An OrderedChildren keeps every
// child of one path in one order (a B+tree of (order value, key)), shared by all queries on
// that path with the same `orderBy`; a LiveResult is one query's window over it (direction,
// bounds, limit). A change to one child costs O(log n) in the index; a window is walked again
// (O(log n + limit)) only when the child was in it or lands in it — otherwise the query does
// nothing, serializes nothing.
import { compareEntries, compareOrder, orderValueOf, withinBounds, type OrderEntry, type QueryItem, type QueryPlan } from '../../shared/query.js'
import type { Json } from '../../shared/json.js'
import { BTree } from './btree.js'

/** What changed for one child of the path: where it was and where it is in the order. */
export interface ChildMove { key: string, before: OrderEntry | undefined, after: OrderEntry | undefined }

// Keys never start with "$" (docs/design.md §3): these two stand for "before every key" and
// "after every key" of one order value, so the tree can seek straight to a bound.
const FIRST_KEY = '$first'
const LAST_KEY = '$last'

function compareInTree (a: OrderEntry, b: OrderEntry): number {
  const byOrder = compareOrder(a.order, b.order)
  if (byOrder !== 0) return byOrder
  if (a.key === b.key) return 0
  if (a.key === FIRST_KEY || b.key === LAST_KEY) return -1
  if (a.key === LAST_KEY || b.key === FIRST_KEY) return 1
  return compareEntries(a, b)
}

export class OrderedChildren {
  private tree = new BTree<OrderEntry, true>(undefined, compareInTree)
  private readonly byKey = new Map<string, OrderEntry>()

  constructor (readonly plan: Pick<QueryPlan, 'orderBy' | 'orderPath'>) {}

  get size (): number { return this.byKey.size }

  /** Every child again (the path was written, or an array renumbered): O(n log n). */
  rebuild (children: Iterable<[string, Json]>): void {
    this.tree = new BTree<OrderEntry, true>(undefined, compareInTree)
    this.byKey.clear()
    const entries: OrderEntry[] = []
    for (const [key, child] of children) {
      const entry: OrderEntry = { order: orderValueOf(this.plan, child), key }
      this.byKey.set(key, entry)
      entries.push(entry)
    }
    // Sorted first: inserting in order keeps the tree's inserts at its right edge, several
    // times faster than random inserts (a rebuild is what array renumbering costs).
    entries.sort(compareInTree)
    for (const entry of entries) this.tree.set(entry, true)
  }

  /** One child's new value (undefined: it is gone). */
  update (key: string, child: Json | undefined): ChildMove {
    const before = this.byKey.get(key)
    if (before) this.tree.delete(before)
    if (child === undefined) {
      this.byKey.delete(key)
      return { key, before, after: undefined }
    }
    const after: OrderEntry = { order: orderValueOf(this.plan, child), key }
    this.byKey.set(key, after)
    this.tree.set(after, true)
    return { key, before, after }
  }

  /** Up to `limit` entries within the plan's bounds, in its direction. */
  window (plan: QueryPlan): OrderEntry[] {
    const out: OrderEntry[] = []
    if (this.byKey.size === 0) return out
    // Start at the near bound (the tree seeks to it in O(log n)), stop at the far one.
    if (plan.direction === 'asc') {
      const from = plan.orderBy === 'key'
        ? (typeof plan.startAt === 'string' ? { order: null, key: plan.startAt } : undefined)
        : (plan.startAt !== undefined ? { order: plan.startAt, key: FIRST_KEY } : undefined)
      for (const [entry] of this.tree.entries(from)) {
        if (!withinBounds(plan, entry)) { if (passedFar(plan, entry)) break; continue }
        out.push(entry)
        if (out.length >= plan.limit) break
      }
    } else {
      const from = plan.orderBy === 'key'
        ? (typeof plan.endAt === 'string' ? { order: null, key: plan.endAt } : undefined)
        : (plan.endAt !== undefined ? { order: plan.endAt, key: LAST_KEY } : undefined)
      for (const [entry] of this.tree.entriesReversed(from)) {
        if (!withinBounds(plan, entry)) { if (passedFar(plan, entry)) break; continue }
        out.push(entry)
        if (out.length >= plan.limit) break
      }
    }
    return out
  }
}

/** The walk has gone past the bound it walks towards: nothing further can be within. */
function passedFar (plan: QueryPlan, entry: OrderEntry): boolean {
  if (plan.direction === 'asc') return plan.endAt !== undefined && !withinBounds({ ...plan, startAt: undefined }, entry)
  return plan.startAt !== undefined && !withinBounds({ ...plan, endAt: undefined }, entry)
}

/** One item of a `query` event: every key, with its value when new to the result or changed. */
export interface EventItem { key: string, value?: Json }

/** How a LiveResult reads a child now: its value and (memoized per change) its JSON text. */
export interface ChildReader {
  value (key: string): Json | undefined
  text (key: string): string
}

export class LiveResult {
  /** Keys in order, and the JSON text of each one's value as last sent. */
  private keys: string[] = []
  private texts = new Map<string, string>()
  /** The last entry of the window, for the "could it land in it" test. */
  private last: OrderEntry | undefined

  constructor (readonly plan: QueryPlan, private readonly index: OrderedChildren) {}

  /** The window from scratch, remembering what it holds (the first answer). */
  reset (reader: ChildReader): QueryItem[] {
    const entries = this.index.window(this.plan)
    this.keys = entries.map(e => e.key)
    this.last = entries.at(-1)
    this.texts = new Map(this.keys.map(key => [key, reader.text(key)]))
    return this.items(reader)
  }

  /** The current items with their values (a new subscriber's ack, an SSE snapshot). */
  items (reader: ChildReader): QueryItem[] {
    return this.keys.map(key => ({ key, value: reader.value(key) as Json }))
  }

  get size (): number { return this.keys.length }

  /** Whether a moved child may alter this window (checked before any walk or serialization). */
  concerns (move: ChildMove): boolean {
    if (this.texts.has(move.key)) return true
    const { after } = move
    if (!after || !withinBounds(this.plan, after)) return false
    if (this.keys.length < this.plan.limit || !this.last) return true
    const sign = this.plan.direction === 'asc' ? 1 : -1
    return sign * compareEntries(after, this.last) < 0
  }

  /**
   * Walks the window again after `touched` children changed (all of them when null) and
   * returns the event's items, or null when the result is what it was.
   */
  refresh (reader: ChildReader, touched: ReadonlySet<string> | null): EventItem[] | null {
    const entries = this.index.window(this.plan)
    const keys = entries.map(e => e.key)
    const texts = new Map<string, string>()
    let altered = keys.length !== this.keys.length || keys.some((key, i) => key !== this.keys[i])
    const items: EventItem[] = keys.map(key => {
      const sent = this.texts.get(key)
      // An untouched child still in the window is as it was: no serialization for it.
      if (sent !== undefined && touched !== null && !touched.has(key)) { texts.set(key, sent); return { key } }
      const text = reader.text(key)
      texts.set(key, text)
      if (sent === text) return { key }
      altered = true
      return { key, value: JSON.parse(text) as Json }
    })
    if (!altered) return null
    this.keys = keys
    this.texts = texts
    this.last = entries.at(-1)
    return items
  }
}
