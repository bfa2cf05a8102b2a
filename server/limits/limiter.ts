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
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { createClient } from 'redis'
import { systemClock, type Clock } from '../clock.js'
import type { Config } from '../config.js'
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
