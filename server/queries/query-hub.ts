// Live queries on this node (docs/design.md §16): one live result per distinct query per
// project, however many subscribers (Socket.IO or SSE) share it. For each project with a live
// query the hub keeps its own copy of the content, brought forward by the committed changes
// (the change feed, local and other nodes'), and per queried path one ordered index per
// `orderBy`. A change re-reads only the children it touches (shared/query-effect.ts) and
// walks only the windows those children were or land in (live-result.ts).
//
// Bounded (docs/design.md §13b): a result holds at most QUERY_LIMIT_MAX children, and a
// project has at most `resultsPerProject` distinct live results on a node, so the work one
// change causes is bounded by that many windows and as many indexes.
import type { ChangeSource } from '../feed/change-feed.js'
import { operationOfChange, type ChangeEntry } from '../../shared/events.js'
import { applyContentOperation } from '../../shared/compound.js'
import { ContentdError, isContentdError } from '../../shared/errors.js'
import { isPlainObject, type Json, type JsonObject } from '../../shared/json.js'
import { dotSegments, isCanonicalIndex } from '../../shared/path.js'
import { childrenTouched } from '../../shared/query-effect.js'
import { assertQueryable, childrenOf, queryIdentity, type QueryItem, type QueryPlan } from '../../shared/query.js'
import type { Logger } from '../logger.js'
import type { ContentStorage } from '../store/types.js'
import { LiveResult, OrderedChildren, type ChildReader, type EventItem } from './live-result.js'

/** How soon a failed re-read of a project with open results is tried again. */
const RELOAD_RETRY_MS = 1000

/** Changes held per project while its content is read (a reload reads again for the rest). */
const MAX_BUFFERED = 1000

export interface QueryLimits {
  /** Distinct live results per project on this node (QUERY_RESULTS_PER_PROJECT). */
  resultsPerProject: number
  /**
   * Distinct ordered indexes (path + orderBy) per project on this node (QUERY_ORDERS_PER_PROJECT):
   * a change that renumbers an array or rewrites a path rebuilds each of its indexes, so this
   * bounds the worst work one change causes.
   */
  ordersPerProject?: number
  /**
   * Bytes of content (JSON, as read) the node's copies may hold together (QUERY_CONTENT_BYTES):
   * a query on one more project past it is refused. Growth by later changes is not counted.
   */
  contentBytes?: number
}

/** A change that altered a result: the whole ordered key list, values for new or changed children. */
export interface QueryEvent { version: number, items: EventItem[] }
export type QueryWatcher = (event: QueryEvent) => void
/** Hears, for each `query` event handed to a subscriber, the seconds since its change's commit on this node. */
export type DeliveryTimer = (seconds: number) => void

export interface OpenQuery {
  /** The version the items are at; the first event's `prev`. */
  version: number
  /** Every item with its value (a copy: safe to serialize later). */
  items: QueryItem[]
  close (): void
}


/** The content as JSON text only, parsed into the hub's own copy (it lends no live document, so no write copies it). */
export type ContentSource = Pick<ContentStorage, 'readContentJson'>

interface ResultState { live: LiveResult, watchers: Set<QueryWatcher> }
interface OrderState { index: OrderedChildren, results: Map<string, ResultState> }
interface PathState { segments: string[], orders: Map<string, OrderState> }

interface ProjectState {
  projectId: string
  loading: Promise<void> | null
  failed: unknown
  doc: JsonObject
  version: number
  /** Changes heard while the content was being (re)read: at most MAX_BUFFERED of them. */
  buffer: ChangeEntry[]
  /** The newest version heard and not kept past MAX_BUFFERED: read again after the load if not reached. */
  droppedUpTo: number
  paths: Map<string, PathState>
  results: number
  /** Ordered indexes held (one per path and orderBy). */
  orders: number
  /** The JSON size of the content when it was read, counted in the node's total. */
  bytes: number
  /** Opens in progress and watchers: the project is dropped when none is left. */
  holders: number
  stopFeed: () => void
}

