// JSON bodies, parsed only once a route has authenticated and authorized the caller (so an
// anonymous caller learns nothing from body errors, docs/design.md §4). Any Content-Type is read
// as JSON: curl users forget the header, and JSON is all this API speaks.
// docs/design.md §13b "Bodies": an empty body is 400 INVALID_JSON, never `{}` (body-parser
// reads "" as {}, which made an empty update wipe the content), and a Content-Encoding other
// than these is 415.
import express, { type NextFunction, type Request, type RequestHandler } from 'express'
import type { IncomingMessage } from 'node:http'
import { ContentdError } from '../../shared/errors.js'
import { stringifiedWithin } from '../../shared/json-text.js'
import type { SourceJson } from '../../shared/validate-operation.js'

/** The content codings a request body may have (body-parser decodes them). */
export const BODY_CODINGS = ['gzip', 'deflate', 'br', 'identity'] as const
const ACCEPTED_CODINGS = new Set<string>(BODY_CODINGS)

const emptyBody = () => new ContentdError('INVALID_JSON', 'the body is empty')

/** Called by body-parser with the body as read (decoded), before it is parsed. */
function refuseEmpty (_req: unknown, _res: unknown, body: Buffer): void {
  if (body.length === 0) throw emptyBody()
}

/**
 * `keepText`: the route may find its value's JSON in the body's text (takeSourceJson), so a
 * body read here without any backslash keeps its text until the route takes it.
 */
export function jsonBody (limitBytes: number, keepText = false): RequestHandler {
  const parse = express.json({ limit: limitBytes, strict: false, type: () => true, verify: refuseEmpty })
  return (req, res, next) => {
    const coding = req.headers['content-encoding']
    if (coding !== undefined && !ACCEPTED_CODINGS.has(coding.trim().toLowerCase())) {
      // RFC 9110 §15.5.16: a 415 for a coding names the codings accepted.
      res.setHeader('Accept-Encoding', BODY_CODINGS.join(', '))
      throw new ContentdError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${JSON.stringify(coding)}; send ${BODY_CODINGS.join(', ')}`)
    }
    const length = plainJsonLength(req, limitBytes)
    if (length !== null) { readPlainJson(req, length, keepText, next); return }
    parse(req, res, (error?: unknown) => {
      if (error !== undefined) { next(error); return }
      // No body at all (neither Content-Length nor Transfer-Encoding): body-parser leaves it unset.
      if (req.body === undefined) { next(emptyBody()); return }
      next()
    })
  }
}

/**
 * The length of a request body read here rather than by body-parser: a Content-Length of 1
 * byte up to the limit, no Content-Encoding or Transfer-Encoding, no Content-Type or exactly
 * `application/json` (so UTF-8), a stream not yet read. That is nearly every write, and
 * body-parser's general machinery (raw-body, iconv-lite, content-type parsing, on-finished,
 * its listeners and closures) was ~4% of an increment's CPU profile and ~4 KB of its
 * allocations. Anything else is null and goes to body-parser. Either way the answer is the
 * same (test/http/plain-json-body.test.ts).
 */
export function plainJsonLength (req: IncomingMessage, limitBytes: number): number | null {
  const { headers } = req
  if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return null
  const type = headers['content-type']
  if (type !== undefined && type !== 'application/json') return null
  const length = Number(headers['content-length'])
  if (!Number.isSafeInteger(length) || length <= 0 || length > limitBytes) return null
  // What body-parser's on-finished check would skip (an upgrade, a gone socket, a read body).
  if ((req as IncomingMessage & { upgrade?: boolean }).upgrade === true || !req.readable || req.socket === null || !req.socket.writable) return null
  return length
}

/**
 * Requests whose body was read here from JSON text holding no \u escape (a fast search of the
 * text, about a microsecond per 100 KB). Decoded UTF-8 never holds a lone surrogate (a byte
 * sequence that would spell one becomes U+FFFD), so only an escape can put one in a parsed
 * string or key: without any, the body's values need no search for them (shared/json.ts).
 * A body read by body-parser (another charset, a content coding) is not vouched for.
 */
const escapeFree = new WeakSet<IncomingMessage>()

/** True when `req.body` was parsed here from text without a \u escape (see escapeFree). */
export function bodyWithoutEscapes (req: IncomingMessage): boolean {
  return escapeFree.has(req)
}

/**
 * Bodies read here, UTF-8 without any backslash, whose route asked for their text (jsonBody's
 * `keepText`): the text and what JSON.parse made of it, until the route takes them. Without a
 * backslash no string can hold an escape, so JSON.stringify of the parsed value is often the
 * body's own text, or a slice of it (shared/json-text.ts proves which).
 */
const sources = new WeakMap<IncomingMessage, { text: string, body: unknown }>()

/**
 * The request's SourceJson (shared/validate-operation.ts), once: the body's text is let go
 * of here, so that a value's text proven a slice of it is what keeps it, until the write has
 * made its entry (engine/write-step.ts), not the request until its answer.
 */
export function takeSourceJson (req: IncomingMessage): SourceJson | undefined {
  const source = sources.get(req)
  if (source === undefined) return undefined
  sources.delete(req)
  return (value, length) => stringifiedWithin(source.text, source.body, value, length)
}

/**
 * The parsed body, which the request no longer holds: a write route hands it to its operation
 * (ApplyOptions.valueHandedOver), and `req` lives until the answer, after the commit's sync,
 * so through it the value would outlive its place in the document (content-engine.ts).
 */
export function takeBody (req: Request): unknown {
  const body: unknown = req.body
  req.body = undefined
  return body
}

/**
 * Reads and parses a body plainJsonLength admitted, as body-parser would: UTF-8 with a
 * leading byte order mark dropped (iconv-lite's decoding), `strict: false` (any JSON value),
 * "" (a body that was only a BOM) as {}, a parse failure 400 INVALID_JSON, a body cut short
 * or a failed read 400 INVALID_BODY.
 */
function readPlainJson (req: Request, length: number, keepText: boolean, next: NextFunction): void {
  const chunks: Buffer[] = []
  let received = 0
  const onData = (chunk: Buffer) => {
    received += chunk.length
    chunks.push(chunk)
  }
  const onEnd = () => {
    stop()
    if (received !== length) { next(new ContentdError('INVALID_BODY')); return }
    const bytes = chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks, received)
    let text = bytes.toString('utf8')
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    try {
      req.body = text === '' ? {} : JSON.parse(text)
    } catch {
      next(new ContentdError('INVALID_JSON'))
      return
    }
    const backslash = text.indexOf('\\')
    if (backslash === -1) {
      escapeFree.add(req)
      if (keepText) sources.set(req, { text, body: req.body as unknown })
    } else if (!text.includes('\\u', backslash)) {
      escapeFree.add(req)
    }
    next()
  }
  const onFailure = () => {
    stop()
    next(new ContentdError('INVALID_BODY'))
  }
  // As raw-body: a close without an end or an error answers nothing (the client is gone).
  const stop = () => {
    req.off('data', onData)
    req.off('end', onEnd)
    req.off('aborted', onFailure)
    req.off('error', onFailure)
    req.off('close', stop)
  }
  req.on('data', onData)
  req.on('end', onEnd)
  req.on('aborted', onFailure)
  req.on('error', onFailure)
  req.on('close', stop)
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
