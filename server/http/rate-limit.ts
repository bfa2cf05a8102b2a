// Rate limits (docs/design.md §13). One budget, RATE_LIMIT per minute (a token bucket that
// holds ten seconds' worth, see burstOf(), and refills continuously), per user — all of a user's sessions and
// keys together — or per IP when anonymous; HTTP requests, Socket.IO
// handshakes (per IP) and Socket.IO events (per user) all draw from it, so no transport is a
// way around it. A request is one point, and one that turns out costly takes more after the
// fact (charge()), so the budget bounds work rather than request count. On top: AUTH_RATE_LIMIT per IP on login and signup, and a per-username
// lock on login (LOGIN_ATTEMPTS_PER_USERNAME in LOGIN_ATTEMPT_WINDOW) against guessing one
// account's password from many addresses. Limited requests are answered 429 with
// Retry-After before any work is done, so they change nothing, and only after
// RATE_LIMIT_DELAY (tarpit.ts), so a client that loops on refusals waits instead.
//
// With a Redis client the counters live in Redis and every node shares them; if Redis
// stops answering, each node falls back to its own in-memory counters (the "insurance"
// limiter) rather than refusing or waving through all traffic.
import type { Request, RequestHandler, Response } from 'express'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { createClient } from 'redis'
import { credentialsBody } from '../../shared/schemas.js'
import { systemClock, type Clock } from '../clock.js'
import type { Config } from '../config.js'
import { context } from './context.js'
import { preparedError } from './prepared-error.js'
import { Tarpit } from './tarpit.js'
import { TokenBucket } from './token-bucket.js'

export type RedisClient = ReturnType<typeof createClient>

const API_WINDOW_SECONDS = 60

/** Whose budget a request or event draws from. */
export const userSubject = (userId: string) => `user:${userId}`
export const ipSubject = (address: string | undefined) => `ip:${address ?? 'unknown'}`

/** Seconds until a refused caller may try again (what Retry-After and `retryAfter` say). */
export type RetryAfter = number

/**
 * What a token bucket of `points` a minute holds: ten seconds' worth, so an emptied budget is
 * back to a full burst within 10 s, and a flooder lives on no more than that plus the refill;
 * but at least 100 (never more than `points`), so a small limit still allows a page's burst
 * of requests. A whole minute's worth let the fairness bench's flooder spend ~4,900 points
 * saved up before it ever met a refusal (docs/operations.md#why-the-limits-are-shaped-as-they-are).
 */
export function burstOf (points: number): number {
  return Math.min(points, Math.max(100, points / 6))
}

/**
 * A budget of `points` per window per subject; `points` 0 turns it off. Either a fixed
 * window (the login limits: a lock lasts its window) or, with `bucket`, a token bucket of
 * `points` refilled continuously over the window (RATE_LIMIT, see token-bucket.ts). With a
 * `tarpit`, a refused take() answers only once the tarpit lets the refusal go.
 */
export class Limiter {
  private readonly counters: RateLimiterAbstract | null = null
  private readonly bucket: TokenBucket | null = null
  private readonly tarpit: Tarpit | null

  constructor (points: number, windowSeconds: number, name: string, redis?: RedisClient, options: { lockSeconds?: number, bucket?: boolean, now?: Clock, tarpit?: Tarpit } = {}) {
    this.tarpit = options.tarpit ?? null
    if (points === 0) return
    if (options.bucket) {
      this.bucket = new TokenBucket(points * 60 / windowSeconds, burstOf(points), name, redis, options.now)
      return
    }
    const shape = { points, duration: windowSeconds, ...(options.lockSeconds ? { blockDuration: options.lockSeconds } : {}) }
    const memory = new RateLimiterMemory({ ...shape, keyPrefix: name })
    this.counters = redis
      ? new RateLimiterRedis({ ...shape, storeClient: redis, useRedisPackage: true, rejectIfRedisNotReady: true, keyPrefix: `contentd:ratelimit:${name}`, insuranceLimiter: memory })
      : memory
  }

  get enabled (): boolean {
    return this.counters !== null || this.bucket !== null
  }

  /**
   * Takes `points` (one by default) of `subject`'s budget: null when allowed, else seconds to
   * wait, resolved once the refusal has been held (see tarpit.ts).
   */
  async take (subject: string, points = 1): Promise<RetryAfter | null> {
    const wait = await this.takeNow(subject, points)
    if (wait !== null) await this.tarpit?.hold(subject, wait)
    return wait
  }

  private async takeNow (subject: string, points: number): Promise<RetryAfter | null> {
    if (this.bucket) {
      const waitMs = await this.bucket.take(subject, points)
      return waitMs === 0 ? null : Math.max(1, Math.ceil(waitMs / 1000))
    }
    if (!this.counters) return null
    try {
      await this.counters.consume(subject, points)
      return null
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection
      return Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))
    }
  }

  /** Takes `points` of `subject`'s budget even past its end (work already done): its next requests wait. */
  async charge (subject: string, points: number): Promise<void> {
    if (this.bucket) await this.bucket.take(subject, points, true)
    else await this.takeNow(subject, points)
  }

  /** Gives `subject` its whole budget back. */
  async reset (subject: string): Promise<void> {
    await this.bucket?.reset(subject)
    await this.counters?.delete(subject)
  }
}

/** The limiters of one node, built once and shared by the HTTP app and the realtime layer. */
export interface Limits {
  /** RATE_LIMIT: every API request, Socket.IO handshake and Socket.IO event. */
  api: Limiter
  /** AUTH_RATE_LIMIT: login and signup attempts per IP. */
  auth: Limiter
  /** LOGIN_ATTEMPTS_PER_USERNAME: login attempts per username that did not succeed. */
  login: Limiter
  /** RATE_LIMIT_DELAY: holds every refusal of the three, and the re-subscribe budget's. */
  tarpit: Tarpit
}

export interface LimitsOptions {
  /** The in-memory buckets' time (tests pass a manual clock so a bucket refills only when told). */
  now?: Clock
  /** Told how many refusals are held after every change (the /metrics gauge). */
  onHeld?: (held: number) => void
}

export function createLimits (config: Config, redis?: RedisClient, { now = systemClock, onHeld }: LimitsOptions = {}): Limits {
  // RATE_LIMIT=0 turns rate limiting off altogether, the stricter login/signup limit too.
  const on = config.rateLimitPerMinute > 0
  const loginWindow = Math.max(1, Math.ceil(config.loginAttemptWindowMs / 1000))
  const tarpit = new Tarpit(config.rateLimitDelay.ms, config.rateLimitDelay.heldPerSubject, onHeld)
  return {
    api: new Limiter(config.rateLimitPerMinute, API_WINDOW_SECONDS, 'api', redis, { bucket: true, now, tarpit }),
    auth: new Limiter(on ? config.authRateLimitPerMinute : 0, API_WINDOW_SECONDS, 'auth', redis, { tarpit }),
    // Independent of RATE_LIMIT: it guards accounts rather than capacity. Once hit, the
    // username stays locked for a whole window, however the guesses were spread over it.
    login: new Limiter(config.loginAttemptsPerUsername, loginWindow, 'login-username', redis, { lockSeconds: loginWindow, tarpit }),
    tarpit
  }
}

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
