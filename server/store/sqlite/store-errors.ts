// SQLite failures that say "not now" rather than "wrong": a full disk (SQLITE_FULL), an I/O
// error (SQLITE_IOERR_*), the file locked by another process past busy_timeout, a file that
// cannot be opened or written. They answer 503 STORE_UNAVAILABLE (docs/design.md §4), like
// an unreachable MongoDB: the failed statement or transaction changed nothing (SQLite rolls
// it back), and the next write works once the cause is gone, e.g. when space returns.
import { ContentdError } from '../../../shared/errors.js'

const TRANSIENT = ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_READONLY']

/** The catalogued error for a SQLite failure that is not the request's fault; others as they are. */
export function toStoreError (error: unknown): unknown {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : ''
  if (!TRANSIENT.some(prefix => code === prefix || code.startsWith(`${prefix}_`))) return error
  // The cause goes to the log with the 503 (errorHandler logs 5xx with `cause`), never to the client.
  const unavailable = new ContentdError('STORE_UNAVAILABLE')
  unavailable.cause = error
  return unavailable
}
