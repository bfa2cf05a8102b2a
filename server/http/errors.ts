// One error shape for every failure: {message, code}, from the catalogue. Unexpected
// errors are logged with their details and answered with a generic 500.
import type { ErrorRequestHandler, RequestHandler } from 'express'
import { ContentdError, ERRORS, type ErrorCode } from '../../shared/errors.js'

// body-parser's error types, mapped onto the catalogue.
const BODY_PARSER_ERRORS: Record<string, ErrorCode> = {
  'entity.parse.failed': 'INVALID_JSON',
  'entity.too.large': 'BODY_TOO_LARGE',
  'entity.verify.failed': 'INVALID_BODY',
  'encoding.unsupported': 'INVALID_BODY',
  'charset.unsupported': 'INVALID_BODY',
  'request.size.invalid': 'INVALID_BODY'
}

export const notFound: RequestHandler = () => {
  throw new ContentdError('NOT_FOUND')
}

export function toContentdError (error: unknown): ContentdError | null {
  if (error instanceof ContentdError) return error
  if (typeof error === 'object' && error !== null && 'type' in error && typeof error.type === 'string') {
    const code = BODY_PARSER_ERRORS[error.type]
    if (code) return new ContentdError(code)
  }
  // Other client errors raised while reading the request carry an http-errors status but no
  // catalogued type: a corrupt gzip body (a zlib error) or a URL parameter that is not valid
  // percent-encoding (the router's "Failed to decode param"). They are the client's fault.
  const status = typeof error === 'object' && error !== null && 'status' in error ? error.status : undefined
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (error instanceof Error && error.message.startsWith('Failed to decode param')) {
      return new ContentdError('NOT_FOUND', 'the URL is not valid percent-encoding')
    }
    // The static files (send) refuse a failed If-Match / If-Unmodified-Since with 412.
    const byStatus: Partial<Record<number, ErrorCode>> = { 412: 'PRECONDITION_FAILED', 413: 'BODY_TOO_LARGE', 404: 'NOT_FOUND' }
    return new ContentdError(byStatus[status] ?? 'INVALID_BODY')
  }
  return null
}

// Headers a handler may have set before it failed (static files set these early); an error
// body is JSON and must not inherit them.
const ENTITY_HEADERS = ['Content-Type', 'Content-Length', 'Content-Encoding', 'Content-Range', 'Content-Disposition', 'ETag', 'Last-Modified', 'Cache-Control', 'Accept-Ranges']

export const errorHandler: ErrorRequestHandler = (error, req, res, next) => {
  if (res.headersSent) { next(error); return }
  for (const header of ENTITY_HEADERS) res.removeHeader(header)
  const known = toContentdError(error)
  if (!known) {
    req.log.error({ err: error }, 'unexpected error')
    res.status(500).json({ message: ERRORS.INTERNAL_ERROR.message, code: 'INTERNAL_ERROR' })
    return
  }
  if (known.status === 401) {
    res.setHeader('WWW-Authenticate', known.code === 'INVALID_TOKEN' ? 'Bearer error="invalid_token"' : 'Bearer')
  }
  if (known.status >= 500) req.log.error({ err: error }, 'service unavailable')
  res.status(known.status).json(known.toBody())
}
