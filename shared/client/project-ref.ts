// "@alice/demo" (or "alice/demo") → its parts, by the server's own rule.
import { formatProjectRef, splitProjectRef } from '../project-ref.js'

export interface ProjectRef {
  owner: string
  slug: string
  /** Canonical form, as change events carry it: "@alice/demo". */
  ref: string
}

export function parseProjectRef (ref: string): ProjectRef {
  const parts = splitProjectRef(ref)
  if (!parts) throw new TypeError(`contentd client: "${ref}" is not a project reference like "@alice/demo"`)
  return { ...parts, ref: formatProjectRef(parts.owner, parts.slug) }
}
