// One content write's transaction (docs/design.md §20), run by hand rather than with the
// driver's withTransaction, whose retry loop runs for up to 120 s and then lets the error
// through as it is. Here:
// - a transient error (write conflict, failover, NoSuchTransaction) aborts and reports the
//   round as lost: the write path reads again and retries, within its own bounded attempts;
// - a commit whose outcome is unknown is retried (the driver's specification says a retried
//   commitTransaction is safe) a few times; if it stays unknown the caller finds out by
//   reading the change entry it wrote (mongo-store.ts), so a change that did commit is never
//   answered as failed, nor left untold to listeners;
// - anything else aborts and becomes a catalogued error (driver-errors.ts): 503 when it
//   means "not now", never a bare 500 for a conflict or a timeout.
import type { TransactionOptions } from 'mongodb'
import { ContentdError } from '../../../shared/errors.js'
import { hasLabel, mapDriverError } from './driver-errors.js'

/** The part of a ClientSession a transaction needs (tests script it to inject faults). */
export interface TransactionSession {
  startTransaction (options?: TransactionOptions): void
  commitTransaction (): Promise<unknown>
  abortTransaction (): Promise<unknown>
}

export type TransactionOutcome<T> =
  | { state: 'committed', value: T }
  /** Nothing was written: the filter matched nothing, or the transaction aborted transiently. */
  | { state: 'lost' }
  /** The commit was sent and its outcome could not be learnt. */
  | { state: 'unknown', value: T }

export const COMMIT_ATTEMPTS = 3

/** `work` returns null when its update matched nothing (then nothing is committed). */
export async function runTransaction<T> (session: TransactionSession, options: TransactionOptions, work: () => Promise<T | null>): Promise<TransactionOutcome<T>> {
  session.startTransaction(options)
  let value: T | null
  try {
    value = await work()
  } catch (error) {
    await session.abortTransaction().catch(() => undefined)
    if (hasLabel(error, 'TransientTransactionError')) return { state: 'lost' }
    throw mapDriverError(error)
  }
  if (value === null) {
    await session.abortTransaction().catch(() => undefined)
    return { state: 'lost' }
  }
  for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
    try {
      await session.commitTransaction()
      return { state: 'committed', value }
    } catch (error) {
      if (hasLabel(error, 'UnknownTransactionCommitResult')) continue
      // Aborted by the server before it committed: nothing was written.
      if (hasLabel(error, 'TransientTransactionError')) return { state: 'lost' }
      throw mapDriverError(error)
    }
  }
  return { state: 'unknown', value }
}

/**
 * What the write path is told: the committed value, or null when nothing was written (it
 * reads again). An unknown outcome is settled by `committed`, which looks for the entry the
 * transaction wrote (read from a majority): found, the change happened and is answered and
 * broadcast like any other; not found, 503.
 */
export async function settle<T> (outcome: TransactionOutcome<T>, committed: () => Promise<boolean>): Promise<T | null> {
  if (outcome.state === 'committed') return outcome.value
  if (outcome.state === 'lost') return null
  if (await committed()) return outcome.value
  throw new ContentdError('STORE_UNAVAILABLE', 'the change could not be confirmed; read the content before retrying')
}
