// FAULT INJECTION, not evidence that MongoDB works: the mapping from MongoDB driver errors
// (real driver error classes, constructed here as the driver would raise them) to the
// catalogue (docs/design.md §20), and the transaction runner scripted to fail the way a
// replica set under a failover, a slow disk or a conflicting writer fails (issue 28, A5); plus
// the start-up messages that name MongoDB without leaking the password.
import {
  MongoClient, MongoNetworkError, MongoNetworkTimeoutError, MongoOperationTimeoutError, MongoServerError, MongoServerSelectionError,
  MongoTopologyClosedError, MongoWriteConcernError
} from 'mongodb'
import { describe, expect, it } from 'vitest'
import { ContentdError, type ErrorCode } from '../../shared/errors.js'
import { startupFailureMessage } from '../../server/store/mongodb/connection.js'
import { databaseNameFrom, describeMongo, redact, uriParts } from '../../server/store/mongodb/uri.js'
import { isUnavailable, mapDriverError } from '../../server/store/mongodb/driver-errors.js'
import { COMMIT_ATTEMPTS, runTransaction, settle, type TransactionSession } from '../../server/store/mongodb/transaction.js'

const serverError = (code: number, codeName: string, labels: string[] = []) =>
  new MongoServerError({ code, codeName, errmsg: `${codeName} from the server`, errorLabels: labels })

const writeConcernError = () =>
  new MongoWriteConcernError({ writeConcernError: { code: 64, errmsg: 'waiting for replication timed out', errInfo: { wtimeout: true } } } as never)

const codeOf = (error: unknown): ErrorCode | null => error instanceof ContentdError ? error.code : null

describe('driver error → catalogued error (fault injection)', () => {
  const unavailable: Array<[string, unknown]> = [
    ['network error', new MongoNetworkError('connection reset')],
    ['network timeout', new MongoNetworkTimeoutError('timed out')],
    ['server selection failed', new MongoServerSelectionError('connect ECONNREFUSED 127.0.0.1:1', {} as never)],
    ['client closed', new MongoTopologyClosedError()],
    ['client-side operation timeout', new MongoOperationTimeoutError('timed out')],
    ['primary stepped down', serverError(189, 'PrimarySteppedDown')],
    ['not writable primary', serverError(10107, 'NotWritablePrimary')],
    ['retryable write label', serverError(9999, 'SomethingNew', ['RetryableWriteError'])],
    ['write conflict past every retry (no label left)', serverError(112, 'WriteConflict')],
    ['write conflict labelled transient', serverError(112, 'WriteConflict', ['TransientTransactionError'])],
    ['write concern not met (wtimeout)', writeConcernError()],
    ['MaxTimeMSExpired', serverError(50, 'MaxTimeMSExpired')],
    ['NoSuchTransaction', serverError(251, 'NoSuchTransaction')],
    ['ExceededTimeLimit', serverError(262, 'ExceededTimeLimit')],
    ['LockTimeout', serverError(24, 'LockTimeout')],
    ['commit result unknown', serverError(91, 'ShutdownInProgress', ['UnknownTransactionCommitResult'])]
  ]
  it.each(unavailable)('%s → 503 STORE_UNAVAILABLE', (_name, error) => {
    const mapped = mapDriverError(error)
    expect(codeOf(mapped)).toBe('STORE_UNAVAILABLE')
    expect((mapped as ContentdError).status).toBe(503)
  })

  it.each([
    ['document over 16 MiB', serverError(10334, 'BSONObjectTooLarge')],
    ['update result over 16 MiB', serverError(17419, 'Location17419')]
  ])('%s → 413 CONTENT_TOO_LARGE (MongoDB\'s own hard limit)', (_name, error) => {
    expect(codeOf(mapDriverError(error))).toBe('CONTENT_TOO_LARGE')
  })

  it('leaves errors it cannot name unchanged (they become a generic 500): content errors never come from MongoDB', () => {
    for (const error of [serverError(2, 'BadValue'), serverError(14, 'TypeMismatch'), serverError(28, 'PathNotViable'), serverError(11000, 'DuplicateKey'), new Error('boom')]) {
      expect(mapDriverError(error)).toBe(error)
    }
  })

  it('passes catalogued errors through', () => {
    const e = new ContentdError('PRECONDITION_FAILED')
    expect(mapDriverError(e)).toBe(e)
  })

  it('does not call a plain Error "unavailable"', () => {
    expect(isUnavailable(new Error('ECONNREFUSED'))).toBe(false)
    expect(isUnavailable(serverError(14, 'TypeMismatch'))).toBe(false)
  })
})

/** A ClientSession scripted to fail: each call takes the next scripted outcome (an error, or success). */
class ScriptedSession implements TransactionSession {
  readonly calls: string[] = []
  constructor (private readonly commits: Array<Error | null>) {}
  startTransaction (): void { this.calls.push('start') }
  async commitTransaction (): Promise<void> {
    this.calls.push('commit')
    const next = this.commits.shift()
    if (next) throw next
  }

  async abortTransaction (): Promise<void> { this.calls.push('abort') }
}

const OPTIONS = { writeConcern: { w: 'majority' as const }, readConcern: { level: 'majority' as const } }

