// The one-line start-up failure for MongoDB (server/index.ts prints it as
// "contentd: cannot open the mongodb store: <message>"): which hosts, never the password.
import { MongoInvalidArgumentError, MongoParseError, MongoServerError, MongoServerSelectionError } from 'mongodb'
import { describeMongo, redact } from './uri.js'

/** One clear line for a MongoDB that could not be opened. */
export function startupFailureMessage (error: unknown, uri: string, serverSelectionTimeoutMS: number): string {
  const where = describeMongo(uri)
  const detail = error instanceof Error ? error.message : String(error)
  // mongodb-connection-string-url throws its own MongoParseError class: compare by name too.
  const parseProblem = error instanceof MongoParseError || error instanceof MongoInvalidArgumentError ||
    (error instanceof Error && error.name === 'MongoParseError')
  if (parseProblem) return `MONGODB_URI is not a valid MongoDB connection string: ${redact(detail, uri)}`
  if (error instanceof MongoServerSelectionError) {
    return `${where} is unreachable (server selection timed out after ${serverSelectionTimeoutMS} ms: ${redact(detail, uri)})`
  }
  if (error instanceof MongoServerError && (error.code === 18 || error.codeName === 'AuthenticationFailed')) {
    return `${where} refused the credentials in MONGODB_URI (authentication failed)`
  }
  if (error instanceof MongoServerError && (error.code === 13 || error.codeName === 'Unauthorized')) {
    return `${where}: the MONGODB_URI user may not create indexes in the database (${redact(detail, uri)})`
  }
  return `${where} failed: ${redact(detail, uri)}`
}

/**
 * The start-up failure for a standalone `mongod`: each change is written with its change log
 * entry in one transaction (docs/design.md §9), and transactions need a replica set.
 */
export function standaloneMessage (uri: string): string {
  return `${describeMongo(uri)} is a standalone server, but contentd writes every change together with its change log entry in one transaction, which needs a replica set; a single-member replica set will do (start mongod with --replSet rs0 and run rs.initiate() once)`
}
