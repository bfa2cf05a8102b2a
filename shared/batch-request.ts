// A `POST …/content/batch` body (docs/design.md §10) validated into batch operations, each
// checked as its own single request would be. Server side (zod); the engine is batch.ts.
import { z } from 'zod'
import { BATCH_OPERATION_NAMES, type BatchOperation } from './batch.js'
import { ContentdError, isContentdError, OperationError } from './errors.js'
import type { Json } from './json.js'
import type { PathOperation } from './operations.js'
import { pathOperationFrom, type PathOperationName } from './operation-table.js'
import { parseBody, pathField } from './schemas.js'
import { validateOperation } from './validate-operation.js'

const batchBody = z.strictObject({ operations: z.array(z.unknown(), { error: 'operations must be an array' }) })
const testBody = z.strictObject({ path: pathField, value: z.unknown().refine(value => value !== undefined, { error: 'value is required' }) })

/**
 * A batch request's operations, each checked as its single request would be (unknown members
 * refused, the document-free checks of validateOperation). A problem with one operation is an
 * OperationError naming its index; a batch that is empty or has more than `limit`, INVALID_BODY.
 */
export function parseBatch (body: unknown, limit: number): BatchOperation[] {
  const { operations } = parseBody(batchBody, body)
  if (operations.length === 0 || operations.length > limit) {
    throw new ContentdError('INVALID_BODY', `a batch has 1 to ${limit} operations, not ${operations.length}`)
  }
  return operations.map((item, i) => {
    try {
      return batchOperationFrom(item)
    } catch (error) {
      throw isContentdError(error) ? new OperationError(error, i) : error
    }
  })
}

function batchOperationFrom (item: unknown): BatchOperation {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new ContentdError('INVALID_BODY', 'an operation must be a JSON object')
  const { op, ...fields } = item as Record<string, unknown>
  if (typeof op !== 'string' || !(BATCH_OPERATION_NAMES as readonly string[]).includes(op)) {
    throw new ContentdError('INVALID_BODY', `op must be one of ${BATCH_OPERATION_NAMES.join(', ')}`)
  }
  if (op === 'test') {
    const parsed = parseBody(testBody, fields)
    return { op: 'test', path: parsed.path, value: parsed.value as Json }
  }
  const operation = pathOperationFrom(op as PathOperationName, fields) as PathOperation
  validateOperation(operation)
  return operation
}


/**
 * The batch body as the API reference describes it (parseBatch checks each operation with
 * its own request's schema, which is stricter per op).
 */
export const batchBodySchema = z.strictObject({
  operations: z.array(z.strictObject({
    op: z.enum(BATCH_OPERATION_NAMES as [string, ...string[]]),
    path: z.string().meta({ description: 'Dot path (docs/design.md §2)' }),
    value: z.unknown().optional().meta({ description: 'As the single operation takes it; required for set, push, insert and test' }),
    index: z.number().int().optional().meta({ description: 'insert only' })
  })).min(1).meta({ description: '1 to BATCH_LIMIT (default 100) operations, applied in order, all or nothing' })
})

/** An RFC 6902 JSON Patch as the API reference describes it (parsePatch validates). */
export const patchBodySchema = z.array(z.object({
  op: z.enum(['add', 'remove', 'replace', 'move', 'copy', 'test']),
  path: z.string().meta({ description: 'JSON Pointer (RFC 6901), not the root ""' }),
  from: z.string().optional().meta({ description: 'move and copy' }),
  value: z.unknown().optional().meta({ description: 'add, replace and test' })
})).min(1).meta({ description: 'RFC 6902 JSON Patch: 1 to BATCH_LIMIT operations, atomic' })
