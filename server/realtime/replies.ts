// Every Socket.IO error answer has one shape: `{ ok: false, code, message }`, plus
// `retryAfter` (seconds) when rate limited — the same codes and messages as HTTP.
import type { EventFailure } from '../../shared/events.js'
import { ContentdError, type ErrorBody, type ErrorCode } from '../../shared/errors.js'

export function failure (code: ErrorCode, detail?: string): EventFailure {
  return { ok: false, ...new ContentdError(code, detail).toBody() }
}

export function failureOf (body: ErrorBody): EventFailure {
  return { ok: false, ...body }
}

export function rateLimited (retryAfter: number): EventFailure {
  return { ...failure('RATE_LIMITED'), retryAfter }
}
