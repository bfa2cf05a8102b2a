// Search in a document by path or by value: every node whose dot path contains the query,
// and every scalar whose text contains it, case-insensitively, in document order, up to a
// limit. Pure: tested in test/console/search.test.ts.
import type { Json } from '../../shared/client/index.js'

export interface Match {
  path: string
  value: Json
  /** What matched: the path, or the value. */
  on: 'path' | 'value'
}

export interface SearchResult {
  matches: Match[]
  /** More matches exist than the limit. */
  truncated: boolean
}

export function searchDocument (doc: Json, query: string, limit = 100): SearchResult {
  const needle = query.trim().toLowerCase()
  const matches: Match[] = []
  if (needle === '') return { matches, truncated: false }
  let truncated = false
  // An explicit stack, not recursion: a document may nest 64 levels per write, and more
  // through several writes.
  const stack: Array<{ path: string, value: Json }> = [{ path: '', value: doc }]
  while (stack.length > 0) {
    const { path, value } = stack.pop() as { path: string, value: Json }
    if (path !== '') {
      const onPath = path.toLowerCase().includes(needle)
      const onValue = !onPath && (value === null || typeof value !== 'object') && String(value).toLowerCase().includes(needle)
      if (onPath || onValue) {
        if (matches.length === limit) { truncated = true; break }
        matches.push({ path, value, on: onPath ? 'path' : 'value' })
      }
    }
    if (value !== null && typeof value === 'object') {
      const entries: Array<[string, Json]> = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value)
      // Reversed onto the stack, so they come off in document order.
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, Json]
        stack.push({ path: path === '' ? key : `${path}.${key}`, value: child })
      }
    }
  }
  return { matches, truncated }
}
