// One log line per request, with a request id that is echoed as X-Request-Id. A caller's
// own X-Request-Id is kept when it is a sane token, so ids can follow a request across
// services.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pinoHttp } from 'pino-http'
import type { Logger } from '../logger.js'
import { quietRequestLog, type RequestFollower } from './fast-path.js'
import { redactUrl } from './redact-url.js'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void

function requestIdFor (req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id']
  const id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID()
  res.setHeader('X-Request-Id', id)
  return id
}

/**
 * `follower` (the metrics) is begun and ended with each request: above `info` by the quiet
 * log's one 'finish' listener, otherwise by a listener of its own after pino-http's.
 */
export function requestLog (logger: Logger, follower?: RequestFollower): Middleware {
  // Below `info` no successful request is logged (see fast-path.ts).
  if (!logger.isLevelEnabled('info')) return quietRequestLog(logger, requestIdFor, follower)
  const log = pinoHttp({
    logger,
    genReqId: requestIdFor,
    customLogLevel (_req, res, error) {
      if (error || res.statusCode >= 500) return 'error'
      return 'info'
    },
    serializers: {
      req: (req: { id: unknown, method: string, url: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode })
    }
  })
  if (!follower) return log
  const ended = function (this: ServerResponse) { follower.end(this) }
  return (req, res, next) => {
    follower.begin(res)
    log(req, res, (error?: unknown) => {
      res.on('finish', ended)
      next(error)
    })
  }
}