describe('one content transaction under injected faults', () => {
  it('commits: the work\'s value', async () => {
    const session = new ScriptedSession([null])
    expect(await runTransaction(session, OPTIONS, async () => 7)).toEqual({ state: 'committed', value: 7 })
    expect(session.calls).toEqual(['start', 'commit'])
  })

  it('a filter that matched nothing aborts and reports the round lost (the write reads again)', async () => {
    const session = new ScriptedSession([])
    expect(await runTransaction(session, OPTIONS, async () => null)).toEqual({ state: 'lost' })
    expect(session.calls).toEqual(['start', 'abort'])
  })

  it('a write conflict inside the transaction aborts and reports the round lost, not a 500', async () => {
    const session = new ScriptedSession([])
    const outcome = await runTransaction(session, OPTIONS, async () => { throw serverError(112, 'WriteConflict', ['TransientTransactionError']) })
    expect(outcome).toEqual({ state: 'lost' })
    expect(session.calls).toEqual(['start', 'abort'])
  })

  it.each([
    ['MaxTimeMSExpired', serverError(50, 'MaxTimeMSExpired')],
    ['a write concern error', writeConcernError()],
    ['a network error', new MongoNetworkError('reset')]
  ])('%s inside the transaction aborts and is 503', async (_name, error) => {
    const session = new ScriptedSession([])
    const failure = await runTransaction(session, OPTIONS, async () => { throw error }).catch((e: unknown) => e)
    expect(codeOf(failure)).toBe('STORE_UNAVAILABLE')
    expect(session.calls).toEqual(['start', 'abort'])
  })

  it('NoSuchTransaction at commit (unlabelled) is 503', async () => {
    const session = new ScriptedSession([serverError(251, 'NoSuchTransaction')])
    expect(codeOf(await runTransaction(session, OPTIONS, async () => 1).catch((e: unknown) => e))).toBe('STORE_UNAVAILABLE')
  })

  it('a commit aborted transiently reports the round lost', async () => {
    const session = new ScriptedSession([serverError(251, 'NoSuchTransaction', ['TransientTransactionError'])])
    expect(await runTransaction(session, OPTIONS, async () => 1)).toEqual({ state: 'lost' })
  })

  it('an unknown commit result is retried, and a retry that succeeds is a commit', async () => {
    const session = new ScriptedSession([serverError(91, 'ShutdownInProgress', ['UnknownTransactionCommitResult']), null])
    expect(await runTransaction(session, OPTIONS, async () => 3)).toEqual({ state: 'committed', value: 3 })
    expect(session.calls).toEqual(['start', 'commit', 'commit'])
  })

  it('a commit result that stays unknown is reported as unknown (the store then looks for its entry)', async () => {
    const unknown = () => writeConcernError()
    const errors = Array.from({ length: COMMIT_ATTEMPTS }, () => { const e = unknown(); e.addErrorLabel('UnknownTransactionCommitResult'); return e })
    const session = new ScriptedSession(errors)
    expect(await runTransaction(session, OPTIONS, async () => 3)).toEqual({ state: 'unknown', value: 3 })
    expect(session.calls.filter(call => call === 'commit')).toHaveLength(COMMIT_ATTEMPTS)
  })
})

describe('a commit whose outcome is unknown is settled by looking for its entry', () => {
  it('entry found: the change happened, and is answered (and broadcast) like any other', async () => {
    expect(await settle({ state: 'unknown', value: { version: 8 } }, async () => true)).toEqual({ version: 8 })
  })

  it('entry not found: 503, never a success that did not happen', async () => {
    expect(codeOf(await settle({ state: 'unknown', value: 1 }, async () => false).catch((e: unknown) => e))).toBe('STORE_UNAVAILABLE')
  })

  it('committed and lost rounds need no look-up', async () => {
    const lookUp = async (): Promise<boolean> => { throw new Error('not expected') }
    expect(await settle({ state: 'committed', value: 2 }, lookUp)).toBe(2)
    expect(await settle({ state: 'lost' }, lookUp)).toBeNull()
  })
})

describe('MONGODB_URI described for people', () => {
  it('splits several hosts, credentials, database and options', () => {
    expect(uriParts('mongodb://app:s3cr%40t@db1:27017,db2:27018/content?replicaSet=rs0')).toEqual({
      scheme: 'mongodb', hosts: 'db1:27017,db2:27018', database: 'content', password: 's3cr%40t'
    })
    expect(databaseNameFrom('mongodb://127.0.0.1:27017')).toBe('contentd')
    expect(databaseNameFrom('mongodb://127.0.0.1:27017/?w=majority')).toBe('contentd')
    expect(databaseNameFrom('mongodb+srv://cluster0.example.net/prod')).toBe('prod')
    expect(describeMongo('mongodb://u:p@h1,h2/x')).toBe('MongoDB at h1,h2')
  })

  it('redacts the password, raw and percent-decoded', () => {
    const uri = 'mongodb://app:s3cr%40t@db1/x'
    expect(redact('auth s3cr%40t and s3cr@t', uri)).toBe('auth *** and ***')
  })

  it('an unreachable server: one line naming MongoDB, the hosts and the timeout, without the password', () => {
    const uri = 'mongodb://app:hunter2@10.0.0.9:27017/x'
    const line = startupFailureMessage(new MongoServerSelectionError('connect ECONNREFUSED 10.0.0.9:27017', {} as never), uri, 5000)
    expect(line).toBe('MongoDB at 10.0.0.9:27017 is unreachable (server selection timed out after 5000 ms: connect ECONNREFUSED 10.0.0.9:27017)')
    expect(line).not.toContain('hunter2')
  })

  it('wrong credentials and a malformed URI (a real driver parse error) get their own lines', () => {
    expect(startupFailureMessage(serverError(18, 'AuthenticationFailed'), 'mongodb://a:b@h/x', 5000))
      .toBe('MongoDB at h refused the credentials in MONGODB_URI (authentication failed)')
    let parseError: unknown
    try { new MongoClient('mongodb://') } catch (e) { parseError = e }
    expect(startupFailureMessage(parseError, 'mongodb://', 5000)).toMatch(/^MONGODB_URI is not a valid MongoDB connection string: /)
  })
})
