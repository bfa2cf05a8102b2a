// The query parameters of the history reads (docs/design.md §9): `since` and `version` are
// versions, `limit` a page size. Each is a canonical non-negative integer as text: `7`,
// never `07`, `+7`, `7.0`, `1e1`, ` 7` or `7&since=8` (a repeated parameter).
import { ContentdError } from '../../shared/errors.js'

export const CHANGES_PAGE_DEFAULT = 100
export const CHANGES_PAGE_MAX = 1000

// At most 15 digits: every such number is a JavaScript integer, exactly.
const CANONICAL = /^(?:0|[1-9][0-9]{0,14})$/

const canonical = (value: unknown): number | null => typeof value === 'string' && CANONICAL.test(value) ? Number(value) : null

/** `?since=` or `?version=`: 400 INVALID_VERSION unless a canonical non-negative integer. */
export function versionParam (name: 'since' | 'version' | 'Last-Event-ID', value: unknown): number {
  const version = canonical(value)
  if (version === null) throw new ContentdError('INVALID_VERSION', `${name} must be a non-negative integer such as 0 or 42`)
  return version
}

/**
 * `?limit=` of the changes page: 1..1000. Not a version, so a bad one is INVALID_BODY (the
 * catalogue's code for a malformed request member), naming the parameter.
 */
export function limitParam (value: unknown): number {
  const limit = canonical(value)
  if (limit === null || limit < 1 || limit > CHANGES_PAGE_MAX) {
    throw new ContentdError('INVALID_BODY', `limit must be an integer from 1 to ${CHANGES_PAGE_MAX}`)
  }
  return limit
}
