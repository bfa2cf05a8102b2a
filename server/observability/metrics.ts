// Prometheus metrics (prom-client) on a registry of their own, so several apps in one
// process (tests) do not collide. Labels are bounded: routes are reported as their
// patterns (/api/:username/:projectSlug/content/set), never as the URLs people typed.
import type { NextFunction, Request, Response } from 'express'
import type { ServerResponse } from 'node:http'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { OPERATION_NAMES } from '../../shared/operations.js'
import type { Store } from '../store/types.js'
import { eventLoopDelayHistogram } from './event-loop-delay.js'

export class Metrics {
  readonly registry = new Registry()

  readonly httpRequests = new Counter({
    name: 'contentd_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry]
  })

  readonly httpDuration = new Histogram({
    name: 'contentd_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry]
  })

  readonly operations = new Counter({
    name: 'contentd_operations_total',
    help: 'Committed content operations, by type',
    labelNames: ['op'] as const,
    registers: [this.registry]
  })

  /** Connected Socket.IO clients; the realtime layer increments and decrements it. */
  readonly activeSockets = new Gauge({
    name: 'contentd_active_sockets',
    help: 'Socket.IO connections currently open on this node',
    registers: [this.registry]
  })

  /** What SOCKET_CONNECTIONS_PER_IDENTITY counts: live sockets plus handshakes in progress. */
  readonly connectionSlots = new Gauge({
    name: 'contentd_realtime_connection_slots',
    help: 'Socket.IO connection slots held on this node (live sockets and handshakes in progress)',
    registers: [this.registry]
  })

  /** Refusals being held back by RATE_LIMIT_DELAY (server/limits/tarpit.ts). */
  readonly heldRefusals = new Gauge({
    name: 'contentd_rate_limit_held_refusals',
    help: 'Rate-limit refusals being held back before they are sent (RATE_LIMIT_DELAY)',
    registers: [this.registry]
  })

  /** Socket.IO events received, by name ("other" for names the server does not handle). */
  readonly realtimeEvents = new Counter({
    name: 'contentd_realtime_events_total',
    help: 'Socket.IO events received from clients, by event name',
    labelNames: ['event'] as const,
    registers: [this.registry]
  })

  /** Socket.IO connections dropped because their unread output passed SOCKET_SEND_BUFFER. */
  readonly slowConsumers = new Counter({
    name: 'contentd_realtime_slow_consumers_total',
    help: 'Socket.IO connections dropped because they did not read what they were sent',
    registers: [this.registry]
  })

  /** Connections whose broadcast frames go through Engine.IO only (server/realtime/direct-frames.ts), by the internal that moved. */
  readonly directFrameBailouts = new Counter({
    name: 'contentd_realtime_direct_frame_bailouts_total',
    help: 'WebSocket connections whose room broadcasts are not written directly because a library internal the direct write relies on moved',
    labelNames: ['reason'] as const,
    registers: [this.registry]
  })

  /** Deliveries of one-room broadcasts, by path: written directly to the TCP socket, or through Engine.IO (something was queued). */
  readonly broadcastDeliveries = new Counter({
    name: 'contentd_realtime_broadcast_deliveries_total',
    help: 'Deliveries of one-room Socket.IO broadcasts: path="direct" written straight to the TCP socket, path="engine.io" through Engine.IO (a packet queued or in flight, or not a plain WebSocket)',
    labelNames: ['path'] as const,
    registers: [this.registry]
  })

  /** WebSocket connections whose writes could not be batched (server/realtime/write-batching.ts), by the internal that moved. */
  readonly writeBatchingBailouts = new Counter({
    name: 'contentd_realtime_write_batching_bailouts_total',
    help: 'WebSocket connections written one frame at a time because a library internal that write batching relies on moved',
    labelNames: ['reason'] as const,
    registers: [this.registry]
  })

  /** Live SSE frames that went through res.write because a Node internal moved (server/http/sse-chunk.ts), by the internal. */
  readonly sseDirectWriteBailouts = new Counter({
    name: 'contentd_sse_direct_write_bailouts_total',
    help: 'Live SSE frames written with res.write instead of straight to the socket because a Node internal the direct write relies on moved',
    labelNames: ['reason'] as const,
    registers: [this.registry]
  })

  /** Messages to the other nodes (server/feed/redis-relay.ts) that Redis did not take, by kind. */
  readonly relayLost = new Counter({
    name: 'contentd_relay_lost_messages_total',
    help: 'Change feed messages to other nodes lost because Redis did not take them, by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry]
  })