export class QueryHub {
  private readonly projects = new Map<string, ProjectState>()
  /** The sum of every held project's `bytes`. */
  private heldBytes = 0
  private deliveryTimer: DeliveryTimer | undefined

  constructor (
    private readonly store: ContentSource,
    private readonly feed: ChangeSource,
    private readonly limits: QueryLimits,
    private readonly logger?: Logger
  ) {}

  /**
   * Starts watching `plan` over the children of `path` (dot path, already valid): the
   * current items and version, then `watcher` hears each change that alters the result.
   * 400 INVALID_QUERY when the path holds a scalar; 429-free TOO_MANY_SUBSCRIPTIONS when the
   * project already has as many distinct results as allowed.
   */
  async open (projectId: string, path: string, plan: QueryPlan, watcher: QueryWatcher): Promise<OpenQuery> {
    const project = this.hold(projectId)
    try {
      // A project whose last read failed (the store was down, the byte limit was reached) is read again.
      if (project.failed !== null && project.loading === null) this.reload(project)
      while (project.loading) await project.loading
      if (project.failed !== null) throw project.failed
      const segments = dotSegments(path)
      assertQueryable(valueAt(project.doc, segments))
      const result = this.resultFor(project, path, segments, plan)
      result.watchers.add(watcher)
      const items = result.live.items(readerOf(valueAt(project.doc, segments))).map(item => ({ key: item.key, value: structuredClone(item.value) }))
      let closed = false
      return {
        version: project.version,
        items,
        close: () => {
          if (closed) return
          closed = true
          result.watchers.delete(watcher)
          if (result.watchers.size === 0) this.dropResult(project, path, plan)
          this.release(project)
        }
      }
    } catch (e) {
      this.release(project)
      throw e
    }
  }

  /**
   * Times every `query` event from its change's commit on this node to the moment the
   * subscriber's watcher returned (the event handed to its Socket.IO connection or SSE
   * response): contentd_query_event_delay_seconds. Changes of other nodes are not timed, nor
   * those replayed after a (re)read of the content; an event a new subscriber holds until its
   * ack has gone out counts when held.
   */
  timeDeliveries (timer: DeliveryTimer): void {
    this.deliveryTimer = timer
  }

  /** Projects with live queries on this node (for tests and metrics). */
  get projectCount (): number { return this.projects.size }

  private hold (projectId: string): ProjectState {
    let project = this.projects.get(projectId)
    if (!project) {
      const state: ProjectState = {
        projectId,
        loading: null,
        failed: null,
        doc: {},
        version: 0,
        buffer: [],
        droppedUpTo: 0,
        paths: new Map(),
        results: 0,
        orders: 0,
        bytes: 0,
        holders: 0,
        stopFeed: () => {}
      }
      // The one place live queries hear committed changes; listening before reading, so
      // nothing committed meanwhile is missed (the buffer replays it over the snapshot).
      state.stopFeed = this.feed.subscribe(projectId, (change, committedAt) => this.receive(state, change, committedAt))
      this.projects.set(projectId, state)
      this.reload(state)
      project = state
    }
    project.holders++
    return project
  }

  private release (project: ProjectState): void {
    project.holders--
    if (project.holders > 0) return
    project.stopFeed()
    this.heldBytes -= project.bytes
    project.bytes = 0
    if (this.projects.get(project.projectId) === project) this.projects.delete(project.projectId)
  }

