// The one answer of every store when a quota is full (docs/design.md §13, §13b).
import { ContentdError } from '../../shared/errors.js'

export function quotaExceeded (max: number, what: 'API key' | 'project' | 'webhook'): ContentdError {
  const holder = what === 'webhook' ? 'project' : 'user'
  return new ContentdError('QUOTA_EXCEEDED', `a ${holder} may have at most ${max} ${what}${max === 1 ? '' : 's'}`)
}
