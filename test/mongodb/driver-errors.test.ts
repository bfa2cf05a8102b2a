// The mapping from MongoDB driver errors (real driver error classes, constructed here) to
// the catalogue, and the start-up messages that name MongoDB without leaking the password.
import { MongoClient, MongoNetworkError, MongoNetworkTimeoutError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb'
import { describe, expect, it } from 'vitest'
import { ContentdError, type ErrorCode } from '../../shared/errors.js'
import type { OperationName } from '../../shared/operations.js'
import { startupFailureMessage } from '../../server/store/mongodb/connection.js'
import { databaseNameFrom, describeMongo, redact, uriParts } from '../../server/store/mongodb/uri.js'
import { isUnavailable, mapDriverError } from '../../server/store/mongodb/driver-errors.js'

const serverError = (code: number, codeName: string, labels: string[] = []) =>
  new MongoServerError({ code, codeName, errmsg: `${codeName} from the server`, errorLabels: labels })

const codeOf = (error: unknown): ErrorCode | null => error instanceof ContentdError ? error.code : null

describe('driver error → catalogued error', () => {
  const cases: Array<[string, unknown, OperationName | undefined, ErrorCode]> = [
    ['network error', new MongoNetworkError('connection reset'), 'set', 'STORE_UNAVAILABLE'],
    ['network timeout', new MongoNetworkTimeoutError('timed out'), undefined, 'STORE_UNAVAILABLE'],
    ['server selection failed', new MongoServerSelectionError('connect ECONNREFUSED 127.0.0.1:1', {} as never), 'increment', 'STORE_UNAVAILABLE'],
    ['client closed', new MongoTopologyClosedError(), undefined, 'STORE_UNAVAILABLE'],
    ['primary stepped down', serverError(189, 'PrimarySteppedDown'), 'push', 'STORE_UNAVAILABLE'],
    ['not writable primary', serverError(10107, 'NotWritablePrimary'), 'set', 'STORE_UNAVAILABLE'],
    ['retryable write label', serverError(112, 'WriteConflict', ['RetryableWriteError']), 'set', 'STORE_UNAVAILABLE'],
    ['$inc on a string (TypeMismatch)', serverError(14, 'TypeMismatch'), 'increment', 'NOT_A_NUMBER'],
    ['$inc on null while decrementing', serverError(14, 'TypeMismatch'), 'decrement', 'NOT_A_NUMBER'],
    ['$push onto an object (BadValue "must be an array")', serverError(2, 'BadValue'), 'push', 'NOT_AN_ARRAY'],
    ['$push $position onto a string', serverError(2, 'BadValue'), 'insert', 'NOT_AN_ARRAY'],
    ['TypeMismatch while pushing', serverError(14, 'TypeMismatch'), 'push', 'NOT_AN_ARRAY'],
    ['a path through a scalar (PathNotViable)', serverError(28, 'PathNotViable'), 'set', 'PATH_CONFLICT'],
    ['document over 16 MiB', serverError(10334, 'BSONObjectTooLarge'), 'update', 'CONTENT_TOO_LARGE'],
    ['update result over 16 MiB', serverError(17419, 'Location17419'), 'push', 'CONTENT_TOO_LARGE']
  ]
  it.each(cases)('%s → %s', (_name, error, op, expected) => {
    expect(codeOf(mapDriverError(error, op))).toBe(expected)
  })

  it('leaves errors it cannot name unchanged (they become a generic 500)', () => {
    const unknown = serverError(2, 'BadValue')
    expect(mapDriverError(unknown, 'set')).toBe(unknown)
    const plain = new Error('boom')
    expect(mapDriverError(plain)).toBe(plain)
    const duplicate = serverError(11000, 'DuplicateKey')
    expect(mapDriverError(duplicate)).toBe(duplicate)
  })

  it('passes catalogued errors through', () => {
    const e = new ContentdError('PRECONDITION_FAILED')
    expect(mapDriverError(e, 'set')).toBe(e)
  })

  it('does not call a plain Error "unavailable"', () => {
    expect(isUnavailable(new Error('ECONNREFUSED'))).toBe(false)
    expect(isUnavailable(serverError(14, 'TypeMismatch'))).toBe(false)
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
