// MongoDB driver errors → the catalogue. A MongoDB that cannot be reached (down, failing
// over, network gone) is 503 STORE_UNAVAILABLE, never a crash; the driver reconnects on its
// own and later requests succeed. The 400-class server codes only show up if a guard ever
// lets MongoDB see a case it handles differently; they map onto the same codes the shared
// operations use. Anything else stays as it is and becomes a 500 with a generic message.
import {
  MongoClientClosedError, MongoError, MongoNetworkError, MongoNotConnectedError, MongoOperationTimeoutError,
  MongoServerClosedError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError
} from 'mongodb'
import { ContentdError, isContentdError } from '../../../shared/errors.js'
import type { OperationName } from '../../../shared/operations.js'

/** Server error codes (src/mongo/base/error_codes.yml) that mean "not reachable right now". */
export const UNAVAILABLE_CODES: ReadonlySet<number> = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436 // NotPrimaryOrSecondary
])

export const CODE_BAD_VALUE = 2
export const CODE_TYPE_MISMATCH = 14
export const CODE_PATH_NOT_VIABLE = 28
export const CODE_DUPLICATE_KEY = 11000
/** BSONObjectTooLarge, and "resulting document after update is larger than 16 MiB". */
export const TOO_LARGE_CODES: ReadonlySet<number> = new Set([10334, 17419, 17420])

const UNREACHABLE_CLASSES = [
  MongoNetworkError, // includes timeouts and a cleared connection pool
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoClientClosedError,
  MongoOperationTimeoutError
]

export function isUnavailable (error: unknown): boolean {
  if (!(error instanceof MongoError)) return false
  if (UNREACHABLE_CLASSES.some(kind => error instanceof kind)) return true
  if (typeof error.code === 'number' && UNAVAILABLE_CODES.has(error.code)) return true
  return error.hasErrorLabel('RetryableWriteError')
}

export function isDuplicateKey (error: unknown): boolean {
  return error instanceof MongoServerError && error.code === CODE_DUPLICATE_KEY
}

/**
 * The catalogued error for a driver error, given the content operation that caused it (if
 * any). Returns the error unchanged when it is not one we can name.
 */
export function mapDriverError (error: unknown, op?: OperationName): unknown {
  if (isContentdError(error)) return error
  if (isUnavailable(error)) return new ContentdError('STORE_UNAVAILABLE')
  if (!(error instanceof MongoServerError) || typeof error.code !== 'number') return error
  const code = error.code
  if (TOO_LARGE_CODES.has(code)) return new ContentdError('CONTENT_TOO_LARGE')
  if (code === CODE_PATH_NOT_VIABLE) return new ContentdError('PATH_CONFLICT')
  const arrayOperation = op === 'push' || op === 'insert'
  if (code === CODE_TYPE_MISMATCH) {
    if (op === 'increment' || op === 'decrement') return new ContentdError('NOT_A_NUMBER')
    if (arrayOperation) return new ContentdError('NOT_AN_ARRAY')
    return new ContentdError('PATH_CONFLICT')
  }
  // "The field 'x' must be an array but is of type int": $push onto a non-array.
  if (code === CODE_BAD_VALUE && arrayOperation) return new ContentdError('NOT_AN_ARRAY')
  return error
}
