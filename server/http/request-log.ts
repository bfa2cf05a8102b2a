// One log line per request, with a request id that is echoed as X-Request-Id. A caller's
// own X-Request-Id is kept when it is a sane token, so ids can follow a request across
// services.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pinoHttp } from 'pino-http'
import type { Logger } from '../logger.js'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function requestLog (logger: Logger) {
  return pinoHttp({
    logger,
    genReqId (req: IncomingMessage, res: ServerResponse) {
      const given = req.headers['x-request-id']
      const id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID()
      res.setHeader('X-Request-Id', id)
      return id
    },
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
