// ?limit=&cursor= of the paginated lists (server/services/pagination.ts). Other query
// parameters are ignored, as everywhere; a bad limit or a repeated parameter is 400
// INVALID_QUERY.
import type { Request } from 'express'
import { ContentdError } from '../../shared/errors.js'
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, type PageQuery } from '../services/pagination.js'

export function pageQuery (req: Request): PageQuery {
  const { limit, cursor } = req.query
  if (limit !== undefined && (typeof limit !== 'string' || !/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > PAGE_LIMIT_MAX)) {
    throw new ContentdError('INVALID_QUERY', `limit must be a whole number from 1 to ${PAGE_LIMIT_MAX}`)
  }
  if (cursor !== undefined && (typeof cursor !== 'string' || cursor === '')) {
    throw new ContentdError('INVALID_QUERY', 'cursor must be the nextCursor of the previous page')
  }
  return { limit: limit === undefined ? PAGE_LIMIT_DEFAULT : Number(limit), cursor }
}
