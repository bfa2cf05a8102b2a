// The one error catalogue. Every error contentd returns is one of these codes, with its
// HTTP status and default message; every error body is {message, code}, and a schema
// violation adds `errors` (docs/design.md §12). docs/errors.md lists them all (a test checks
// it), and clients can rely on the codes never changing meaning.
import type { z } from 'zod'
import type { errorBody, schemaError } from './api/errors.js'

export const ERRORS = {
  // 400: the request itself is wrong
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON' },
  INVALID_BODY: { status: 400, message: 'The request body is not valid' },
  INVALID_PATH: { status: 400, message: 'The path is not valid' },
  INVALID_VALUE: { status: 400, message: 'The value is not valid' },
  INVALID_USERNAME: { status: 400, message: 'The username must start with "@"' },
  NOT_A_NUMBER: { status: 400, message: 'The value at the path is not a number' },
  NOT_AN_ARRAY: { status: 400, message: 'The value at the path is not an array' },
  PATH_CONFLICT: { status: 400, message: 'The path runs through a value that is not an object or array' },
  INVALID_ARRAY_INDEX: { status: 400, message: 'An array index must be a non-negative integer without leading zeros' },
  INDEX_OUT_OF_RANGE: { status: 400, message: 'The array index is out of range' },
  NON_FINITE_RESULT: { status: 400, message: 'The result is not a finite number' },
  INVALID_SCHEMA: { status: 400, message: 'The schema is not a valid JSON Schema (draft 2020-12)' },
  INVALID_VERSION: { status: 400, message: 'The version must be a non-negative integer, at most the current version' },
  INVALID_QUERY: { status: 400, message: 'A query parameter is not valid' },
  PASSWORD_TOO_COMMON: { status: 400, message: 'This password is too easy to guess; choose another one' },
  WEBHOOK_URL_FORBIDDEN: { status: 400, message: 'The webhook URL targets an address contentd does not deliver to (loopback, private, link-local, metadata or plain http:; see WEBHOOK_ALLOW_PRIVATE)' },
  INVALID_PATCH: { status: 400, message: 'The JSON Patch is not valid or cannot be applied' },
  INVALID_IDEMPOTENCY_KEY: { status: 400, message: 'Idempotency-Key must be 1 to 255 visible ASCII characters' },
  INVALID_AUTH_CONFIG: { status: 400, message: 'The app sign-in settings are not valid' },
  INVALID_RULES: { status: 400, message: 'The rules document is not valid' },
  // 401: who are you?
  AUTH_REQUIRED: { status: 401, message: 'Authentication required: send Authorization: Bearer <token or API key>' },
  INVALID_TOKEN: { status: 401, message: 'The session token or API key is invalid, revoked or expired' },
  WRONG_CREDENTIALS: { status: 401, message: 'Wrong username or password' },
  // 403: known, but not allowed
  FORBIDDEN: { status: 403, message: 'You do not have access to this project' },
  KEY_PERMISSION_DENIED: { status: 403, message: 'The API key does not have the permission required for this project' },
  SESSION_REQUIRED: { status: 403, message: 'This action needs a session token, not an API key' },
  OWNER_REQUIRED: { status: 403, message: 'Only the project owner can do this' },
  SIGNUP_DISABLED: { status: 403, message: 'Signup is disabled on this server' },
  KEY_SCOPE_DENIED: { status: 403, message: 'The API key is narrowed to other paths or operations' },
  ORIGIN_NOT_ALLOWED: { status: 403, message: 'This origin is not allowed (CORS_ORIGINS)' },
  QUOTA_EXCEEDED: { status: 403, message: 'This account has reached its limit' },
  RULES_DENIED: { status: 403, message: 'The project\'s rules do not allow this' },
  // 404
  NOT_FOUND: { status: 404, message: 'No such endpoint' },
  USER_NOT_FOUND: { status: 404, message: 'User not found' },
  PROJECT_NOT_FOUND: { status: 404, message: 'Project not found' },
  PATH_NOT_FOUND: { status: 404, message: 'Nothing is stored at this path' },
  KEY_NOT_FOUND: { status: 404, message: 'API key not found' },
  MEMBER_NOT_FOUND: { status: 404, message: 'That user is not a member of this project' },
  SCHEMA_NOT_FOUND: { status: 404, message: 'The project has no schema' },
  VERSION_NOT_FOUND: { status: 404, message: 'The project has no such version yet' },
  WEBHOOK_NOT_FOUND: { status: 404, message: 'Webhook not found' },
  RULES_NOT_FOUND: { status: 404, message: 'The project has no rules' },
  AUTH_CONFIG_NOT_FOUND: { status: 404, message: 'The project trusts no app sign-in' },
  // 405: the path exists, the method does not (the Allow header lists the ones that do)
  METHOD_NOT_ALLOWED: { status: 405, message: 'This endpoint does not accept that method' },
  UNKNOWN_EVENT: { status: 404, message: 'No such realtime event' },
  // 409
  USERNAME_TAKEN: { status: 409, message: 'That username is taken' },
  PROJECT_EXISTS: { status: 409, message: 'A project with that slug already exists' },
  TEST_FAILED: { status: 409, message: 'A test operation failed: the value at its path is not the one given' },
  IDEMPOTENCY_IN_PROGRESS: { status: 409, message: 'A request with this Idempotency-Key is still being processed; retry later' },
  SUBSCRIPTION_CANCELLED: { status: 409, message: 'An unsubscribe ended this subscription before it was ready' },
  NOT_SUBSCRIBED: { status: 409, message: 'Subscribe to the project on this connection first' },
  // 410: history no longer kept (HISTORY_LIMIT); take a fresh snapshot
  HISTORY_EXPIRED: { status: 410, message: 'That version is older than the history this project keeps' },
  // 422: a write whose result breaks the project's schema (409 when setting a schema the
  // current content breaks); the body lists the violations in `errors`
  SCHEMA_VIOLATION: { status: 422, message: 'The content would not match the project\'s schema' },
  // 412, 413, 415, 422, 429
  PRECONDITION_FAILED: { status: 412, message: 'The precondition failed: If-Match does not match the current version, or If-None-Match does' },
  BODY_TOO_LARGE: { status: 413, message: 'The request body is larger than the server accepts' },
  CONTENT_TOO_LARGE: { status: 413, message: 'The change would make the project content larger than its limit' },
  PRESENCE_STATE_TOO_LARGE: { status: 413, message: 'The presence state is larger than the server accepts (PRESENCE_STATE_LIMIT)' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body\'s media type or content coding is not supported' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'This Idempotency-Key was used for a different request' },
  RATE_LIMITED: { status: 429, message: 'Too many requests; retry later' },
  TOO_MANY_CONNECTIONS: { status: 429, message: 'Too many realtime connections for this user' },
  TOO_MANY_SUBSCRIPTIONS: { status: 429, message: 'Too many subscriptions on this connection' },
  PRESENCE_FULL: { status: 429, message: 'The project has as many presence members as it allows (PRESENCE_MEMBERS_LIMIT)' },
  // 5xx: never carry internals
  INTERNAL_ERROR: { status: 500, message: 'Internal server error' },
  STORE_UNAVAILABLE: { status: 503, message: 'The store is unavailable; retry later' }
} as const satisfies Record<string, { status: number; message: string }>

