// JSON bodies, parsed only once a route has authenticated and authorized the caller (so an
// anonymous caller learns nothing from body errors, docs/design.md §4). Any Content-Type is read
// as JSON: curl users forget the header, and JSON is all this API speaks.
// docs/design.md §13b "Bodies": an empty body is 400 INVALID_JSON, never `{}` (body-parser
// reads "" as {}, which made an empty update wipe the content), and a Content-Encoding other
// than these is 415.
import express, { type RequestHandler } from 'express'
import { ContentdError } from '../../shared/errors.js'

/** The content codings a request body may have (body-parser decodes them). */
export const BODY_CODINGS = ['gzip', 'deflate', 'br', 'identity'] as const
const ACCEPTED_CODINGS = new Set<string>(BODY_CODINGS)

const emptyBody = () => new ContentdError('INVALID_JSON', 'the body is empty')

/** Called by body-parser with the body as read (decoded), before it is parsed. */
function refuseEmpty (_req: unknown, _res: unknown, body: Buffer): void {
  if (body.length === 0) throw emptyBody()
}

export function jsonBody (limitBytes: number): RequestHandler {
  const parse = express.json({ limit: limitBytes, strict: false, type: () => true, verify: refuseEmpty })
  return (req, res, next) => {
    const coding = req.headers['content-encoding']
    if (coding !== undefined && !ACCEPTED_CODINGS.has(coding.trim().toLowerCase())) {
      // RFC 9110 §15.5.16: a 415 for a coding names the codings accepted.
      res.setHeader('Accept-Encoding', BODY_CODINGS.join(', '))
      throw new ContentdError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${JSON.stringify(coding)}; send ${BODY_CODINGS.join(', ')}`)
    }
    parse(req, res, (error?: unknown) => {
      if (error !== undefined) { next(error); return }
      // No body at all (neither Content-Length nor Transfer-Encoding): body-parser leaves it unset.
      if (req.body === undefined) { next(emptyBody()); return }
      next()
    })
  }
}

/**
 * A declared Content-Length above the limit is refused before anything reads the body, and
 * before authentication (docs/design.md §13b): the header alone decides. The connection
 * closes after the answer, so the body is never read at all (server/index.ts withholds
 * `100 Continue` from such a request for the same reason).
 */
export function declaredLengthLimit (limitBytes: number): RequestHandler {
  return (req, res, next) => {
    if (!declaresTooLarge(req.headers['content-length'], limitBytes)) { next(); return }
    res.setHeader('Connection', 'close')
    throw new ContentdError('BODY_TOO_LARGE', `Content-Length ${req.headers['content-length'] ?? ''} is over ${limitBytes} bytes`)
  }
}

/** True when a Content-Length header declares more than `limitBytes`. */
export function declaresTooLarge (contentLength: string | undefined, limitBytes: number): boolean {
  if (contentLength === undefined) return false
  const declared = Number(contentLength)
  return Number.isFinite(declared) && declared > limitBytes
}
