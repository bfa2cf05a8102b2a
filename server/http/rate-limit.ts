// Rate limits over HTTP (docs/design.md §13): the Express middleware that takes each
// request's point from the node's limiters (server/limits/limiter.ts, which the realtime
// layer shares) and answers 429 with Retry-After when the budget is spent.
import type { Request, RequestHandler, Response } from 'express'
import { credentialsBody } from '../../shared/schemas.js'
import { ipSubject, userSubject, type Limiter, type RetryAfter } from '../limits/limiter.js'
import { preparedError } from '../limits/prepared-error.js'
import { context } from './context.js'

function clientIp (req: Request): string {
  return ipSubject(req.ip ?? req.socket.remoteAddress)
}

/**
 * The 429, written directly: a flooder over its budget keeps asking, so each refusal must
 * cost as little as possible. Thrown, it would travel the router's error path past every
 * later route to the error handler, which made a 429 cost as much server CPU as a served
 * `GET /api/me` (docs/operations.md#rate-limits).
 */
function refuse (res: Response, retryAfter: RetryAfter): void {
  const { status, body } = preparedError('RATE_LIMITED')
  res.writeHead(status, { 'Retry-After': String(retryAfter), 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(body.length) })
  res.end(body)
}

function limitBy (limiter: Limiter, subject: (req: Request, res: Response) => string): RequestHandler {
  // Off: not even a promise per request on the hot path.
  if (!limiter.enabled) return (_req, _res, next) => next()
  return async (req, res, next) => {
    const wait = await limiter.take(subject(req, res))
    if (wait !== null) { refuse(res, wait); return }
    next()
  }
}

// What charge() takes more from: the budget the request's own point came from.
const chargers = new WeakMap<Response, (points: number) => void>()

/** Every API request: per user (never per credential: a fresh key must not mean a fresh budget), per IP when anonymous. */
export function rateLimit (limiter: Limiter): RequestHandler {
  if (!limiter.enabled) return (_req, _res, next) => next()
  return async (req, res, next) => {
    const identity = context(res).identity
    const subject = identity ? userSubject(identity.user.id) : clientIp(req)
    const wait = await limiter.take(subject)
    if (wait !== null) { refuse(res, wait); return }
    chargers.set(res, points => { limiter.charge(subject, points).catch(() => { /* the request was already admitted */ }) })
    next()
  }
}

/**
 * A request that turned out costly (a key page naming many projects) takes `points` more of
 * the caller's RATE_LIMIT budget, after the fact: the cost is known only once the work is
 * done, and it is the caller's next requests that wait. No-op when rate limiting is off.
 */
export function charge (res: Response, points: number): void {
  if (points > 0) chargers.get(res)?.(points)
}

/** Login and signup attempts, per IP whoever they claim to be. */
export function authRateLimit (limiter: Limiter): RequestHandler {
  return limitBy(limiter, req => clientIp(req))
}

/**
 * Login attempts per username, from any address, whether or not the user exists (the
 * answer never tells): every attempt takes a point before the password is checked, so
 * concurrent guesses cannot slip past the count, and a successful login gives the points
 * back. Runs after the body is parsed; a body the login route refuses (400) is no attempt.
 */
export function loginThrottle (limiter: Limiter): RequestHandler {
  if (!limiter.enabled) return (_req, _res, next) => next()
  return async (req, res, next) => {
    const parsed = credentialsBody.safeParse(req.body)
    if (!parsed.success) { next(); return }
    const subject = `username:${parsed.data.username}`
    const wait = await limiter.take(subject)
    if (wait !== null) { refuse(res, wait); return }
    res.once('finish', () => {
      if (res.statusCode === 200) limiter.reset(subject).catch(() => { /* the lock just lasts its window */ })
    })
    next()
  }
}
