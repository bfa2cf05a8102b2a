// Lists come a page at a time (docs/api.md "Lists, a page at a time"); callers of the SDK get
// the whole list, read page after page until the server gives no next cursor.
import type { Http } from './http.js'

export async function readAllPages<T, K extends string> (http: Http, path: string, field: K): Promise<T[]> {
  const all: T[] = []
  let cursor: string | null = null
  do {
    const url: string = cursor === null ? path : `${path}${path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`
    const page: Record<K, T[]> & { nextCursor?: string | null } = (await http.request<Record<K, T[]> & { nextCursor?: string | null }>('GET', url)).body
    all.push(...page[field])
    cursor = page.nextCursor ?? null
  } while (cursor !== null)
  return all
}
