// Rate limits (DESIGN.md §8): RATE_LIMIT requests per minute per credential (per IP when
// anonymous), and a stricter AUTH_RATE_LIMIT per IP on login and signup against password
// guessing. Limited requests are answered 429 with Retry-After before any work is done, so
// they change nothing.
//
// With a Redis client the counters live in Redis and every node shares them; if Redis
// stops answering, each node falls back to its own in-memory counters (the "insurance"
// limiter) rather than refusing or waving through all traffic.
import type { Request, RequestHandler, Response } from 'express'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { createClient } from 'redis'
import { ContentdError } from '../../shared/errors.js'
import { context } from './context.js'

export type RedisClient = ReturnType<typeof createClient>

const WINDOW_SECONDS = 60

function limiter (points: number, name: string, redis: RedisClient | undefined): RateLimiterAbstract {
  const memory = new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix: name })
  if (!redis) return memory
  return new RateLimiterRedis({
    storeClient: redis,
    useRedisPackage: true,
    rejectIfRedisNotReady: true,
    points,
    duration: WINDOW_SECONDS,
    keyPrefix: `contentd:ratelimit:${name}`,
    insuranceLimiter: memory
  })
}

function clientIp (req: Request): string {
  return `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`
}

function limitBy (points: number, name: string, redis: RedisClient | undefined, subject: (req: Request, res: Response) => string): RequestHandler {
  if (points === 0) return (_req, _res, next) => next()
  const counters = limiter(points, name, redis)
  return async (req, res, next) => {
    try {
      await counters.consume(subject(req, res))
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))))
      throw new ContentdError('RATE_LIMITED')
    }
    next()
  }
}

/** Every API request: per credential (its hash, never the secret), per IP when anonymous. */
export function rateLimit (requestsPerMinute: number, redis?: RedisClient): RequestHandler {
  return limitBy(requestsPerMinute, 'api', redis, (req, res) => {
    const identity = context(res).identity
    return identity ? `credential:${identity.credentialHash}` : clientIp(req)
  })
}

/** Login and signup attempts, per IP whoever they claim to be. */
export function authRateLimit (attemptsPerMinute: number, redis?: RedisClient): RequestHandler {
  return limitBy(attemptsPerMinute, 'auth', redis, req => clientIp(req))
}
