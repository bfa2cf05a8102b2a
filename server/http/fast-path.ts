// The HTTP fast path: three things every write request does, done without the per-request
// work of the general-purpose packages, because the increment benchmark (docs/benchmarks.md)
// showed that work in its profile and the ratio to bare Express is a goal:
// - quietRequestLog: above `info` no successful request is logged, so pino-http's child
//   logger, serializers and listeners are pure cost; the request id, `req.log` (made on first
//   use, through a getter defined once on the app's request prototype rather than on every
//   request) and the line for 5xx answers stay.
// - precomputedHeaders: helmet() and cors({origin: '*'}) send the same headers on every
//   request yet rebuild them each time; helmet is run once at start-up against a recording
//   response and its calls replayed. Whatever depends on the request (preflights, a list of
//   origins) still goes to cors. test/http/fast-path.test.ts compares every header with the
//   two packages side by side.
// - constantJson: a success body that never changes is serialized once and sent with the
//   headers res.json would set.
// - asOneLayer: the app's before-routing middleware (log, headers, length check) as one
//   layer of the router, and the metrics ended by the quiet log's one 'finish' listener
//   (RequestFollower); measured with the JSON body reader of body.ts, BENCHMARKS.md
//   ("What the benchmark changed in the server", 2026-11-27).
// Each was measured against the plain package in the CPU profile of the 1 KiB increment load
// (self time per request, 2026-11-23, ~560-610 µs profiled per increment): the quiet log
// saves ~31 µs (pino-http ~52 µs), the replay ~11 µs (helmet + cors ~16 µs), the constant
// body ~13 µs (res.json ~15 µs): 5%, 2% and 2%. Throughput runs of `npm run bench` drift by
// ±20% on this VM and cannot resolve effects this small; drop a trick when its profile share
// no longer justifies it.
import cors from 'cors'
import type { RequestHandler, Response } from 'express'
import helmet from 'helmet'
import { IncomingMessage, type ServerResponse } from 'node:http'
import type { Logger } from '../logger.js'
import { redactUrl } from './redact-url.js'

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void

const LOGGER = Symbol('contentd.requestLog.logger')
const CHILD = Symbol('contentd.requestLog.child')
const URL_AT_START = Symbol('contentd.requestLog.url')
const STARTED = Symbol('contentd.requestLog.started')

interface QuietRequest extends IncomingMessage {
  [LOGGER]?: Logger
  [CHILD]?: Logger
  [URL_AT_START]?: string
}

/** req.log: a child logger carrying the request, made on first use only. */
function childLogger (this: QuietRequest): Logger {
  const logger = this[LOGGER] as Logger
  // The URL as it came in (routing may rewrite req.url), redacted only when a line is written.
  return (this[CHILD] ??= logger.child({ req: { id: this.id, method: this.method, url: redactUrl(this[URL_AT_START] ?? '') } }))
}

const LOG_PROPERTY: PropertyDescriptor = {
  get: childLogger,
  // Someone assigning req.log (another logging middleware) gets an ordinary property.
  set (this: IncomingMessage, value: unknown) { Object.defineProperty(this, 'log', { value, writable: true, configurable: true, enumerable: true }) },
  configurable: true
}

const preparedPrototypes = new WeakSet<object>()

function defineLog (req: IncomingMessage): void {
  const proto = Object.getPrototypeOf(req) as object
  // Express gives each app's requests a prototype of their own; a bare IncomingMessage is
  // shared by everything in the process, so there the getter goes on the object itself.
  if (proto === IncomingMessage.prototype) { Object.defineProperty(req, 'log', LOG_PROPERTY); return }
  if (preparedPrototypes.has(proto)) return
  Object.defineProperty(proto, 'log', LOG_PROPERTY)
  preparedPrototypes.add(proto)
}