export type ErrorCode = keyof typeof ERRORS

/** One way the content breaks a project's schema; `path` in dot form, "" for the root. */
export type SchemaError = z.infer<typeof schemaError>

/** The JSON body of every error response (shared/api/errors.ts): `errors` only with SCHEMA_VIOLATION, `operation` for batches and patches. */
export type ErrorBody = z.infer<typeof errorBody>

export interface ContentdErrorExtras {
  /** SCHEMA_VIOLATION's list of violations. */
  errors?: SchemaError[]
  /** A status other than the catalogue's, where the design names one (409 SCHEMA_VIOLATION). */
  status?: number
  /** RULES_DENIED's refused path (docs/design.md §17). */
  path?: string
}

/**
 * An expected failure with a catalogued code. `detail` refines the catalogue message
 * (for example which segment of a path is wrong); it must never hold internals. The message
 * is always "<catalogue message>: <detail>", composed here and only here: code that passes a
 * failure on (a zod issue, say) carries `code` and `detail`, never `message`, so the
 * catalogue text cannot end up in a message twice.
 */
export class ContentdError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly detail: string | undefined
  readonly errors: SchemaError[] | undefined
  readonly path: string | undefined

  constructor (code: ErrorCode, detail?: string, extras: ContentdErrorExtras = {}) {
    const base = ERRORS[code].message
    super(detail ? `${base}: ${detail}` : base)
    this.name = 'ContentdError'
    this.code = code
    this.status = extras.status ?? ERRORS[code].status
    this.detail = detail || undefined
    this.errors = extras.errors
    this.path = extras.path
  }

  toBody (): ErrorBody {
    if (this.path !== undefined) return { message: this.message, code: this.code, path: this.path }
    return this.errors ? { message: this.message, code: this.code, errors: this.errors } : { message: this.message, code: this.code }
  }
}

export function isContentdError (e: unknown): e is ContentdError {
  return e instanceof ContentdError
}

/**
 * A failure of one operation of a batch or patch (docs/design.md §10): the operation's own
 * error, with the index of the operation in the request, which the body carries as `operation`.
 */
export class OperationError extends ContentdError {
  readonly operation: number

  constructor (cause: ContentdError, operation: number) {
    super(cause.code, cause.detail === undefined ? `operation ${operation}` : `operation ${operation}: ${cause.detail}`, { status: cause.status, ...(cause.path === undefined ? {} : { path: cause.path }) })
    this.operation = operation
  }

  override toBody (): ErrorBody {
    return { message: this.message, code: this.code, operation: this.operation, ...(this.path === undefined ? {} : { path: this.path }) }
  }
}
