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

// Built once: a client over its budget keeps asking, and every refusal must cost as little
// as possible (an error object per answer captured a stack trace each time).
const RATE_LIMITED = failure('RATE_LIMITED')

export function rateLimited (retryAfter: number): EventFailure {
  return { ...RATE_LIMITED, retryAfter }
}
