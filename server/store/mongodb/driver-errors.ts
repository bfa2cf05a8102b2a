// MongoDB driver errors → the catalogue (docs/design.md §20). Every error that means "not now"
// (MongoDB unreachable, failing over, too slow, a write conflict, a transaction the server no
// longer knows, a write concern not met, a commit whose outcome is unknown) is 503
// STORE_UNAVAILABLE: the client retries. The driver reconnects on its own. Content errors
// never come from MongoDB: the shared core checks every operation on the version the update
// is filtered on (translate.ts), so a MongoDB error about a path or type would be a bug and
// stays a 500. The 16 MiB BSON document limit is MongoDB's own: 413 CONTENT_TOO_LARGE.
import {
  MongoClientClosedError, MongoError, MongoNetworkError, MongoNotConnectedError, MongoOperationTimeoutError,
  MongoServerClosedError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError, MongoWriteConcernError
} from 'mongodb'
import { ContentdError, isContentdError } from '../../../shared/errors.js'

/** Server error codes (src/mongo/base/error_codes.yml) that mean "not now; retry". */
export const UNAVAILABLE_CODES: ReadonlySet<number> = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  24, // LockTimeout
  46, // LockBusy
  50, // MaxTimeMSExpired
  64, // WriteConcernFailed
  89, // NetworkTimeout
  91, // ShutdownInProgress
  112, // WriteConflict
  117, // ConflictingOperationInProgress
  189, // PrimarySteppedDown
  202, // NetworkInterfaceExceededTimeLimit
  251, // NoSuchTransaction
  256, // TransactionCommitted (a retried commit that cannot tell)
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436 // NotPrimaryOrSecondary
])

/** Labels the server and driver put on errors worth retrying, or whose outcome is unknown. */
export const UNAVAILABLE_LABELS = ['TransientTransactionError', 'UnknownTransactionCommitResult', 'RetryableWriteError'] as const

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
  MongoOperationTimeoutError,
  MongoWriteConcernError
]

export function hasLabel (error: unknown, label: typeof UNAVAILABLE_LABELS[number]): boolean {
  return error instanceof MongoError && error.hasErrorLabel(label)
}

export function isUnavailable (error: unknown): boolean {
  if (!(error instanceof MongoError)) return false
  if (UNREACHABLE_CLASSES.some(kind => error instanceof kind)) return true
  if (typeof error.code === 'number' && UNAVAILABLE_CODES.has(error.code)) return true
  return UNAVAILABLE_LABELS.some(label => error.hasErrorLabel(label))
}

export function isDuplicateKey (error: unknown): boolean {
  return error instanceof MongoServerError && error.code === CODE_DUPLICATE_KEY
}

/** The catalogued error for a driver error; the error unchanged when it is not one we can name (a 500). */
export function mapDriverError (error: unknown): unknown {
  if (isContentdError(error)) return error
  if (error instanceof MongoServerError && typeof error.code === 'number' && TOO_LARGE_CODES.has(error.code)) {
    return new ContentdError('CONTENT_TOO_LARGE', 'the project document would pass MongoDB\'s 16 MiB limit')
  }
  if (isUnavailable(error)) {
    const unavailable = new ContentdError('STORE_UNAVAILABLE')
    unavailable.cause = error
    return unavailable
  }
  return error
}
