// The key form's narrowing (docs/schema.md#narrowed-keys): `paths` and `ops` of
// POST /api/keys, read from the form, and said back in the key list. Pure:
// test/console/pure.test.ts covers it.
import { NARROWABLE_OPERATIONS, type NarrowableOperation } from '../shared/key-scope.js'
import type { ApiKeyInfo } from '../shared/client/index.js'
import { parsePathList } from './panels/webhook-form.js'

export { NARROWABLE_OPERATIONS }

/** The server's limit on a key's paths (docs/api.md, key `paths`). */
export const MAX_KEY_PATHS = 100

/**
 * The narrowing for POST /api/keys from the form: the paths field ("stats, posts.0") and the
 * checked operations. Empty means not narrowed, so the member is left out, not sent empty.
 */
export function narrowingOf (pathsText: string, ops: readonly NarrowableOperation[]): { paths?: string[], ops?: NarrowableOperation[] } | { problem: string } {
  const parsed = parsePathList(pathsText)
  if (!parsed.ok) return { problem: parsed.message }
  if (parsed.paths.length > MAX_KEY_PATHS) return { problem: `A key takes at most ${MAX_KEY_PATHS} paths.` }
  const paths = [...new Set(parsed.paths)]
  // In the server's order, whatever order they were ticked in.
  const chosen = NARROWABLE_OPERATIONS.filter(op => ops.includes(op))
  return { ...(paths.length > 0 ? { paths } : {}), ...(chosen.length > 0 ? { ops: chosen } : {}) }
}

/** "paths stats, posts · ops increment" for a narrowed key; null for one that is not. */
export function describeNarrowing (key: Pick<ApiKeyInfo, 'paths' | 'ops'>): string | null {
  const parts: string[] = []
  if (key.paths) parts.push(`paths ${key.paths.join(', ')}`)
  if (key.ops) parts.push(`ops ${key.ops.join(', ')}`)
  return parts.length > 0 ? parts.join(' · ') : null
}
