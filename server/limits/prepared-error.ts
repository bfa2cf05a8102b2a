// An error's answer made once per code, for answers written straight to the response rather
// than thrown to the error handler (errors.ts): refusals, which a client over its budget keeps
// asking for, so each must cost as little as possible. Same status and `{message, code}` body
// as the error handler sends.
import { ContentdError, type ErrorCode } from '../../shared/errors.js'

export interface PreparedError {
  status: number
  body: Buffer
}

const prepared = new Map<ErrorCode, PreparedError>()

export function preparedError (code: ErrorCode): PreparedError {
  let known = prepared.get(code)
  if (!known) {
    const error = new ContentdError(code)
    known = { status: error.status, body: Buffer.from(JSON.stringify(error.toBody())) }
    prepared.set(code, known)
  }
  return known
}