  /** Commit-to-emit delay of change events; the realtime layer observes it. */
  readonly broadcastLag = new Histogram({
    name: 'contentd_broadcast_lag_seconds',
    help: 'Delay between a change committing and its broadcast being emitted',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry]
  })

  /**
   * Live queries (server/queries/query-hub.ts): from a change's commit on this node (durable,
   * the store's commit returned) to each of its `query` events handed to a subscriber's
   * connection. Buckets at the goals of issue 30 (5 ms, 50 ms).
   */
  readonly queryEventDelay = new Histogram({
    name: 'contentd_query_event_delay_seconds',
    help: 'Delay from a change committing on this node to each of its live-query events being handed to a subscriber connection',
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1],
    registers: [this.registry]
  })

  /** Scheduled backups (server/backup/schedule.ts): when the last good one began, and failures. */
  readonly backupLastSuccess = new Gauge({
    name: 'contentd_backup_last_success_timestamp_seconds',
    help: 'When the last good backup began (Unix time); 0 until there is one (BACKUP_DIR)',
    registers: [this.registry]
  })

  readonly backupFailures = new Counter({
    name: 'contentd_backup_failures_total',
    help: 'Scheduled backups that failed (each is logged)',
    registers: [this.registry]
  })

  /** See event-loop-delay.ts. */
  readonly eventLoopDelay = eventLoopDelayHistogram(this.registry)

  constructor () {
    const end = this.end
    this.finished = function (this: ServerResponse) { end(this) }
    collectDefaultMetrics({ register: this.registry, prefix: 'contentd_' })
    // Zero series for every operation, so dashboards show 0 rather than "no data".
    for (const op of [...OPERATION_NAMES, 'revert']) this.operations.inc({ op }, 0)
  }

  /** Counts every committed operation of the store by its type. */
  watch (store: Store): void {
    store.onCommit(change => this.operations.inc({ op: change.entry.op }))
  }

  /**
   * Express middleware: times every request and counts it when the response finishes. The
   * quiet request log does both itself (begin, end), on its own 'finish' listener.
   */
  readonly track = (_req: Request, res: Response, next: NextFunction): void => {
    this.begin(res)
    // One shared listener rather than a closure and a timer per request (the hot path).
    res.on('finish', this.finished)
    next()
  }

  /** A request starts: its duration is measured from here. */
  begin (res: ServerResponse): void {
    (res as TrackedResponse)[STARTED] = performance.now()
  }

  /** Its response finished: counts it and observes its duration. */
  readonly end = (res: ServerResponse): void => {
    const req = res.req as Request
    const seconds = (performance.now() - ((res as TrackedResponse)[STARTED] ?? performance.now())) / 1000
    const series = this.seriesFor(req.method, routeLabel(req), res.statusCode)
    series.duration.observe(seconds)
    series.requests.inc()
  }

  /** The 'finish' listener of `track`: called with the response as `this`. */
  private readonly finished: (this: ServerResponse) => void

  // The labelled series of each (route, method, status), looked up once: prom-client hashes
  // the label object on every observe() with labels, a cost the increment profile showed.
  // Nested maps rather than one key string, so a request builds no string to find its series.
  // Labels are bounded (route patterns, methods, statuses), and so are these maps.
  private readonly series = new Map<string, Map<string, Map<number, Series>>>()

  private seriesFor (method: string, route: string, status: number): Series {
    let byMethod = this.series.get(route)
    if (!byMethod) this.series.set(route, byMethod = new Map())
    let byStatus = byMethod.get(method)
    if (!byStatus) byMethod.set(method, byStatus = new Map())
    let found = byStatus.get(status)
    if (!found) {
      found = { duration: this.httpDuration.labels({ method, route }), requests: this.httpRequests.labels({ method, route, status: String(status) }) }
      byStatus.set(status, found)
    }
    return found
  }
}

interface Series { duration: ReturnType<Histogram['labels']>, requests: ReturnType<Counter['labels']> }

const STARTED = Symbol('contentd.metrics.started')
type TrackedResponse = ServerResponse & { [STARTED]?: number }

/**
 * The pattern of the route that handled a request. Every route is added to the app itself
 * (server/http/route-table.ts), so the matched route's path is the whole pattern.
 */
export function routeLabel (req: Request): string {
  const route = (req as Request & { route?: { path?: unknown } }).route
  return route && typeof route.path === 'string' ? route.path : 'unmatched'
}
