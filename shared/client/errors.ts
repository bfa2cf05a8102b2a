// The one error type the SDK throws. Server failures carry the server's {message, code} and
// HTTP status unchanged (codes from shared/errors.ts); failures that never reached the
// server, or got an answer that is not contentd's, have client-side codes and status 0 or
// the HTTP status seen.
import type { ErrorCode, SchemaError } from '../errors.js'

/** Codes the client itself produces; they never come from the server. */
export type ClientErrorCode =
  /** fetch failed (server down, DNS, CORS, aborted): status 0. */
  | 'NETWORK_ERROR'
  /** An answer without contentd's JSON error body (a proxy's 502 page, for example). */
  | 'UNEXPECTED_RESPONSE'
  /** The socket connection or a subscription failed without a catalogued code. */
  | 'REALTIME_ERROR'
  /** The offline outbox is at its limit of writes or bytes (docs/sdk.md#offline); nothing was queued. */
  | 'OUTBOX_FULL'

export class ContentdClientError extends Error {
  /** HTTP status; 0 when no HTTP answer was received. */
  readonly status: number
  readonly code: ErrorCode | ClientErrorCode
  /**
   * With SCHEMA_VIOLATION: how the write (422) or the schema being set (409) breaks the
   * project's schema, each `{path, message}` with a dot path ("" for the root). Otherwise undefined.
   */
  readonly errors: SchemaError[] | undefined
  /** A failed batch or patch: the index of the operation that failed. */
  readonly operation: number | undefined

  constructor (status: number, code: ErrorCode | ClientErrorCode, message: string, options?: { cause?: unknown, errors?: SchemaError[], operation?: number }) {
    super(message, options)
    this.name = 'ContentdError'
    this.status = status
    this.code = code
    this.errors = options?.errors
    this.operation = options?.operation
  }
}

/** Body → error, tolerating bodies that are not contentd's. */
export function errorFromBody (status: number, body: unknown, fallbackText: string): ContentdClientError {
  if (typeof body === 'object' && body !== null && 'code' in body && 'message' in body &&
    typeof body.code === 'string' && typeof body.message === 'string') {
    const errors = 'errors' in body && Array.isArray(body.errors) ? (body.errors as unknown[]).filter(isSchemaError) : undefined
    const operation = 'operation' in body && typeof body.operation === 'number' ? body.operation : undefined
    return new ContentdClientError(status, body.code as ErrorCode, body.message, { ...(errors ? { errors } : {}), ...(operation === undefined ? {} : { operation }) })
  }
  const snippet = fallbackText.slice(0, 200)
  return new ContentdClientError(status, 'UNEXPECTED_RESPONSE', `Unexpected response ${status}${snippet ? `: ${snippet}` : ''}`)
}

function isSchemaError (value: unknown): value is SchemaError {
  return typeof value === 'object' && value !== null && 'path' in value && 'message' in value &&
    typeof value.path === 'string' && typeof value.message === 'string'
}
