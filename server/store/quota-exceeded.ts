// The one answer of every store when a quota is full (docs/design.md §13).
import { ContentdError } from '../../shared/errors.js'

export function quotaExceeded (max: number, what: 'API key' | 'project'): ContentdError {
  return new ContentdError('QUOTA_EXCEEDED', `a user may have at most ${max} ${what}${max === 1 ? '' : 's'}`)
}
