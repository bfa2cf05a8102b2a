// RATE_LIMIT requests per minute per credential, per IP when anonymous (DESIGN.md §8).
// Limited requests are answered 429 with Retry-After before any work is done.
import type { RequestHandler } from 'express'
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible'
import { ContentdError } from '../../shared/errors.js'
import { context } from './context.js'

export function rateLimit (requestsPerMinute: number): RequestHandler {
  if (requestsPerMinute === 0) return (_req, _res, next) => next()
  const limiter = new RateLimiterMemory({ points: requestsPerMinute, duration: 60 })
  return async (req, res, next) => {
    const identity = context(res).identity
    const subject = identity ? `credential:${identity.credentialHash}` : `ip:${req.ip ?? 'unknown'}`
    try {
      await limiter.consume(subject)
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))))
      throw new ContentdError('RATE_LIMITED')
    }
    next()
  }
}
