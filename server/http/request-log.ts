// One log line per request, with a request id that is echoed as X-Request-Id. A caller's
// own X-Request-Id is kept when it is a sane token, so ids can follow a request across
// services.
import { randomUUID } from 'node:crypto'
import { IncomingMessage, type ServerResponse } from 'node:http'
import { pinoHttp } from 'pino-http'
import type { Logger } from '../logger.js'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void

function requestIdFor (req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id']
  const id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID()
  res.setHeader('X-Request-Id', id)
  return id
}

export function requestLog (logger: Logger): Middleware {
  // Below `info` no successful request is logged, so pino-http's per-request work (a child
  // logger with serialized bindings, listeners) is pure cost: about 5% of an increment's CPU
  // in the benchmark's profile. The quiet path keeps the request id, req.log and the error line.
  if (!logger.isLevelEnabled('info')) return quietRequestLog(logger)
  return pinoHttp({
    logger,
    genReqId: requestIdFor,
    customLogLevel (_req, res, error) {
      if (error || res.statusCode >= 500) return 'error'
      return 'info'
    },
    serializers: {
      req: (req: { id: unknown, method: string, url: string }) => ({ id: req.id, method: req.method, url: req.url }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode })
    }
  })
}

// The quiet path's per-request state lives in symbol-keyed data properties, and req.log is a
// getter on the request prototype defined once: defining accessors on every request object
// (and a closure per request) showed up in the increment profile.
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
  return (this[CHILD] ??= logger.child({ req: { id: this.id, method: this.method, url: this[URL_AT_START] } }))
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

function logServerError (this: ServerResponse & { [STARTED]?: number }): void {
  if (this.statusCode < 500) return
  const req = this.req as QuietRequest & { log: Logger }
  req.log.error({ res: { statusCode: this.statusCode }, responseTime: Date.now() - (this[STARTED] ?? Date.now()) }, 'request errored')
}

function quietRequestLog (logger: Logger): Middleware {
  return (incoming, response, next) => {
    const req = incoming as QuietRequest
    const res = response as ServerResponse & { [STARTED]?: number }
    req.id = requestIdFor(req, res)
    req[LOGGER] = logger
    req[URL_AT_START] = req.url
    defineLog(req)
    res[STARTED] = Date.now()
    res.on('finish', logServerError)
    next()
  }
}