  private resultFor (project: ProjectState, path: string, segments: string[], plan: QueryPlan): ResultState {
    let pathState = project.paths.get(path)
    if (!pathState) { pathState = { segments, orders: new Map() }; project.paths.set(path, pathState) }
    let order = pathState.orders.get(plan.orderBy)
    const id = queryIdentity(path, plan)
    const existing = order?.results.get(id)
    if (existing) return existing
    if (project.results >= this.limits.resultsPerProject) {
      if (order?.results.size === 0) pathState.orders.delete(plan.orderBy)
      if (pathState.orders.size === 0) project.paths.delete(path)
      throw new ContentdError('TOO_MANY_SUBSCRIPTIONS', `at most ${this.limits.resultsPerProject} distinct live queries per project`)
    }
    const value = valueAt(project.doc, segments)
    if (!order) {
      const orders = this.limits.ordersPerProject ?? Number.POSITIVE_INFINITY
      if (project.orders >= orders) {
        if (pathState.orders.size === 0) project.paths.delete(path)
        throw new ContentdError('TOO_MANY_SUBSCRIPTIONS', `at most ${orders} distinct orders (path and orderBy) of live queries per project`)
      }
      project.orders++
      order = { index: new OrderedChildren(plan), results: new Map() }
      order.index.rebuild(childrenOf(value))
      pathState.orders.set(plan.orderBy, order)
    }
    const live = new LiveResult(plan, order.index)
    live.reset(readerOf(value))
    const result = { live, watchers: new Set<QueryWatcher>() }
    order.results.set(id, result)
    project.results++
    return result
  }

  private dropResult (project: ProjectState, path: string, plan: QueryPlan): void {
    const pathState = project.paths.get(path)
    const order = pathState?.orders.get(plan.orderBy)
    if (!pathState || !order || !order.results.delete(queryIdentity(path, plan))) return
    project.results--
    if (order.results.size === 0) { pathState.orders.delete(plan.orderBy); project.orders-- }
    if (pathState.orders.size === 0) project.paths.delete(path)
  }

  /** Reads the content afresh (first use, or a gap in the versions heard). */
  private reload (project: ProjectState): void {
    const loading = (async () => {
      try {
        // Text, parsed below into a copy of our own: the store's cached document changes in place.
        const snapshot = await this.store.readContentJson(project.projectId)
        if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
        const { json } = snapshot
        const limit = this.limits.contentBytes ?? Number.POSITIVE_INFINITY
        if (this.heldBytes - project.bytes + json.length > limit) {
          throw new ContentdError('TOO_MANY_SUBSCRIPTIONS', 'live queries on this server hold as much content as they may (QUERY_CONTENT_BYTES); try again later')
        }
        this.heldBytes += json.length - project.bytes
        project.bytes = json.length
        const doc = JSON.parse(json) as JsonObject
        project.doc = doc
        project.version = snapshot.version
        project.failed = null
        // Results already open (a gap, a failed read before) are brought to the new content.
        if (project.paths.size > 0) this.refreshAll(project)
      } catch (e) {
        project.failed = e
        const refused = isContentdError(e) && e.code === 'TOO_MANY_SUBSCRIPTIONS'
        if (!refused) this.logger?.warn({ err: e, projectId: project.projectId }, 'a live query could not read the content')
        // Open results would otherwise stop hearing changes: try again while they are held.
        if (project.paths.size > 0) {
          const retry = setTimeout(() => {
            if (this.projects.get(project.projectId) === project && project.loading === null && project.failed !== null) this.reload(project)
          }, RELOAD_RETRY_MS)
          retry.unref()
        }
      } finally {
        project.loading = null
      }
      const buffered = project.buffer.splice(0).sort((a, b) => a.version - b.version)
      for (const change of buffered) this.receive(project, change)
      // Changes were dropped while the store was slow: the store has them, read it again.
      if (project.droppedUpTo > project.version && project.failed === null && project.loading === null) this.reload(project)
      project.droppedUpTo = 0
    })()
    project.loading = loading
  }

  /** Keeps a change heard while the content is read, at most MAX_BUFFERED (a slow store must not grow it without end). */
  private holdBack (project: ProjectState, change: ChangeEntry): void {
    if (project.buffer.length < MAX_BUFFERED) project.buffer.push(change)
    else project.droppedUpTo = Math.max(project.droppedUpTo, change.version)
  }