function logServerError (res: ServerResponse & { [STARTED]?: number }): void {
  if (res.statusCode < 500) return
  const req = res.req as QuietRequest & { log: Logger }
  req.log.error({ res: { statusCode: res.statusCode }, responseTime: Date.now() - (res[STARTED] ?? Date.now()) }, 'request errored')
}

/**
 * Something else that follows each request from start to finish (the metrics): begun with
 * the log, and ended by the log's 'finish' listener, so a request carries one listener, not
 * one per follower (each costs an `on` and, past the first, an array per emit).
 */
export interface RequestFollower {
  begin: (res: ServerResponse) => void
  end: (res: ServerResponse) => void
}

/** The request log above `info`; `requestIdFor` gives (and echoes) the request's id. */
export function quietRequestLog (logger: Logger, requestIdFor: (req: IncomingMessage, res: ServerResponse) => string, follower?: RequestFollower): Middleware {
  const finished = follower
    ? function (this: ServerResponse) { logServerError(this); follower.end(this) }
    : function (this: ServerResponse) { logServerError(this) }
  return (incoming, response, next) => {
    const req = incoming as QuietRequest
    const res = response as ServerResponse & { [STARTED]?: number }
    req.id = requestIdFor(req, res)
    req[LOGGER] = logger
    req[URL_AT_START] = req.url
    defineLog(req)
    res[STARTED] = Date.now()
    follower?.begin(res)
    res.on('finish', finished)
    next()
  }
}

/**
 * Synchronous middleware run in turn as one layer of the router: each app-level layer is a
 * turn of the router's dispatch loop (path match, prefix trim, its own try/catch) on every
 * request, for work that needs none of it. A handler that answers without calling next ends
 * the run, as in Express; an error passed to next, or thrown, goes to the router's next.
 */
export function asOneLayer (handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0
    const step = (error?: unknown): void => {
      const handler = handlers[i++]
      if (error !== undefined || handler === undefined) { next(error); return }
      handler(req, res, step)
    }
    step()
  }
}

type HeaderCall = { name: string, value: string } | { name: string, value: null }

/** What helmet() does to a response, recorded once: headers set and headers removed. */
function recordHelmet (): HeaderCall[] {
  const calls: HeaderCall[] = []
  const recorder = {
    setHeader (name: string, value: unknown) { calls.push({ name, value: String(value) }) },
    removeHeader (name: string) { calls.push({ name, value: null }) }
  }
  let finished = false
  helmet()({} as never, recorder as never, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error(String(error))
    finished = true
  })
  // helmet's defaults are synchronous; if that ever changes, fail at start-up, not per request.
  if (!finished) throw new Error('helmet did not finish synchronously; cannot precompute its headers')
  return calls
}

/** Security headers (helmet's defaults) and CORS headers for every response, in one middleware. */
export function precomputedHeaders (corsOrigins: '*' | string[], exposedHeaders: string[]): RequestHandler {
  const securityHeaders = recordHelmet()
  const corsMiddleware = cors({ origin: corsOrigins, exposedHeaders })
  const exposed = exposedHeaders.join(',')
  const applySecurityHeaders = (res: Response) => {
    for (const call of securityHeaders) {
      if (call.value === null) res.removeHeader(call.name)
      else res.setHeader(call.name, call.value)
    }
  }
  return (req, res, next) => {
    applySecurityHeaders(res)
    if (corsOrigins === '*' && req.method !== 'OPTIONS') {
      // What cors({origin: '*'}) sets on every request that is not a preflight.
      res.setHeader('Access-Control-Allow-Origin', '*')
      res.setHeader('Access-Control-Expose-Headers', exposed)
      next()
      return
    }
    corsMiddleware(req, res, next)
  }
}

/** Sends `{message}`, serialized once, with the headers res.json would set. */
export function constantJson (message: string): (res: Response) => void {
  const body = Buffer.from(JSON.stringify({ message }))
  const length = String(body.length)
  return res => {
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.setHeader('Content-Length', length)
    res.end(body)
  }
}