  /** `committedAt`: when this node committed it (performance.now()), to time its events. */
  private receive (project: ProjectState, change: ChangeEntry, committedAt?: number): void {
    if (project.loading) { this.holdBack(project, change); return }
    if (project.failed !== null) return
    if (change.version <= project.version) return
    if (change.version !== project.version + 1) {
      // A change was not heard (another node's, lost): the store has them all.
      this.holdBack(project, change)
      this.reload(project)
      return
    }
    const before = [...project.paths.values()].map(pathState => {
      const value = valueAt(project.doc, pathState.segments)
      const wasArray = Array.isArray(value)
      return { pathState, touched: childrenTouched(change, pathState.segments, wasArray), oldLength: wasArray ? value.length : 0 }
    })
    try {
      // The entry is shared with every other listener: what is written into our copy is a copy.
      const { op, path, value, index, operations } = change
      project.doc = applyContentOperation(project.doc, operationOfChange(structuredClone({ op, path, value, index, operations })))
    } catch (e) {
      this.logger?.warn({ err: e, version: change.version }, 'a live query could not replay a change; reading the content again')
      this.reload(project)
      return
    }
    project.version = change.version
    for (const { pathState, touched, oldLength } of before) {
      if (!touched.all && touched.keys.size === 0 && !touched.tail) continue
      const container = valueAt(project.doc, pathState.segments)
      const reader = readerOf(container)
      if (touched.all) { this.refreshPath(project, pathState, reader, container, committedAt); continue }
      const keys = new Set(touched.keys)
      if (touched.tail && Array.isArray(container)) for (let i = oldLength; i < container.length; i++) keys.add(String(i))
      for (const order of pathState.orders.values()) {
        const moves = [...keys].map(key => order.index.update(key, reader.value(key)))
        for (const result of order.results.values()) {
          if (!moves.some(move => result.live.concerns(move))) continue
          const items = result.live.refresh(reader, keys)
          if (items) this.emit(result, { version: project.version, items }, committedAt)
        }
      }
    }
  }

  private refreshAll (project: ProjectState): void {
    for (const pathState of project.paths.values()) {
      const container = valueAt(project.doc, pathState.segments)
      this.refreshPath(project, pathState, readerOf(container), container)
    }
  }

  /** Every child may have changed: rebuild the indexes, compare every window with what it sent. */
  private refreshPath (project: ProjectState, pathState: PathState, reader: ChildReader, container: Json | undefined, committedAt?: number): void {
    for (const order of pathState.orders.values()) {
      order.index.rebuild(childrenOf(container))
      for (const result of order.results.values()) {
        const items = result.live.refresh(reader, null)
        if (items) this.emit(result, { version: project.version, items }, committedAt)
      }
    }
  }

  private emit (result: ResultState, event: QueryEvent, committedAt: number | undefined): void {
    const timer = committedAt === undefined ? undefined : this.deliveryTimer
    for (const watcher of [...result.watchers]) {
      try { watcher(event) } catch { /* one subscriber's failure is its own */ }
      // One clock read per event handed over: each subscriber's own delay, the last one's included.
      if (timer) timer((performance.now() - (committedAt as number)) / 1000)
    }
  }
}

/** The value at a path, or undefined where nothing is (never throws). */
export function valueAt (doc: JsonObject, segments: readonly string[]): Json | undefined {
  let current: Json | undefined = doc
  for (const segment of segments) current = childAt(current, segment)
  return current
}

function childAt (value: Json | undefined, key: string): Json | undefined {
  if (Array.isArray(value)) return isCanonicalIndex(key) ? value[Number(key)] : undefined
  if (isPlainObject(value)) return Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined
  return undefined
}

/** Reads children of `container`, each one's JSON text computed at most once (per change). */
function readerOf (container: Json | undefined): ChildReader {
  const texts = new Map<string, string>()
  return {
    value: key => childAt(container, key),
    text: key => {
      let text = texts.get(key)
      if (text === undefined) { text = JSON.stringify(childAt(container, key) ?? null); texts.set(key, text) }
      return text
    }
  }
}
